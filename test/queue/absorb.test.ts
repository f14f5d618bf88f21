import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scanRequestSchema, type ScanItem, type ScanRequest, type Target, type DeliveryResult } from '../../src/core/scan.ts';
import { runQueueOn } from '../helpers/plex-target.ts';
import { waitFor } from '../helpers/relay.ts';
import { bothStores } from '../helpers/both-stores.ts';

const { stores } = bothStores();

const req = (folder: string, extra: Partial<ScanRequest> = {}) => scanRequestSchema.parse({ folder, source: 'Manual', ...extra });
const ROOTS = ['/data/Movies', '/data/TV', '/data/TV/Anime'];

for (const [storeName, openStore] of stores) describe(`absorption and library roots (${storeName})`, () => {
  test('a folder above a library root never absorbs the pending scans below the root', async () => {
    const s = await openStore();
    const timing = { delayMs: 60_000, maxMs: 0, roots: ROOTS };
    await s.enqueueMany([req('/data/TV/Dark/Season 01'), req('/data/Movies/Heat')], timing, 1000);
    const [above] = await s.enqueueMany([req('/data')], timing, 2000);
    assert.equal(above!.status, 'queued');
    assert.equal(await s.countOpen(), 3);
    // Nor does a request inside a library merge into a pending folder above its root.
    const [inside] = await s.enqueueMany([req('/data/Movies/Up')], timing, 3000);
    assert.equal(inside!.status, 'queued');
    assert.equal(inside!.folder, '/data/Movies/Up');
    // Nested libraries are roots too: a TV scan does not take in the Anime library's scans.
    await s.enqueueMany([req('/data/TV/Anime/Show')], timing, 3000);
    const [tv] = await s.enqueueMany([req('/data/TV')], timing, 4000);
    assert.deepEqual((await s.view.listOpen()).map((e) => e.folder).sort(), ['/data', '/data/Movies/Heat', '/data/Movies/Up', '/data/TV', '/data/TV/Anime/Show']);
    assert.equal((await s.view.get(tv!.id))!.requests, 2, 'Dark/Season 01 is inside the TV root and merged');
  });

  test('no request is lost: when a scan that absorbed others fails for good, the absorbed scans are delivered on their own', async () => {
    const seen: string[] = [];
    const target: Target = {
      name: 'plex',
      async deliver(item: ScanItem): Promise<DeliveryResult> {
        seen.push(item.folder);
        if (item.folder === '/') return { outcome: 'failed', error: '"/" is in no Plex section' };
        return { outcome: 'done' };
      },
      available: async () => ({ ok: true }),
    };
    // Library roots unknown (the server was down): "/" is accepted and takes in the pending scans below it. All are
    // due at once: a merged scan waits for the latest of its requests' due times (queue/coalesce.ts mergedDueAt).
    // The queue starts only once they are in, so nothing is delivered before "/" takes them in, however busy the machine.
    const store = await openStore();
    const now = { delayMs: 0, maxMs: 0 };
    await store.enqueueMany([req('/data/TV/Dark/Season 01', { files: ['/data/TV/Dark/Season 01/e1.mkv'] }), req('/data/Movies/Heat', { event: 'Upgrade' })], now);
    const [root] = await store.enqueueMany([req('/')], now);
    assert.equal(root!.status, 'merged');
    assert.equal(await store.countOpen(), 1);
    const q = await runQueueOn(store, [target]);
    try {
      q.scheduler.poke();
      await waitFor(() => seen.length >= 3, 10_000, 'the absorbed scans delivered after "/" failed');
      assert.deepEqual(seen.slice(1).sort(), ['/data/Movies/Heat', '/data/TV/Dark/Season 01']);
      await waitFor(async () => await q.store.countOpen() === 0, 10_000, 'queue drained');
      const heat = (await q.store.view.listHistory()).find((e) => e.folder === '/data/Movies/Heat')!;
      assert.equal(heat.status, 'done');
      assert.equal(heat.upgrade, true, 'what the absorbed request was is kept');
      const dark = (await q.store.view.listHistory()).find((e) => e.folder === '/data/TV/Dark/Season 01')!;
      assert.deepEqual(dark.files, ['/data/TV/Dark/Season 01/e1.mkv']);
      assert.equal((await q.store.view.get(root!.id))!.status, 'failed');
    } finally {
      await q.close();
    }
  });

  test('a request merged into a pending folder above it is delivered on its own when that scan fails', async () => {
    const seen: string[] = [];
    const target: Target = {
      name: 'plex',
      async deliver(item) {
        seen.push(item.folder);
        return item.folder === '/data' ? { outcome: 'failed', error: 'no section' } : { outcome: 'done' };
      },
      available: async () => ({ ok: true }),
    };
    const q = await runQueueOn(await openStore(), [target]);
    try {
      const later = { delayMs: 60_000, maxMs: 0 };
      const [top] = await q.store.enqueueMany([req('/data')], later);
      const [below] = await q.store.enqueueMany([req('/data/TV/Show')], later);
      assert.equal(below!.id, top!.id, 'merged into the pending folder above');
      await q.store.retryNow(top!.id);
      q.scheduler.poke();
      await waitFor(() => seen.includes('/data/TV/Show'), 10_000, 'the merged request delivered on its own');
    } finally {
      await q.close();
    }
  });
});
