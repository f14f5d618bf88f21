import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scanRequestSchema, type ScanRequest } from '../../src/core/scan.ts';
import { bothStores } from '../helpers/both-stores.ts';

// A scan merged from several requests is never due before any of them. autopulse keeps, for one path, the later
// can_process of two requests (crates/database/src/conn.rs:311-318, upsert_pending_sqlite: max(existing, new));
// each trigger's timer.wait sets that request's can_process (crates/server/src/routes/triggers.rs:88-92).
// scanrelay scans the folder, so the folder's scan waits for the latest of its requests' own due times.
// Imported from autopulse, a Readarr trigger with `timer: {wait: 10}` and a manual one with `timer: {wait: 1}` give
// requests with DELAY 10 and DELAY 1 (peers/autopulse/import.ts), and SERVER_SCAN_DELAY_MAX 10 (the longest wait).

const timing = { delayMs: 1_000, maxMs: 10_000 };
const req = (folder: string, extra: Partial<ScanRequest>) => scanRequestSchema.parse({ folder, ...extra });
const book = '/data/Books/Terry Pratchett/Mort (1987)';

const { stores } = bothStores();

for (const [name, open] of stores) {
  describe(`merged due times on ${name}`, () => {
    test('a manual request with a 1 s timer does not pull forward a Readarr request with a 10 s timer in the same folder', async () => {
      const s = await open();
      const [first] = await s.enqueueMany([req(book, { source: 'Readarr', event: 'Download', files: [`${book}/Mort.epub`], delay: 10 })], timing, 0);
      assert.equal(first!.dueAt, 10_000);
      const [second] = await s.enqueueMany([req(book, { source: 'Manual', files: [`${book}/Mort.azw3`], delay: 1 })], timing, 100);
      assert.equal(second!.status, 'merged');
      assert.equal(second!.dueAt, 10_000, 'not 1.1 s: the Readarr file is not yet due');
      const entry = (await s.view.get(first!.id))!;
      assert.equal(entry.dueAt, 10_000);
      assert.equal(await s.activateDue(['plex'], 1_100), 0, 'nothing is sent 1.1 s after the first request');
      assert.equal(await s.activateDue(['plex'], 10_000), 1);
    });

    test('the other order: a long timer joining a short one pushes the scan out to its own due time', async () => {
      const s = await open();
      await s.enqueueMany([req(book, { source: 'Manual', delay: 1 })], timing, 0);
      const [r] = await s.enqueueMany([req(book, { source: 'Readarr', event: 'Download', delay: 10 })], timing, 500);
      assert.equal(r!.dueAt, 10_000, 'capped at SERVER_SCAN_DELAY_MAX after the first request, not 10.5 s');
    });

    test('a new parent folder that absorbs pending scans below it waits for the latest of their due times', async () => {
      const s = await open();
      await s.enqueueMany([req(`${book}/Extras`, { source: 'Readarr', event: 'Download', delay: 10 })], timing, 0);
      const [r] = await s.enqueueMany([req(book, { source: 'Manual', delay: 1 })], timing, 200);
      assert.equal(r!.status, 'merged');
      assert.equal(r!.folder, book);
      assert.equal(r!.dueAt, 10_000);
    });

    test('SERVER_SCAN_DELAY_MAX still bounds an endless stream of requests', async () => {
      const s = await open();
      let last = 0;
      for (let t = 0; t <= 30_000; t += 500) {
        const [r] = await s.enqueueMany([req(book, { source: t % 1000 ? 'Manual' : 'Readarr', delay: t % 1000 ? 1 : 10 })], timing, t);
        if (t < 10_000) last = r!.dueAt;
      }
      assert.equal(last, 10_000, 'due at the cap, 10 s after the first request, however many requests follow');
      assert.equal(await s.activateDue(['plex'], 10_000), 1);
    });
  });
}
