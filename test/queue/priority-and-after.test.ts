import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DeliveryResult, ScanItem, Target } from '../../src/core/scan.ts';
import { resolveIntent } from '../../src/intake/resolve.ts';
import { runQueueOn, testConfig } from '../helpers/plex-target.ts';
import { waitFor } from '../helpers/relay.ts';
import { bothStores } from '../helpers/both-stores.ts';

const { stores } = bothStores();

/** A target that records the order it is asked to deliver in and answers with `answer`. */
function recordingTarget(name: string, answer: (item: ScanItem) => DeliveryResult | Promise<DeliveryResult> = () => ({ outcome: 'done' })): Target & { seen: string[] } {
  const seen: string[] = [];
  return {
    name,
    seen,
    async deliver(item) {
      seen.push(item.folder);
      return answer(item);
    },
    available: async () => ({ ok: true }),
  };
}

for (const [storeName, openStore] of stores) describe(`SERVER_SCAN_PRIORITIES (${storeName})`, () => {
  const config = testConfig({
    SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'], '/data/Movies/': ['/movies/'], '/data/Music/': ['/music/'] },
    SERVER_SCAN_PRIORITIES: { '1': ['/tv/'], '3': ['/MUSIC/', '/tv/'] },
  });
  const priorityOf = (path: string) => {
    const [out] = resolveIntent({ kind: 'scan', source: 'Manual', event: 'Manual', updateType: 'Modified', paths: [{ path, kind: 'file' }] }, config, () => 'missing');
    return out && 'request' in out ? out.request.priority : undefined;
  };

  test('the first case-insensitive substring match of the scanned folder gives the priority; no match is 0', async () => {
    assert.equal(priorityOf('/tv/Dark/Season 01/e1.mkv'), 1);
    assert.equal(priorityOf('/music/Band/Album/t.flac'), 3);
    assert.equal(priorityOf('/movies/Heat (1995)/Heat.mkv'), 0);
  });

  // plex_autoscan waits on a PriorityQueue, smallest number first (threads.py:11-40), and a path that matches no
  // entry gets 0 (utils.py:168-178), so unmatched paths go before every path listed with a positive number.
  test('lower numbers are delivered first when several items are due; unmatched (0) before listed positive numbers', async () => {
    const target = recordingTarget('plex');
    const q = await runQueueOn(await openStore(), [target], { concurrency: 1 });
    try {
      // Enqueued in one go so all are due before the first tick.
      await q.store.enqueueMany(
        [
          { folder: '/data/Movies/A', files: [], source: 'Manual', event: 'Manual', updateType: 'Modified', priority: 0 },
          { folder: '/data/Music/B', files: [], source: 'Manual', event: 'Manual', updateType: 'Modified', priority: 3 },
          { folder: '/data/TV/C', files: [], source: 'Manual', event: 'Manual', updateType: 'Modified', priority: 1 },
        ],
        { delayMs: 0, maxMs: 0 },
      );
      q.scheduler.poke();
      await waitFor(() => target.seen.length === 3, 10_000, 'three deliveries');
      assert.deepEqual(target.seen, ['/data/Movies/A', '/data/TV/C', '/data/Music/B']);
    } finally {
      await q.close();
    }
  });
});

for (const [storeName, openStore] of stores) describe(`after-delivery steps (scheduler hook) (${storeName})`, () => {
  test('run after the delivery is recorded, never hold back other deliveries, and their outcome replaces the detail', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const target = recordingTarget('plex', (item) =>
      item.folder === '/data/A'
        ? { outcome: 'done', detail: 'sent, completion unknown', after: async () => (await gate, 'completed') }
        : { outcome: 'done', detail: 'plain' },
    );
    const q = await runQueueOn(await openStore(), [target], { concurrency: 1 });
    try {
      const a = await q.enqueue('/data/A');
      await waitFor(async () => (await q.store.view.get(a))!.status === 'done', 10_000, 'A recorded');
      assert.equal((await q.store.view.get(a))!.deliveries[0]!.detail, 'sent, completion unknown');
      const b = await q.enqueue('/data/B');
      await waitFor(async () => (await q.store.view.get(b))!.status === 'done', 10_000, 'B delivered while A waits');
      release();
      await q.scheduler.afterStepsSettled();
      assert.equal((await q.store.view.get(a))!.deliveries[0]!.detail, 'completed');
    } finally {
      await q.close();
    }
  });

  test('safety: stopping scanrelay aborts running after-steps and records that they did not end', async () => {
    const target = recordingTarget('plex', () => ({
      outcome: 'done',
      detail: 'sent',
      after: (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    }));
    const q = await runQueueOn(await openStore(), [target]);
    const a = await q.enqueue('/data/A');
    await waitFor(async () => (await q.store.view.get(a))!.status === 'done', 10_000, 'recorded');
    await q.scheduler.stop();
    assert.equal((await q.store.view.get(a))!.deliveries[0]!.detail, 'sent; scanrelay stopped before the after-scan steps ended');
  });
});

for (const [storeName, openStore] of stores) describe(`one delivery at a time for a serial target (Plex) (${storeName})`, () => {
  test('Plex gets one scan at a time, its after-steps included; Jellyfin keeps its own delivery meanwhile', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let inPlex = 0;
    let maxInPlex = 0;
    const plex: Target & { seen: string[]; serial: true } = {
      name: 'plex',
      serial: true,
      seen: [],
      async deliver(item) {
        plex.seen.push(item.folder);
        inPlex++;
        maxInPlex = Math.max(maxInPlex, inPlex);
        return { outcome: 'done', after: async () => { await gate; inPlex--; return 'completed'; } };
      },
      available: async () => ({ ok: true }),
    };
    const jellyfin = recordingTarget('jellyfin');
    const q = await runQueueOn(await openStore(), [plex, jellyfin], { concurrency: 8 });
    try {
      const base = { files: [] as string[], source: 'Manual' as const, event: 'Manual', updateType: 'Modified' as const, priority: 0 };
      await q.store.enqueueMany(['/data/A', '/data/B', '/data/C'].map((folder) => ({ ...base, folder })), { delayMs: 0, maxMs: 0 });
      q.scheduler.poke();
      await waitFor(() => jellyfin.seen.length === 3, 10_000, 'Jellyfin got all three while Plex is busy');
      assert.deepEqual(plex.seen, ['/data/A'], 'Plex holds the next scan until the first one has ended');
      release();
      await waitFor(() => plex.seen.length === 3, 10_000, 'Plex got the rest, in order');
      assert.deepEqual(plex.seen, ['/data/A', '/data/B', '/data/C']);
      assert.equal(maxInPlex, 1);
    } finally {
      await q.close();
    }
  });
});
