import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { backoffMs, descendantRange, dueAt } from '../../src/queue/coalesce.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { scanRequestSchema, type ScanRequest } from '../../src/core/scan.ts';
import { tempDir } from '../helpers/relay.ts';
import { bothStores } from '../helpers/both-stores.ts';

const { stores } = bothStores();

const timing = { delayMs: 10_000, maxMs: 30_000 };
const req = (folder: string, extra: Partial<ScanRequest> = {}) => scanRequestSchema.parse({ folder, source: 'Manual', ...extra });

describe('coalescing rules (pure)', () => {
  test('debounce: due delay after the last request, capped at max after the first', () => {
    assert.equal(dueAt(0, 5_000, 10_000, 30_000), 15_000);
    assert.equal(dueAt(0, 25_000, 10_000, 30_000), 30_000);
    assert.equal(dueAt(0, 25_000, 10_000, 0), 35_000);
  });
  test('descendant range covers folders strictly below', () => {
    const [lo, hi] = descendantRange('/data/TV');
    assert.ok('/data/TV/Dark' >= lo && '/data/TV/Dark' < hi);
    assert.ok(!('/data/TV2' >= lo && '/data/TV2' < hi));
    assert.ok(!('/data/TV' >= lo && '/data/TV' < hi));
  });
  test('backoff doubles up to the cap', () => {
    assert.deepEqual([1, 2, 3, 10].map((a) => backoffMs(a, 1000, 5000)), [1000, 2000, 4000, 5000]);
  });
});

for (const [storeName, openStore] of stores) describe(`the queue store (${storeName})`, () => {
  test('requests for one folder while it is pending become one scan', async () => {
    const s = await openStore();
    const results = await s.enqueueMany([req('/data/TV/Dark'), req('/data/TV/Dark'), req('/data/TV/Dark', { files: ['/data/TV/Dark/e1.mkv'] })], timing, 1000);
    assert.deepEqual(results.map((r) => r.status), ['queued', 'merged', 'merged']);
    assert.equal(await s.countOpen(), 1);
    const entry = (await s.view.get(results[0]!.id))!;
    assert.equal(entry.requests, 3);
    assert.deepEqual(entry.files, ['/data/TV/Dark/e1.mkv']);
  });

  test('a pending ancestor absorbs its descendants, and a new ancestor takes over pending descendants', async () => {
    const s = await openStore();
    await s.enqueueMany([req('/data/TV/Dark/Season 01'), req('/data/TV/Dark/Season 02', { priority: 3 })], timing, 1000);
    assert.equal(await s.countOpen(), 2);
    const [r] = await s.enqueueMany([req('/data/TV/Dark')], timing, 2000);
    assert.equal(r!.status, 'merged');
    assert.equal(await s.countOpen(), 1);
    const entry = (await s.view.get(r!.id))!;
    assert.equal(entry.folder, '/data/TV/Dark');
    assert.equal(entry.requests, 3);
    assert.equal(entry.priority, 0, 'the most urgent (lowest) priority of the merged requests wins');
    assert.equal(entry.firstAt, 1000, 'the earliest request keeps counting towards the cap');
    const [below] = await s.enqueueMany([req('/data/TV/Dark/Season 03')], timing, 3000);
    assert.equal(below!.status, 'merged');
    assert.equal(below!.folder, '/data/TV/Dark');
    const [sibling] = await s.enqueueMany([req('/data/TV/Darkness')], timing, 3000);
    assert.equal(sibling!.status, 'queued');
  });

  test('a folder that keeps getting requests is still due by the cap', async () => {
    const s = await openStore();
    let last;
    for (let t = 0; t <= 60_000; t += 5_000) last = (await s.enqueueMany([req('/data/Movies/A')], timing, t))[0];
    assert.equal(last!.dueAt, 30_000);
  });

  test('due scans become one delivery per target, retried and completed per target', async () => {
    const s = await openStore();
    const [r] = await s.enqueueMany([req('/data/Movies/A')], { delayMs: 0, maxMs: 0 }, 1000);
    assert.equal(await s.activateDue(['plex', 'jellyfin'], 1000), 1);
    const claimed = await s.claimDeliveries(10, 1000);
    assert.deepEqual(claimed.map((c) => c.target).sort(), ['jellyfin', 'plex']);
    assert.equal(claimed[0]!.item.attempt, 1);
    assert.equal((await s.completeDelivery(r!.id, 'plex', { status: 'done' })).scanFinished, undefined);
    await s.retryDelivery(r!.id, 'jellyfin', 'down', 5000);
    assert.equal(await s.nextWakeAt(), 5000);
    assert.equal((await s.claimDeliveries(10, 4000)).length, 0);
    const again = await s.claimDeliveries(10, 5000);
    assert.equal(again.length, 1);
    assert.equal(again[0]!.item.attempt, 2);
    assert.equal((await s.completeDelivery(r!.id, 'jellyfin', { status: 'done' })).scanFinished, 'done');
    assert.equal((await s.view.listHistory())[0]!.status, 'done');
  });

  test('a new request for a folder being delivered starts a new scan', async () => {
    const s = await openStore();
    await s.enqueueMany([req('/data/Movies/A')], { delayMs: 0, maxMs: 0 }, 1000);
    await s.activateDue(['plex'], 1000);
    const [r] = await s.enqueueMany([req('/data/Movies/A')], timing, 1001);
    assert.equal(r!.status, 'queued');
    assert.equal(await s.countOpen(), 2);
  });

  test('history is bounded', async () => {
    const s = await openStore();
    for (let i = 0; i < 20; i++) {
      const [r] = await s.enqueueMany([req(`/data/Movies/M${i}`)], { delayMs: 0, maxMs: 0 }, 1000);
      await s.activateDue(['plex'], 1000);
      await s.claimDeliveries(5, 1000);
      await s.completeDelivery(r!.id, 'plex', { status: 'done' });
    }
    assert.equal(await s.pruneHistory(5), 15);
    assert.equal((await s.view.listHistory({ limit: 100 })).length, 5);
  });
});

describe('QueueStore (SQLite file)', () => {
  test('deliveries in flight at a crash are sent again after restart', () => {
    const file = join(tempDir(), 'queue.db');
    const a = new QueueStore(file);
    a.enqueueMany([req('/data/Movies/A')], { delayMs: 0, maxMs: 0 }, 1000);
    a.activateDue(['plex'], 1000);
    assert.equal(a.claimDeliveries(5, 1000).length, 1);
    a.db.close();
    const b = new QueueStore(file);
    assert.equal(b.recoverInFlight(), 1);
    assert.equal(b.claimDeliveries(5, 1000).length, 1);
  });

  test('meta values persist', () => {
    const file = join(tempDir(), 'queue.db');
    const a = new QueueStore(file);
    a.meta.set('drive.pageToken', '123');
    a.close();
    assert.equal(new QueueStore(file).meta.get('drive.pageToken'), '123');
  });
});
