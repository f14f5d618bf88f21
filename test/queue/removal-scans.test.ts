import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scanRequestSchema, type ScanRequest } from '../../src/core/scan.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { bothStores } from '../helpers/both-stores.ts';

const { stores } = bothStores();

/*
 * A movie deleted or its folder renamed away leaves a folder that is gone; Plex drops its items only when a
 * folder above it that exists is scanned, for a movie the library root. plex_autoscan scanned nothing for a
 * delete and only the new folder of a rename (scan.py:381-396 reads only the new folderPath/path; plex.py:63-99
 * gives a path that does not exist up after its file checks). Here the root is scanned, but that scan must never
 * take in, hold back or stand for the imports of the library.
 */
const req = (folder: string, extra: Partial<ScanRequest> = {}) => scanRequestSchema.parse({ folder, source: 'Radarr', event: 'Download', ...extra });
const removal = (folder: string) => req(folder, { event: 'MovieDelete', updateType: 'Deleted', removal: true });
const ROOTS = ['/data/Movies', '/data/TV'];
const timing = { delayMs: 10_000, maxMs: 30_000, roots: ROOTS };
const open = async (s: QueueBackend) => Object.fromEntries((await s.view.listOpen()).map((e) => [`${e.folder}${e.removal ? ' (removal)' : ''}`, { requests: e.requests, dueAt: e.dueAt, status: e.status }]));

for (const [storeName, openStore] of stores) describe(`library root scans for removed items (${storeName})`, () => {
  test('a delete beside two imports: the imports keep their own folders, the root scan takes in none of them', async () => {
    const s = await openStore();
    await s.enqueueMany([req('/data/Movies/Interstellar (2014)')], timing, 0);
    const [root] = await s.enqueueMany([removal('/data/Movies')], timing, 1_000);
    const [later] = await s.enqueueMany([req('/data/Movies/Heat (1995)')], timing, 2_000);
    assert.equal(root!.status, 'queued');
    // An import after the removal does not merge into the root scan either.
    assert.equal(later!.status, 'queued');
    assert.equal(later!.folder, '/data/Movies/Heat (1995)');
    assert.deepEqual(await open(s), {
      '/data/Movies/Interstellar (2014)': { requests: 1, dueAt: 10_000, status: 'pending' },
      '/data/Movies/Heat (1995)': { requests: 1, dueAt: 12_000, status: 'pending' },
      // Due SERVER_SCAN_DELAY_MAX after the first removal.
      '/data/Movies (removal)': { requests: 1, dueAt: 31_000, status: 'pending' },
    });
  });

  test('removals in one window share one root scan, and a later one does not put it off', async () => {
    const s = await openStore();
    await s.enqueueMany([removal('/data/Movies')], timing, 1_000);
    const [second] = await s.enqueueMany([removal('/data/Movies')], timing, 20_000);
    assert.equal(second!.status, 'merged');
    assert.equal(second!.dueAt, 31_000);
    const entry = (await s.view.listOpen())[0]!;
    assert.equal(entry.requests, 2);
    assert.equal(entry.removal, true);
    // With no cap (SERVER_SCAN_DELAY_MAX 0, plex_autoscan's debounce) the window is SERVER_SCAN_DELAY.
    const t = await openStore();
    const [uncapped] = await t.enqueueMany([removal('/data/TV')], { ...timing, maxMs: 0 }, 1_000);
    assert.equal(uncapped!.dueAt, 11_000);
  });

  test('a manual scan of the root and a removal scan of the root are kept apart (neither stands for the other)', async () => {
    const s = await openStore();
    await s.enqueueMany([req('/data/Movies/Heat (1995)')], timing, 0);
    await s.enqueueMany([removal('/data/Movies')], timing, 0);
    const [manual] = await s.enqueueMany([req('/data/Movies', { source: 'Manual', event: 'Manual' })], timing, 1_000);
    assert.equal(manual!.status, 'merged', 'the manual root scan takes in the import, as before');
    assert.deepEqual(Object.keys(await open(s)).sort(), ['/data/Movies', '/data/Movies (removal)']);
  });

  test('a removal inside a library (a series folder above a deleted season) is an ordinary scan', async () => {
    const s = await openStore();
    await s.enqueueMany([req('/data/TV/Dark/Season 01', { source: 'Sonarr' })], timing, 0);
    const [series] = await s.enqueueMany([removal('/data/TV/Dark')], timing, 1_000);
    assert.equal(series!.status, 'merged');
    assert.equal((await s.view.listOpen())[0]!.removal, false);
    // With no library root known (the server could not be asked), a removal is kept apart: it may be a root.
    const [unknown] = await s.enqueueMany([removal('/data/Movies')], { delayMs: 10_000, maxMs: 30_000 }, 2_000);
    assert.equal((await s.view.get(unknown!.id))!.removal, true);
  });

  test('a due root scan waits while imports below it are open, so they go first; two windows at most', async () => {
    const s = await openStore();
    await s.enqueueMany([removal('/data/Movies')], timing, 0);
    await s.enqueueMany([req('/data/Movies/Heat (1995)')], timing, 25_000);
    // 30 s: the root scan is due, the import is not yet: the root scan waits for it.
    assert.equal(await s.activateDue(['plex'], 30_000), 0);
    assert.equal((await open(s))['/data/Movies (removal)']!.dueAt, 36_000);
    // 35 s: the import goes.
    assert.equal(await s.activateDue(['plex'], 35_000), 1);
    const [claimed] = await s.claimDeliveries(1, 35_000, 'plex');
    assert.equal(claimed!.item.folder, '/data/Movies/Heat (1995)');
    // 36 s: the import is still being delivered: the root scan looks again a second later.
    assert.equal(await s.activateDue(['plex'], 36_000), 0);
    assert.equal((await open(s))['/data/Movies (removal)']!.dueAt, 37_000);
    await s.completeDelivery(claimed!.item.id, 'plex', { status: 'done' }, 36_500);
    assert.equal(await s.activateDue(['plex'], 37_000), 1);
    const [root] = await s.claimDeliveries(1, 37_001, 'plex');
    assert.equal(root!.item.folder, '/data/Movies');
    assert.equal(root!.item.removal, true);
    assert.equal(root!.item.updateType, 'Deleted');

    // A stream of imports holds it no longer than two windows after its first removal.
    const t = await openStore();
    await t.enqueueMany([removal('/data/Movies')], timing, 0);
    for (let at = 25_000; at <= 60_000; at += 5_000) {
      await t.enqueueMany([req(`/data/Movies/Film ${at}`)], timing, at);
      await t.activateDue(['plex'], at);
    }
    assert.equal((await t.view.listOpen()).find((e) => e.removal)!.status, 'active');
  });

  test('"Scan now" on the dashboard sends a root scan at once, imports open or not', async () => {
    const s = await openStore();
    const [root] = await s.enqueueMany([removal('/data/Movies')], timing, 0);
    await s.enqueueMany([req('/data/Movies/Heat (1995)')], timing, 1_000);
    assert.equal(await s.retryNow(root!.id, 2_000), true);
    assert.equal(await s.activateDue(['plex'], 2_000), 1);
  });

  test('imports due in the same pass as the root scan are handed out before it', async () => {
    const s = await openStore();
    await s.enqueueMany([removal('/data/Movies')], timing, 0);
    await s.enqueueMany([req('/data/Movies/Up (2009)')], timing, 1_000);
    // The relay was down past both due times and past the hold: both go, the import first.
    assert.equal(await s.activateDue(['plex'], 100_000), 2);
    assert.deepEqual((await s.claimDeliveries(5, 100_001, 'plex')).map((c) => c.item.folder), ['/data/Movies/Up (2009)', '/data/Movies']);
  });
});
