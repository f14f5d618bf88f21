import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { Scheduler } from '../../src/queue/scheduler.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { tdarrTargetSchema } from '../../src/targets/tdarr/schema.ts';
import { scanRequestSchema } from '../../src/core/scan.ts';
import { mediaBrowserTarget } from '../../src/targets/media-browser/target.ts';
import { createTdarrTarget } from '../../src/targets/tdarr/target.ts';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakeTdarr } from '../fakes/tdarr.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { waitFor } from '../helpers/relay.ts';

// A backlog for a target whose API takes a list of paths goes in shared requests: Tdarr's scan-files takes a
// list for scanFolderWatcher (autopulse sends all its events' paths in one, tdarr.rs:58-81, as its runner hands
// each target its pending events at once, runner.rs:248-292); Jellyfin's POST /Library/Media/Updated takes
// `Updates`, a list (Jellyfin's API docs; autopulse's emby.rs:326-338 sends its events' paths in one). Each scan is still its own delivery:
// its row, its retries and its history. Fewer scans than free slots go one request each, side by side, as before.

const silent = pino({ level: 'silent' });

let cluster: PgCluster | undefined;
after(() => cluster?.destroy());

async function setup(concurrency: number, open: () => Promise<QueueBackend> = async () => new QueueStore(':memory:')) {
  const tdarr = await new FakeTdarr().start();
  tdarr.libraries.lib = '/data'; // the library's folder: the scans below are in it
  const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
  const store = await open();
  const targets = [createTdarrTarget('tdarr', tdarrTargetSchema.parse({ TYPE: 'tdarr', URL: tdarr.url, DB_ID: 'lib' }), silent), mediaBrowserTarget('jellyfin', jellyfin.url, 'jf-key', silent, undefined, 'jf')];
  const scheduler = new Scheduler(store, targets, silent, { concurrency, retryBaseMs: 50, retryMaxMs: 200 });
  await scheduler.start();
  const view = { get: async (id: number) => (await store.view.get(id))! };
  const q = { store: { view }, scheduler };
  /** Queues the folders in one commit, due at once, as a backlog is. */
  const backlog = async (folders: Array<[string, string[]]>) => {
    const ids = (await store.enqueueMany(folders.map(([folder, files]) => scanRequestSchema.parse({ folder, files, source: 'Manual' })), { delayMs: 0, maxMs: 0 })).map((r) => r.id);
    scheduler.poke();
    return ids;
  };
  const settled = (ids: number[]) => waitFor(async () => (await Promise.all(ids.map(view.get))).every((e) => e.status === 'done') || undefined, 20_000, 'every scan delivered to both');
  const tdarrPaths = () => tdarr.scans.flatMap((s) => (Array.isArray(s.arrayOrPath) ? s.arrayOrPath : [s.arrayOrPath])).sort();
  const jellyfinRequests = () => jellyfin.calls.filter((c) => c.path === '/Library/Media/Updated' && c.status < 300).length;
  return {
    tdarr, jellyfin, q, backlog, settled, tdarrPaths, jellyfinRequests,
    close: async () => {
      await scheduler.stop();
      await store.close();
      await Promise.all([tdarr.stop(), jellyfin.stop()]);
    },
  };
}

const movie = (n: number): [string, string[]] => [`/data/Movies/M${n}`, [`/data/Movies/M${n}/m${n}.mkv`]];

test('a backlog beyond the free slots goes in shared requests; each scan reaches each target once and is recorded on its own', async () => {
  const t = await setup(2);
  try {
    const folders = [...Array.from({ length: 11 }, (_, i) => movie(i)), ['/data/TV/Dark/Season 1', []] as [string, string[]]];
    const ids = await t.backlog(folders);
    await t.settled(ids);
    // Tdarr: the twelve scans in one scanFolderWatcher list; the folder, not on this disk, goes as itself.
    assert.deepEqual(t.tdarr.scans.map((s) => [s.mode, Array.isArray(s.arrayOrPath) ? s.arrayOrPath.length : s.arrayOrPath]), [['scanFolderWatcher', 12]]);
    assert.deepEqual(t.tdarrPaths(), [...folders.slice(0, 11).map(([, f]) => f[0]!), '/data/TV/Dark/Season 1'].sort());
    // Jellyfin: every path once, each with its scan's update type, in one request.
    assert.deepEqual(t.jellyfin.updates.map((u) => u.path).sort(), [...folders.slice(0, 11).map(([, f]) => f[0]!), '/data/TV/Dark/Season 1'].sort());
    assert.equal(t.jellyfinRequests(), 1);
    // Each scan's own history: both deliveries done, with what each target was asked for that scan.
    const dark = (await t.q.store.view.get(ids[11]!));
    assert.deepEqual(dark.deliveries.map((d) => [d.target, d.status, d.detail]), [
      ['jf', 'done', '1 path(s) reported as Modified'],
      ['tdarr', 'done', 'scanFolderWatcher of the folder (no file in it could be listed here) in library lib'],
    ]);
    assert.deepEqual((await t.q.store.view.get(ids[0]!)).deliveries.map((d) => [d.target, d.attempts, d.detail]), [
      ['jf', 1, '1 path(s) reported as Modified'],
      ['tdarr', 1, 'scanFolderWatcher of 1 file(s) in library lib'],
    ]);
  } finally {
    await t.close();
  }
});

test('as many scans as free slots, or fewer: one request each, as before', async () => {
  // Eight slots: three for Tdarr's scans, three for Jellyfin's.
  const t = await setup(8);
  try {
    const ids = await t.backlog([movie(1), movie(2), movie(3)]);
    await t.settled(ids);
    assert.deepEqual(t.tdarr.scans.map((s) => s.arrayOrPath).sort(), [['/data/Movies/M1/m1.mkv'], ['/data/Movies/M2/m2.mkv'], ['/data/Movies/M3/m3.mkv']]);
    assert.equal(t.jellyfinRequests(), 3);
  } finally {
    await t.close();
  }
});

test('a shared request the server refuses is retried for every scan in it, and each reaches it once when it is back', async () => {
  const t = await setup(1);
  try {
    await t.tdarr.setMode('error503');
    const folders = Array.from({ length: 6 }, (_, i) => movie(i));
    const ids = await t.backlog(folders);
    await waitFor(() => t.tdarr.callsTo('POST', '/api/v2/scan-files').filter((c) => c.status === 503).length >= 2 || undefined, 20_000, 'Tdarr refused twice');
    // Jellyfin is not held back by Tdarr: its deliveries are done meanwhile.
    await waitFor(async () => (await Promise.all(ids.map(t.q.store.view.get))).every((e) => e.deliveries.find((d) => d.target === 'jf')!.status === 'done') || undefined, 20_000, 'Jellyfin done');
    for (const id of ids) {
      const d = (await t.q.store.view.get(id)).deliveries.find((x) => x.target === 'tdarr')!;
      assert.ok(d.attempts >= 1 && d.status !== 'done', `scan ${id} waits to retry on Tdarr`);
    }
    await t.tdarr.setMode('up');
    await t.settled(ids);
    assert.deepEqual(t.tdarrPaths(), folders.map(([, f]) => f[0]!).sort(), 'each path once');
  } finally {
    await t.close();
  }
});

// The same backlog on a shared queue (PostgreSQL): its claims and outcomes are its own (one commit each, off the
// event loop), the requests are shared alike.
describe('on PostgreSQL', () => {
  before(async () => {
    cluster = await startPgCluster();
  });
  test('a backlog beyond the free slots goes in shared requests; each scan reaches each target once', async () => {
    const t = await setup(2, async () => PgQueueStore.open({ url: await cluster!.createDatabase(), relayId: 'relay-a' }));
    try {
      const folders = Array.from({ length: 12 }, (_, i) => movie(i));
      const ids = await t.backlog(folders);
      await t.settled(ids);
      const paths = folders.map(([, f]) => f[0]!).sort();
      assert.deepEqual(t.tdarrPaths(), paths);
      assert.deepEqual(t.jellyfin.updates.map((u) => u.path).sort(), paths);
      assert.ok(t.tdarr.scans.length < 12 && t.jellyfinRequests() < 12, `shared requests: Tdarr ${t.tdarr.scans.length}, Jellyfin ${t.jellyfinRequests()}`);
      for (const id of ids) assert.deepEqual((await t.q.store.view.get(id)).deliveries.map((d) => d.status), ['done', 'done']);
    } finally {
      await t.close();
    }
  });
});
