import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scanRequestSchema, type ScanRequest } from '../../src/core/scan.ts';
import { MAX_FILES_PER_SCAN } from '../../src/queue/types.ts';
import { LIST_FILES } from '../../src/queue/view.ts';
import { bothStores } from '../helpers/both-stores.ts';

const { stores } = bothStores();

const timing = { delayMs: 10_000, maxMs: 30_000 };
const req = (folder: string, extra: Partial<ScanRequest> = {}) => scanRequestSchema.parse({ folder, source: 'Sonarr', ...extra });
const files = (folder: string, from: number, n: number) => Array.from({ length: n }, (_, i) => `${folder}/e${String(from + i).padStart(7, '0')}.mkv`);

// The store's rule, in behaviour any store must show: a bounded sample of files per scan, and a count of all.
for (const [storeName, openStore] of stores) describe(`a scan keeps a bounded sample of its files and counts them all (issue 35, item 11) (${storeName})`, () => {
  test('50 requests of 2,000 files each for one folder: one scan, 1,000 files kept, 100,000 counted', async () => {
    const s = await openStore();
    const folder = '/data/TV/Big Show/Season 01';
    for (let i = 0; i < 50; i++) await s.enqueueMany([req(folder, { files: files(folder, i * 2000, 2000) })], timing, 1000 + i);
    assert.equal(await s.countOpen(), 1);
    const [listed] = await s.view.listOpen();
    assert.equal(listed!.fileCount, 100_000);
    assert.equal(listed!.files.length, LIST_FILES, 'a list shows a few files');
    const one = (await s.view.get(listed!.id))!;
    assert.equal(one.files.length, MAX_FILES_PER_SCAN);
    assert.equal(one.fileCount, 100_000);
    // What a target is handed: the sample, and how many more there were.
    await s.activateDue(['plex'], 1_000_000);
    const item = (await s.claimDeliveries(1, 1_000_000, 'plex'))[0]!.item;
    assert.equal(item.files.length, MAX_FILES_PER_SCAN);
    assert.equal(item.moreFiles, 100_000 - MAX_FILES_PER_SCAN);
  });

  test('a file sent twice is kept and counted once while the sample has room', async () => {
    const s = await openStore();
    const folder = '/data/Movies/Heat (1995)';
    await s.enqueueMany([req(folder, { files: [`${folder}/Heat.mkv`] }), req(folder, { files: [`${folder}/Heat.mkv`, `${folder}/Heat.srt`] })], timing, 1000);
    await s.enqueueMany([req(folder, { files: [`${folder}/Heat.mkv`] })], timing, 2000);
    const [entry] = await s.view.listOpen();
    assert.deepEqual(entry!.files, [`${folder}/Heat.mkv`, `${folder}/Heat.srt`]);
    assert.equal(entry!.fileCount, 2);
  });

  test('a parent folder that absorbs pending scans below it keeps their counts', async () => {
    const s = await openStore();
    const a = '/data/TV/Show/Season 01';
    const b = '/data/TV/Show/Season 02';
    await s.enqueueMany([req(a, { files: files(a, 0, 800) })], timing, 1000);
    await s.enqueueMany([req(b, { files: files(b, 0, 900) })], timing, 1000);
    await s.enqueueMany([req('/data/TV/Show', { files: ['/data/TV/Show/poster.jpg'] })], timing, 2000);
    assert.equal(await s.countOpen(), 1);
    const entry = (await s.view.get((await s.view.listOpen())[0]!.id))!;
    assert.equal(entry.folder, '/data/TV/Show');
    assert.equal(entry.fileCount, 1701);
    assert.equal(entry.files.length, MAX_FILES_PER_SCAN);
  });
});
