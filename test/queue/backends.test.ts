import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scanRequestSchema, type ScanRequest } from '../../src/core/scan.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { LIST_FILES, MAX_FILES_PER_SCAN, type QueueEntry } from '../../src/queue/types.ts';
import { bothStores } from '../helpers/both-stores.ts';

// The queue's behaviour, run against both stores: SQLite (one relay's file) and PostgreSQL (shared by relays).
// The rules (merging, absorbing, library roots, debounce and cap, priorities, requeue of a failed scan's parts)
// are EnqueueBatch's for both; what each store adds is SQL, and these tests hold both to the same answers.

const timing = { delayMs: 10_000, maxMs: 30_000 };
const req = (folder: string, extra: Partial<ScanRequest> = {}) => scanRequestSchema.parse({ folder, source: 'Manual', ...extra });

const { stores: STORES, cluster, opened } = bothStores();

/** What a user sees of the open queue, without the ids each store hands out. */
async function openQueue(s: QueueBackend): Promise<Array<Pick<QueueEntry, 'folder' | 'requests' | 'priority' | 'dueAt' | 'firstAt' | 'files' | 'updateType' | 'upgrade'>>> {
  return (await s.view.listOpen()).map(({ folder, requests, priority, dueAt, firstAt, files, updateType, upgrade }) => ({ folder, requests, priority, dueAt, firstAt, files, updateType, upgrade }));
}

for (const [name, open] of STORES) {
  describe(`queue behaviour on ${name}`, () => {
    test('a pending parent absorbs its children, and a new parent takes over pending children', async () => {
      const s = await open();
      await s.enqueueMany([req('/data/TV/Dark/Season 01'), req('/data/TV/Dark/Season 02', { priority: 3 })], timing, 1000);
      const [r] = await s.enqueueMany([req('/data/TV/Dark', { priority: 5 })], timing, 2000);
      assert.equal(r!.status, 'merged');
      const entry = (await s.view.get(r!.id))!;
      assert.equal(entry.folder, '/data/TV/Dark');
      assert.equal(entry.requests, 3);
      assert.equal(entry.priority, 0, 'the most urgent (lowest) priority of the merged requests wins');
      assert.equal(entry.firstAt, 1000, 'the earliest request keeps counting towards the cap');
      const [below] = await s.enqueueMany([req('/data/TV/Dark/Season 03')], timing, 3000);
      assert.equal(below!.folder, '/data/TV/Dark');
      const [sibling] = await s.enqueueMany([req('/data/TV/Darkness')], timing, 3000);
      assert.equal(sibling!.status, 'queued', 'a folder whose name only starts the same is not below');
      assert.equal(await s.countOpen(), 2);
    });

    test('nothing merges across a library root', async () => {
      const s = await open();
      const t = { delayMs: 60_000, maxMs: 0, roots: ['/data/Movies', '/data/TV', '/data/TV/Anime'] };
      await s.enqueueMany([req('/data/TV/Dark/Season 01'), req('/data/Movies/Heat'), req('/data/TV/Anime/Show')], t, 1000);
      const [above] = await s.enqueueMany([req('/data')], t, 2000);
      assert.equal(above!.status, 'queued');
      await s.enqueueMany([req('/data/TV')], t, 3000);
      assert.deepEqual((await openQueue(s)).map((e) => e.folder).sort(), ['/data', '/data/Movies/Heat', '/data/TV', '/data/TV/Anime/Show']);
    });

    test('debounce and cap: due the delay after the latest request, never later than the cap after the first', async () => {
      const s = await open();
      const [a] = await s.enqueueMany([req('/data/Movies/Heat')], timing, 0);
      assert.equal(a!.dueAt, 10_000);
      const [b] = await s.enqueueMany([req('/data/Movies/Heat')], timing, 5_000);
      assert.equal(b!.dueAt, 15_000);
      const [c] = await s.enqueueMany([req('/data/Movies/Heat')], timing, 25_000);
      assert.equal(c!.dueAt, 30_000, 'capped at 30 s after the first request');
    });

    test('due scans are claimed most urgent first, then the one due longest; one delivery per target', async () => {
      const s = await open();
      await s.enqueueMany([req('/m/a', { priority: 2 }), req('/m/b', { priority: 0 }), req('/m/c', { priority: 2 })], { delayMs: 0, maxMs: 0 }, 1000);
      assert.equal(await s.activateDue(['plex'], 2000), 3);
      assert.equal(await s.activateDue(['plex'], 2000), 0, 'an active scan is not activated twice');
      const claimed = await s.claimDeliveries(10, 2000, 'plex');
      assert.deepEqual(claimed.map((c) => c.item.folder), ['/m/b', '/m/a', '/m/c']);
      assert.deepEqual(await s.claimDeliveries(10, 2000, 'plex'), [], 'a claimed delivery is not handed out again');
      // A request for a folder being delivered starts a new scan (the running one may have missed it).
      const [again] = await s.enqueueMany([req('/m/a')], timing, 2500);
      assert.equal(again!.status, 'queued');
    });

    test('finished scans go to history with their outcome; counts and queue_count follow', async () => {
      const s = await open();
      await s.enqueueMany([req('/m/a'), req('/m/b')], { delayMs: 0, maxMs: 0 }, 1000);
      await s.activateDue(['plex', 'jellyfin'], 1000);
      for (const c of await s.claimDeliveries(10, 1000, 'plex')) {
        const r = await s.completeDelivery(c.item.id, 'plex', { status: 'done', detail: 'section 1' }, 2000);
        assert.equal(r.scanFinished, undefined, 'jellyfin has not had it yet');
      }
      const [ja, jb] = await s.claimDeliveries(10, 1000, 'jellyfin');
      assert.equal((await s.completeDelivery(ja!.item.id, 'jellyfin', { status: 'done' }, 3000)).scanFinished, 'done');
      await s.retryDelivery(jb!.item.id, 'jellyfin', 'down', 5000);
      assert.deepEqual(await s.claimDeliveries(10, 4000, 'jellyfin'), [], 'not before its retry time');
      const [retried] = await s.claimDeliveries(10, 5000, 'jellyfin');
      assert.equal(retried!.item.attempt, 2);
      assert.equal((await s.completeDelivery(retried!.item.id, 'jellyfin', { status: 'failed', error: 'gone' }, 6000)).scanFinished, 'failed');
      assert.equal(await s.countOpen(), 0);
      const counts = await s.view.counts();
      assert.equal(counts.done, 1);
      assert.equal(counts.failed, 1);
      const history = await s.view.listHistory({});
      assert.deepEqual(history.map((h) => [h.folder, h.status]), [['/m/b', 'failed'], ['/m/a', 'done']]);
      assert.deepEqual((await s.view.listHistory({ status: 'done' })).map((h) => h.folder), ['/m/a']);
      assert.deepEqual((await s.view.listHistory({ text: 'M/B' })).map((h) => h.folder), ['/m/b']);
      assert.equal(history[1]!.deliveries.find((d) => d.target === 'plex')!.detail, 'section 1');
    });

    test('a scan that took in other folders and failed gives each back, queued on its own', async () => {
      const s = await open();
      await s.enqueueMany([req('/d/TV/Dark/S1', { files: ['/d/TV/Dark/S1/e1.mkv'] }), req('/d/TV/Dark/S2')], { delayMs: 0, maxMs: 0 }, 1000);
      await s.enqueueMany([req('/d/TV/Dark')], { delayMs: 0, maxMs: 0 }, 1000);
      await s.activateDue(['plex'], 1000);
      const [c] = await s.claimDeliveries(1, 1000, 'plex');
      assert.equal(c!.item.folder, '/d/TV/Dark');
      const r = await s.completeDelivery(c!.item.id, 'plex', { status: 'failed', error: 'no section' }, 2000);
      assert.deepEqual(r.requeued, ['/d/TV/Dark/S1', '/d/TV/Dark/S2']);
      const queued = await openQueue(s);
      assert.deepEqual(queued.map((e) => [e.folder, e.files]), [['/d/TV/Dark/S1', ['/d/TV/Dark/S1/e1.mkv']], ['/d/TV/Dark/S2', []]]);
    });

    test('meta keys are saved with the scans, and the dashboard can cancel or retry', async () => {
      const s = await open();
      const [r] = await s.enqueueMany([req('/m/x')], timing, 1000, { 'drive.page_token.root': '42' });
      assert.equal(await s.meta.get('drive.page_token.root'), '42');
      await s.meta.set('drive.page_token.root', null);
      assert.equal(await s.meta.get('drive.page_token.root'), undefined);
      assert.equal(await s.retryNow(r!.id, 1500), true);
      assert.equal((await s.view.get(r!.id))!.dueAt, 1500);
      assert.equal(await s.cancel(r!.id), true);
      assert.equal(await s.countOpen(), 0);
      assert.equal(await s.cancel(r!.id), false);
    });

    test('a removal at a library root is kept apart from imports, shares one window, and waits for the imports below it', async () => {
      // As test/queue/removal-scans.test.ts on SQLite: the root scan never takes in an import, nor merges into one.
      const s = await open();
      const t = { delayMs: 10_000, maxMs: 30_000, roots: ['/data/Movies', '/data/TV'] };
      const removal = (folder: string) => req(folder, { source: 'Radarr', event: 'MovieDelete', updateType: 'Deleted', removal: true });
      await s.enqueueMany([req('/data/Movies/Interstellar (2014)')], t, 0);
      const [root] = await s.enqueueMany([removal('/data/Movies')], t, 1_000);
      const [later] = await s.enqueueMany([req('/data/Movies/Heat (1995)')], t, 2_000);
      const [second] = await s.enqueueMany([removal('/data/Movies')], t, 20_000);
      assert.deepEqual([root!.status, later!.status, second!.status], ['queued', 'queued', 'merged']);
      assert.equal(second!.dueAt, 31_000, 'due SERVER_SCAN_DELAY_MAX after the first removal, not moved by the second');
      const queued = await s.view.listOpen();
      assert.deepEqual(queued.map((e) => [e.folder, e.removal, e.requests]).sort(), [
        ['/data/Movies', true, 2],
        ['/data/Movies/Heat (1995)', false, 1],
        ['/data/Movies/Interstellar (2014)', false, 1],
      ]);
      // The root scan is due, but an import below it is still open: it waits and looks again.
      await s.enqueueMany([req('/data/Movies/Up (2009)')], t, 30_000);
      assert.equal(await s.activateDue(['plex'], 31_000), 2, 'the two due imports');
      const rootEntry = (await s.view.listOpen()).find((e) => e.removal)!;
      assert.equal(rootEntry.status, 'pending');
      assert.ok(rootEntry.dueAt > 31_000, 'put off while imports below it are open');
      const [claimedRemoval] = (await s.claimDeliveries(10, 31_000, 'plex')).filter((c) => c.item.removal);
      assert.equal(claimedRemoval, undefined);
    });

    test('a scan keeps a bounded sample of its files and counts the rest, the same on both stores (issue 35, item 11)', async () => {
      const s = await open();
      const reference = new QueueStore(':memory:');
      const names = (folder: string, from: number, n: number) => Array.from({ length: n }, (_, i) => `${folder}/e${String(from + i).padStart(5, '0')}.mkv`);
      const both = async (batch: ReturnType<typeof req>[], now: number) => {
        await s.enqueueMany(batch, timing, now);
        reference.enqueueMany(batch, timing, now);
      };
      // Many big requests for one folder: the sample stops at MAX_FILES_PER_SCAN, the count goes on.
      const season = '/d/TV/Big/S01';
      for (let i = 0; i < 5; i++) await both([req(season, { files: names(season, i * 600, 600) })], 1000 + i);
      // A file sent again while the sample has room is kept and counted once.
      const movie = '/d/Movies/Heat';
      await both([req(movie, { files: [`${movie}/Heat.mkv`] }), req(movie, { files: [`${movie}/Heat.mkv`, `${movie}/Heat.srt`] })], 1000);
      // A new parent absorbs two pending seasons: its sample fills with their first files by path, the rest are counted.
      await both([req('/d/TV/Show/S1', { files: names('/d/TV/Show/S1', 0, 800) }), req('/d/TV/Show/S2', { files: names('/d/TV/Show/S2', 0, 900) })], 1000);
      await both([req('/d/TV/Show', { files: ['/d/TV/Show/poster.jpg'] })], 2000);

      const seen = async (q: QueueBackend) => {
        const out = [];
        for (const e of await q.view.listOpen()) out.push({ folder: e.folder, listed: e.files.length, fileCount: e.fileCount, kept: (await q.view.get(e.id))!.files });
        return out.sort((a, b) => a.folder.localeCompare(b.folder));
      };
      const mine = await seen(s);
      assert.deepEqual(mine.map((e) => [e.folder, e.listed, e.fileCount, e.kept.length]), [
        ['/d/Movies/Heat', 2, 2, 2],
        ['/d/TV/Big/S01', LIST_FILES, 3000, MAX_FILES_PER_SCAN],
        ['/d/TV/Show', LIST_FILES, 1701, MAX_FILES_PER_SCAN],
      ]);
      const show = mine.find((e) => e.folder === '/d/TV/Show')!.kept;
      assert.ok(show.includes('/d/TV/Show/poster.jpg') && show.includes('/d/TV/Show/S2/e00198.mkv') && !show.includes('/d/TV/Show/S2/e00199.mkv'), 'its own file, then S1, then the first 199 of S2');
      assert.deepEqual(mine, await seen(reference), 'the same samples and counts on both stores');

      // What a target is handed: the sample, and how many names were left out of it.
      const handed = async (q: QueueBackend) => {
        await q.activateDue(['plex'], 100_000);
        return (await q.claimDeliveries(10, 100_000, 'plex')).map((c) => [c.item.folder, c.item.files.length, c.item.moreFiles]).sort();
      };
      const items = await handed(s);
      assert.deepEqual(items, [
        ['/d/Movies/Heat', 2, 0],
        ['/d/TV/Big/S01', MAX_FILES_PER_SCAN, 2000],
        ['/d/TV/Show', MAX_FILES_PER_SCAN, 701],
      ]);
      assert.deepEqual(items, await handed(reference));
      reference.close();
    });

    test('a file named twice in one commit takes one place in a nearly full sample', async () => {
      const s = await open();
      const reference = new QueueStore(':memory:');
      const folder = '/d/TV/Full/S01';
      const names = Array.from({ length: MAX_FILES_PER_SCAN - 3 }, (_, i) => `${folder}/e${String(i).padStart(4, '0')}.mkv`);
      const batches = [
        [req(folder, { files: names })],
        // Three places left: a, then a again with b (a is known: b fits), then d and z (d takes the last place, since a
        // took one place only; z is counted).
        [req(folder, { files: [`${folder}/a.mkv`] }), req(folder, { files: [`${folder}/a.mkv`, `${folder}/b.mkv`] }), req(folder, { files: [`${folder}/d.mkv`, `${folder}/z.mkv`] })],
      ];
      for (const b of batches) {
        await s.enqueueMany(b, timing, 1000);
        reference.enqueueMany(b, timing, 1000);
      }
      const seen = async (q: QueueBackend) => {
        const [e] = await q.view.listOpen();
        return { fileCount: e!.fileCount, kept: (await q.view.get(e!.id))!.files.filter((f) => !names.includes(f)) };
      };
      assert.deepEqual(await seen(s), { fileCount: MAX_FILES_PER_SCAN + 1, kept: [`${folder}/a.mkv`, `${folder}/b.mkv`, `${folder}/d.mkv`] });
      assert.deepEqual(await seen(s), await seen(reference));
      reference.close();
    });

    test('a failed scan whose file list was cut gives its parts back as folders, since its sample cannot say whose files are missing', async () => {
      const s = await open();
      const now = { delayMs: 0, maxMs: 0 };
      const s1 = '/d/TV/Dark/S1';
      await s.enqueueMany([req(s1, { files: Array.from({ length: 1200 }, (_, i) => `${s1}/e${String(i).padStart(4, '0')}.mkv`) }), req('/d/TV/Dark/S2', { files: ['/d/TV/Dark/S2/e1.mkv'] })], now, 1000);
      await s.enqueueMany([req('/d/TV/Dark')], now, 1000);
      await s.activateDue(['plex'], 1000);
      const [c] = await s.claimDeliveries(1, 1000, 'plex');
      assert.equal(c!.item.moreFiles, 201, "S1's 200 past its sample, and S2's file that no longer fit");
      const r = await s.completeDelivery(c!.item.id, 'plex', { status: 'failed', error: 'no section' }, 2000);
      assert.deepEqual(r.requeued, [s1, '/d/TV/Dark/S2']);
      const queued = await s.view.listOpen();
      assert.deepEqual(queued.map((e) => [e.folder, e.files, e.fileCount]), [[s1, [], 0], ['/d/TV/Dark/S2', [], 0]]);
    });

    test('both stores agree on a long mixed sequence of requests', async () => {
      // A fixed pseudo-random walk over nested folders, library roots and priorities; the PostgreSQL run must
      // leave exactly the queue the SQLite run leaves.
      const s = await open();
      const reference = new QueueStore(':memory:');
      let seed = 7;
      const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
      const folders = ['/d/TV', '/d/TV/A', '/d/TV/A/S1', '/d/TV/A/S2', '/d/TV/B', '/d/TV/Anime', '/d/TV/Anime/X', '/d/Movies/M1', '/d/Movies', '/d'];
      const t = { delayMs: 1000, maxMs: 5000, roots: ['/d/TV', '/d/Movies', '/d/TV/Anime'] };
      for (let step = 0; step < 60; step++) {
        const batch = Array.from({ length: 1 + rand(4) }, () => {
          const folder = folders[rand(folders.length)]!;
          return req(folder, { priority: rand(3), files: rand(2) ? [`${folder}/f${rand(3)}.mkv`] : [], event: rand(4) ? 'Download' : 'Upgrade' });
        });
        const now = 1000 + step * 700;
        const [mine, theirs] = [await s.enqueueMany(batch, t, now), reference.enqueueMany(batch, t, now)];
        assert.deepEqual(mine.map((r) => [r.status, r.folder, r.dueAt]), theirs.map((r) => [r.status, r.folder, r.dueAt]), `step ${step}`);
        if (step % 10 === 9) {
          await s.activateDue(['plex'], now);
          reference.activateDue(['plex'], now);
        }
      }
      assert.deepEqual(await openQueue(s), await openQueue(reference));
      reference.close();
    });

    test('both stores agree on big batches: merges, parents taking in children and repeated parts within one commit', async () => {
      // Batches of up to 30 requests (what 50 connections at once commit together), with files that repeat, so one
      // commit inserts, merges, absorbs and records the same part more than once. Then every scan fails, and the
      // parts each had recorded come back: they must be the same on both stores too.
      const s = await open();
      const reference = new QueueStore(':memory:');
      let seed = 11;
      const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
      const folders = ['/d/TV/A', '/d/TV/A/S1', '/d/TV/A/S2', '/d/TV/A/S2/x', '/d/TV/B', '/d/TV/B/S1', '/d/TV/C', '/d/Movies/M1', '/d/Movies/M2', '/d/Movies', '/d/TV'];
      const t = { delayMs: 1000, maxMs: 5000, roots: ['/d/TV', '/d/Movies'] };
      for (let step = 0; step < 25; step++) {
        const batch = Array.from({ length: 1 + rand(30) }, () => {
          const folder = folders[rand(folders.length)]!;
          const files = Array.from({ length: rand(3) }, () => `${folder}/f${rand(4)}.mkv`);
          return req(folder, { priority: rand(3), files, event: rand(4) ? 'Download' : 'Upgrade', title: rand(2) ? `t${rand(5)}` : undefined });
        });
        const now = 1000 + step * 300;
        const [mine, theirs] = [await s.enqueueMany(batch, t, now), reference.enqueueMany(batch, t, now)];
        assert.deepEqual(mine.map((r) => [r.status, r.folder, r.dueAt]), theirs.map((r) => [r.status, r.folder, r.dueAt]), `step ${step}`);
      }
      const counted = async (q: QueueBackend) => (await q.view.listOpen()).map((e) => [e.folder, e.fileCount, e.title]);
      assert.deepEqual(await openQueue(s), await openQueue(reference));
      assert.deepEqual(await counted(s), await counted(reference));
      const failAll = async (q: QueueBackend) => {
        await q.activateDue(['plex'], 100_000);
        const back: Array<[string, string[] | undefined]> = [];
        for (const c of await q.claimDeliveries(100, 100_000, 'plex')) {
          back.push([c.item.folder, (await q.completeDelivery(c.item.id, 'plex', { status: 'failed', error: 'no section' }, 100_000)).requeued]);
        }
        return back.sort((a, b) => a[0].localeCompare(b[0]));
      };
      const requeued = await failAll(s);
      assert.ok(requeued.some(([, parts]) => parts?.length), 'some scans had taken in other folders');
      assert.deepEqual(requeued, await failAll(reference));
      assert.deepEqual(await openQueue(s), await openQueue(reference), 'the parts came back with the same requests, priority, times and files');
      reference.close();
    });

    // Issue 42 item 5: a scan that failed for want of a token waited out its 5 min back-off after the user set
    // PLEX_TOKEN and restarted. A start re-reads the config, so such waits end: the scan is due at once.
    test('at a start, deliveries waiting out a retry back-off after an error are due now; others are left as they are', async () => {
      const s = await open();
      const [a] = await s.enqueueMany([req('/data/Movies/A')], { delayMs: 0, maxMs: 0 }, 1000);
      const [b] = await s.enqueueMany([req('/data/TV/B')], { delayMs: 0, maxMs: 0 }, 1000);
      await s.activateDue(['plex', 'jellyfin'], 2000);
      const claimed = await s.claimDeliveries(10, 2000, 'plex');
      assert.equal(claimed.length, 2);
      await s.retryDelivery(a!.id, 'plex', 'PLEX_TOKEN is empty and this machine has no Plex Media Scanner', 2000 + 300_000);
      await s.retryDelivery(b!.id, 'plex', 'Plex refused the token (401): check PLEX_TOKEN', 2000 + 300_000);
      assert.deepEqual(await s.claimDeliveries(10, 3000, 'plex'), [], 'before the start they wait out the back-off');
      // jellyfin's deliveries wait for their first try (no error): not touched; neither is a target this relay lacks.
      assert.equal(await s.retryWaitingNow(['plex'], 3000), 2);
      const again = await s.claimDeliveries(10, 3000, 'plex');
      assert.deepEqual(again.map((c) => c.item.folder).sort(), ['/data/Movies/A', '/data/TV/B']);
      assert.equal(await s.retryWaitingNow(['emby'], 3000), 0);
    });
  });
}

describe('PostgreSQL: one queue for several relays', () => {
  const two = async () => {
    const url = await cluster().createDatabase();
    const a = await PgQueueStore.open({ url, relayId: 'relay-a', leaseMs: 60_000 });
    const b = await PgQueueStore.open({ url, relayId: 'relay-b', leaseMs: 60_000 });
    opened.push(a, b);
    return { a, b, url };
  };

  test('requests for one folder merge into one scan whichever relay took them, also when they race', async () => {
    const { a, b } = await two();
    const sends = Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).enqueueMany([req(`/tv/Show ${i % 5}`, { files: [`/tv/Show ${i % 5}/e${i}.mkv`] })], timing, 1000 + i));
    await Promise.all(sends);
    const open = await a.view.listOpen();
    assert.deepEqual(open.map((e) => [e.folder, e.requests, e.files.length]).sort(), [0, 1, 2, 3, 4].map((n) => [`/tv/Show ${n}`, 4, 4]));
    // A parent sent to the other relay absorbs them.
    await b.enqueueMany([req('/tv')], timing, 2000);
    assert.equal(await a.countOpen(), 1);
  });

  test('a delivery is claimed by one relay only; a dead relay\'s claim comes back after its lease', async () => {
    const { a, b, url } = await two();
    await a.enqueueMany([req('/m/one'), req('/m/two')], { delayMs: 0, maxMs: 0 }, 1000);
    await a.activateDue(['plex'], 1000);
    await b.activateDue(['plex'], 1000);
    const [fromA, fromB] = await Promise.all([a.claimDeliveries(1, 1000, 'plex'), b.claimDeliveries(1, 1000, 'plex')]);
    assert.deepEqual([...fromA, ...fromB].map((c) => c.item.folder).sort(), ['/m/one', '/m/two'], 'SKIP LOCKED: each took a different one');
    const holders = (await a.view.listOpen()).map((e) => e.deliveries[0]!.relay).sort();
    assert.deepEqual(holders, ['relay-a', 'relay-b'], 'a claim names its relay');
    // relay-a finishes its own; relay-b dies (its connections close, it never finishes).
    await a.completeDelivery(fromA[0]!.item.id, 'plex', { status: 'done' }, 1500);
    await b.close();
    // relay-a finds nothing until b's lease ends.
    assert.deepEqual(await a.claimDeliveries(5, 1000 + 59_000, 'plex'), []);
    const again = await a.claimDeliveries(5, 1000 + 61_000, 'plex');
    assert.deepEqual(again.map((c) => [c.item.folder, c.item.attempt]), [[fromB[0]!.item.folder, 2]]);
    // A relay that comes back with the same name sends its own unfinished claims again at once.
    const back = await PgQueueStore.open({ url, relayId: 'relay-a' });
    opened.push(back);
    assert.equal(await back.recoverInFlight(), 1);
  });

  test('two relays finishing the two targets of one scan at the same moment finish the scan once', async () => {
    // Each relay finishes its delivery without the queue's lock (only the scan's row is locked), so that relays
    // drain side by side: the scan must still end, exactly once, and as failed when one of the two failed.
    const { a, b } = await two();
    const folders = Array.from({ length: 12 }, (_, i) => `/m/Film ${i}`);
    await a.enqueueMany(folders.map((f) => req(f)), { delayMs: 0, maxMs: 0 }, 1000);
    await a.activateDue(['jellyfin', 'emby'], 1000);
    const [toJellyfin, toEmby] = await Promise.all([a.claimDeliveries(20, 1000, 'jellyfin'), b.claimDeliveries(20, 1000, 'emby')]);
    assert.equal(toJellyfin.length + toEmby.length, 24);
    const outcomes = await Promise.all(
      toJellyfin.flatMap((j) => {
        const e = toEmby.find((x) => x.item.id === j.item.id)!;
        const embyFails = j.item.folder.endsWith('3') || j.item.folder.endsWith('7');
        return [
          a.completeDelivery(j.item.id, 'jellyfin', { status: 'done' }, 2000).then((r) => [j.item.folder, r.scanFinished] as const),
          b.completeDelivery(e.item.id, 'emby', embyFails ? { status: 'failed', error: 'gone' } : { status: 'done' }, 2000).then((r) => [e.item.folder, r.scanFinished] as const),
        ];
      }),
    );
    const finished = outcomes.filter(([, f]) => f !== undefined).map(([folder, f]) => [folder, f]).sort();
    assert.deepEqual(finished, folders.map((f) => [f, f.endsWith('3') || f.endsWith('7') ? 'failed' : 'done']).sort(), 'each scan finished once, by whichever relay finished last');
    assert.equal(await a.countOpen(), 0);
    assert.deepEqual(await a.view.counts(), { pending: 0, active: 0, done: 10, failed: 2 });
    // Their pooled connections go now: the throwaway cluster takes a bounded number of clients.
    await a.close();
    await b.close();
  });

  test('a serial target has one turn across relays, and a dead relay\'s turn is released with its connection', async () => {
    const { a, b } = await two();
    assert.equal(await a.shared.takeTurn('plex'), true);
    assert.equal(await b.shared.takeTurn('plex'), false, 'relay-a holds Plex');
    assert.equal(await b.shared.takeTurn('jellyfin'), true, 'another target has its own turn');
    await a.shared.releaseTurn('plex');
    assert.equal(await b.shared.takeTurn('plex'), true);
    await b.close(); // b's session ends with the turn held
    assert.equal(await a.shared.takeTurn('plex'), true);
  });

  test('a relay is woken by another relay\'s request (LISTEN/NOTIFY)', async () => {
    const { a, b } = await two();
    const woken = new Promise<number | undefined>((resolve) => b.shared.onWake(resolve));
    const [queued] = await a.enqueueMany([req('/m/x')], timing);
    assert.equal(await woken, queued!.dueAt, 'the wake-up says when the scan is due, so relay-b sets its timer instead of looking now');
  });

  test('an unreachable database: a clear start error naming the URL without its password', async () => {
    const url = `postgres://scanrelay:s3cret@127.0.0.1:${cluster().port + 1}/queue`;
    await assert.rejects(PgQueueStore.open({ url, relayId: 'x' }), (err: Error) => {
      assert.match(err.message, /cannot reach the queue database at postgres:\/\/scanrelay:\*\*\*@127\.0\.0\.1:\d+\/queue \(SERVER_QUEUE_URL\)/);
      assert.doesNotMatch(err.message, /s3cret/);
      return true;
    });
  });
});
