// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { scanRequestSchema } from '../../src/core/scan.ts';
import type { Completion } from '../../src/queue/backend.ts';
import { CompletionBatch } from '../../src/queue/complete-batch.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { tempDir } from '../helpers/relay.ts';

// Issue 39's bench: every SQLite commit is an fsync that blocks the one event loop, and the targets beside Plex
// made one per delivery, which Plex's turn then waited for. Their outcomes now share commits (as the intake's
// requests do, group-commit.test.ts); Plex's outcome commits at once and takes them along. Each outcome is still
// recorded exactly as alone: its delivery's status, its scan's end, its event in the outbox.

const TIMING = { delayMs: 0, maxMs: 0 };

/** A real queue file with `folders` due scans, each with a delivery per target, and its group commits recorded. */
function queue(folders: string[], targets: string[]) {
  const store = new QueueStore(join(tempDir(), 'queue.db'));
  store.enqueueMany(folders.map((folder) => scanRequestSchema.parse({ folder, source: 'Manual' })), TIMING, 1000);
  store.activateDue(targets, 2000);
  for (const t of targets) store.claimDeliveries(100, 2000, t);
  const commits: number[][] = [];
  const failOn = new Set<number>();
  const batch = new CompletionBatch((list) => {
    commits.push(list.map((c) => c.scanId));
    if (list.some((c) => failOn.has(c.scanId))) throw Object.assign(new Error('CHECK constraint failed'), { code: 'SQLITE_CONSTRAINT_CHECK' });
    return store.completeDeliveries(list);
  });
  const ids = store.view.listOpen().map((e) => e.id).sort((a, b) => a - b);
  return { store, batch, commits, failOn, ids };
}

const done = (scanId: number, target: string): Completion => ({ scanId, target, result: { status: 'done', detail: `${target} took it` } });

test('outcomes that end in one turn share one commit; each caller gets its own answer once it is written', async () => {
  const { store, batch, commits, ids } = queue(['/data/Movies/A', '/data/Movies/B'], ['jf', 'tdarr']);
  const [a, b] = ids as [number, number];
  try {
    const answers = Promise.all([batch.add(done(a, 'jf')), batch.add(done(b, 'jf')), batch.add(done(a, 'tdarr'))]);
    assert.deepEqual(commits, [], 'nothing is written before the turn ends');
    const [aJf, bJf, aTdarr] = await answers;
    assert.deepEqual(commits, [[a, b, a]], 'one commit for the three outcomes');
    // Scan A's last delivery ended in the same commit as its first: it is finished, B still waits for Tdarr.
    assert.deepEqual([aJf!.scanFinished, bJf!.scanFinished, aTdarr!.scanFinished], [undefined, undefined, 'done']);
    assert.deepEqual(store.view.get(a)!.deliveries.map((d) => [d.target, d.status, d.detail]), [['jf', 'done', 'jf took it'], ['tdarr', 'done', 'tdarr took it']]);
    assert.equal(store.view.get(a)!.status, 'done');
    assert.deepEqual(store.view.get(b)!.deliveries.map((d) => [d.target, d.status]), [['jf', 'done'], ['tdarr', 'sending']]);
  } finally {
    store.close();
  }
});

test("an urgent outcome (Plex's, whose turn waits on it) is written at once and takes the waiting ones with it", async () => {
  const { store, batch, commits, ids } = queue(['/data/Movies/A', '/data/Movies/B'], ['plex', 'jf']);
  const [a, b] = ids as [number, number];
  try {
    const others = [batch.add(done(a, 'jf')), batch.add(done(b, 'jf'))];
    const plex = batch.add(done(a, 'plex'), true);
    // Written before this turn yields: the Plex delivery's turn is not held up for the next turn of the loop.
    assert.deepEqual(commits, [[a, b, a]]);
    assert.equal(store.view.get(a)!.status, 'done');
    assert.deepEqual((await plex).scanFinished, 'done');
    assert.deepEqual((await Promise.all(others)).map((r) => r.scanFinished), [undefined, undefined]);
    await new Promise((r) => setImmediate(r));
    assert.equal(commits.length, 1, 'the turn-end flush finds nothing left to write');
  } finally {
    store.close();
  }
});

test('a group the store refuses is written one outcome at a time: only the refused one fails, the others are recorded', async () => {
  const { store, batch, commits, failOn, ids } = queue(['/data/Movies/A', '/data/Movies/B', '/data/Movies/C'], ['jf']);
  const [a, b, c] = ids as [number, number, number];
  failOn.add(b);
  try {
    const answers = await Promise.allSettled([batch.add(done(a, 'jf')), batch.add(done(b, 'jf')), batch.add(done(c, 'jf'))]);
    assert.deepEqual(commits, [[a, b, c], [a], [b], [c]]);
    assert.deepEqual(answers.map((x) => x.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.match(((answers[1] as PromiseRejectedResult).reason as Error).message, /constraint/);
    assert.deepEqual([a, b, c].map((id) => store.view.get(id)!.status), ['done', 'active', 'done']);
    // The refused one is untouched: still sending as claimed, so a restart sends it again (recoverInFlight).
    assert.equal(store.view.get(b)!.deliveries[0]!.status, 'sending');
  } finally {
    store.close();
  }
});

test('outcomes in one commit keep their events: each is in the outbox once, in the order the deliveries ended', async () => {
  const { store, ids } = queue(['/data/Movies/A', '/data/Movies/B'], ['jf']);
  const [a, b] = ids as [number, number];
  try {
    const event = (scan: number, kind: 'scanned' | 'failed') => ({ kind, at: 3000, target: 'jf', scan, folder: `/data/Movies/${scan}` });
    store.completeDeliveries([
      { scanId: b, target: 'jf', result: { status: 'done', event: event(b, 'scanned') } },
      { scanId: a, target: 'jf', result: { status: 'failed', error: 'refused', event: event(a, 'failed') } },
    ]);
    assert.deepEqual([store.view.get(a)!.status, store.view.get(b)!.status], ['failed', 'done']);
    assert.deepEqual((await store.outbox.after(0, 10)).map((e) => [e.kind, e.scan]), [['scanned', b], ['failed', a]]);
  } finally {
    store.close();
  }
});
