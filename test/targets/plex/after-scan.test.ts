import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import pino from 'pino';
import { asOutcome } from '../../../src/core/scan.ts';
import { analyzeFiles } from '../../../src/targets/plex/analyze.ts';
import type { PlexScanBackend } from '../../../src/targets/plex/backends/backend.ts';
import { PlexDatabase } from '../../../src/targets/plex/database.ts';
import { addMediaFile, createPlexDb } from '../../fakes/plex-db.ts';
import { FakePlex } from '../../fakes/plex.ts';
import { makePlexTarget, mediaTree, recordingLogger, runQueue, scanItem, testConfig } from '../../helpers/plex-target.ts';
import { waitFor } from '../../helpers/relay.ts';

const SECTIONS = [
  { id: 1, name: 'Movies', type: 1 as const, roots: ['/data/Movies'] },
  { id: 2, name: 'TV', type: 2 as const, roots: ['/data/TV'] },
];

/** A media tree, a Plex database file and a config pointing at both and at the fake Plex. */
function setup(plex: FakePlex, o: Record<string, unknown> = {}) {
  const tree = mediaTree();
  const dbPath = join(tree.root, 'com.plexapp.plugins.library.db');
  const db = createPlexDb(dbPath, SECTIONS);
  const config = testConfig({
    PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, PLEX_DATABASE_PATH: dbPath, SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings,
    PLEX_ANALYZE_TYPE: 'off', PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, ...o,
  });
  return { tree, db, dbPath, config };
}

/** Delivers one file scan through a queue and returns the delivery detail once the after-scan steps ended. */
async function scanAndSettle(plex: FakePlex, config: ReturnType<typeof testConfig>, file: string, extra: Record<string, unknown> = {}, log = pino({ level: 'silent' })) {
  const q = runQueue([makePlexTarget(plex, config, { log })]);
  try {
    const folder = file.slice(0, file.lastIndexOf('/'));
    const id = q.enqueue(folder, [file], extra);
    await waitFor(() => q.store.view.get(id)!.status === 'done', 10_000, 'delivery');
    await q.scheduler.afterStepsSettled();
    return q.store.view.get(id)!.deliveries[0]!.detail!;
  } finally {
    await q.close();
  }
}

describe('after the scan', () => {
  let plex: FakePlex;
  beforeEach(async () => {
    plex = await new FakePlex().start();
  });
  afterEach(async () => plex.stop());

  describe('scan completion', () => {
    test('watches /activities until the section scan ends, then records "completed" and empties the trash after it', async () => {
      const { tree, db, config } = setup(plex, { PLEX_EMPTY_TRASH: true });
      addMediaFile(db, { sectionId: 1, file: '/data/Movies/Old/old.mkv', size: 1, deletedAt: '2024-01-01 00:00:00' });
      tree.put('/data/Movies/Watch (2000)/w.mkv');
      plex.scanActivityMs = 400;
      try {
        const detail = await scanAndSettle(plex, config, '/data/Movies/Watch (2000)/w.mkv');
        assert.match(detail, /^section 1 \(Movies\) via api; completed; trash emptied \(2 deleted\)$/);
        const scan = plex.calls.find((c) => c.path === '/library/sections/1/refresh' && c.query.path === '/data/Movies/Watch (2000)')!;
        const trash = plex.callsTo('PUT', /^\/library\/sections\/1\/emptyTrash$/).at(-1)!;
        assert.ok(trash.at >= scan.at + 400, 'empty trash waits for the scan to end');
      } finally {
        plex.scanActivityMs = 0;
      }
    });

    test('an old server (no notification stream, no /activities): the section\'s `refreshing` says when the scan ended', async () => {
      const { tree, db, config } = setup(plex, { PLEX_EMPTY_TRASH: true });
      addMediaFile(db, { sectionId: 1, file: '/data/Movies/Old/old2.mkv', size: 1, deletedAt: '2024-01-01 00:00:00' });
      tree.put('/data/Movies/Old PMS (2000)/o.mkv');
      plex.activitiesAvailable = false;
      plex.streaming = false;
      plex.scanActivityMs = 400;
      try {
        const detail = await scanAndSettle(plex, config, '/data/Movies/Old PMS (2000)/o.mkv');
        assert.match(detail, /^section 1 \(Movies\) via api; completed; trash emptied/);
        const scan = plex.scans.find((s) => s.path === '/data/Movies/Old PMS (2000)')!;
        const trash = plex.callsTo('PUT', /^\/library\/sections\/1\/emptyTrash$/).at(-1)!;
        assert.ok(trash.at >= scan.endedAt!, 'empty trash waits for the scan to end');
      } finally {
        plex.activitiesAvailable = true;
        plex.streaming = true;
        plex.scanActivityMs = 0;
      }
    });

    test('safety: the watch is capped; a scan that never ends is "sent, completion unknown"', async () => {
      const { tree, config } = setup(plex);
      tree.put('/data/Movies/Long (2000)/l.mkv');
      // Runs until the test ends it (stopScans): on a slow machine a 5 s scan could end before the 300 ms cap is read.
      plex.scanActivityMs = 600_000;
      const q = runQueue([makePlexTarget(plex, config, { timings: { completionMaxMs: 300 } })]);
      try {
        const id = q.enqueue('/data/Movies/Long (2000)', ['/data/Movies/Long (2000)/l.mkv']);
        await waitFor(() => /still scanning/.test(q.store.view.get(id)!.deliveries[0]?.detail ?? ''), 10_000, 'capped watch');
      } finally {
        plex.scanActivityMs = 0;
        plex.stopScans();
        await q.close();
      }
    });

    // plex_autoscan holds one scan lock from the before-command to the after-command (plex.py:134-232): Plex
    // gets the next scan only once the previous one, and its after-scan steps, ended.
    test('one scan at a time: the next folder is sent only after Plex finished the previous scan', async () => {
      const { tree, config } = setup(plex);
      const folders = ['/data/Movies/First (2000)', '/data/Movies/Second (2000)', '/data/Movies/Third (2000)'];
      for (const f of folders) tree.put(`${f}/f.mkv`);
      plex.scanActivityMs = 300;
      const q = runQueue([makePlexTarget(plex, config)], { concurrency: 8 });
      const firstCall = plex.calls.length;
      try {
        const ids = q.store.enqueueMany(folders.map((f) => ({ folder: f, files: [`${f}/f.mkv`], source: 'Manual' as const, event: 'Manual', updateType: 'Modified' as const, priority: 0 })), { delayMs: 0, maxMs: 0 }).map((r) => r.id);
        q.scheduler.poke();
        await waitFor(() => ids.every((id) => q.store.view.get(id)!.status === 'done'), 15_000, 'all delivered');
        await q.scheduler.afterStepsSettled();
        const sent = plex.calls.slice(firstCall).filter((c) => /^\/library\/sections\/1\/refresh$/.test(c.path));
        assert.deepEqual(sent.map((c) => c.query.path), folders, 'in queue order');
        for (let i = 1; i < sent.length; i++) assert.ok(sent[i]!.at >= sent[i - 1]!.at + 300, `scan ${i + 1} waited for scan ${i} to end`);
      } finally {
        plex.scanActivityMs = 0;
        plex.activities = [];
        await q.close();
      }
    });
  });

  describe('PLEX_EMPTY_TRASH guards', () => {
    const trashCalls = () => plex.callsTo('PUT', /^\/library\/sections\/\d+\/emptyTrash$/).length;

    test('control files present and deleted count within PLEX_EMPTY_TRASH_MAX_FILES: PUT emptyTrash for the section', async () => {
      const { tree, db, config: c0 } = setup(plex);
      const control = join(tree.root, 'mounted.bin');
      writeFileSync(control, '');
      const config = { ...c0, PLEX_EMPTY_TRASH: true, PLEX_EMPTY_TRASH_CONTROL_FILES: [control], PLEX_EMPTY_TRASH_MAX_FILES: 3 };
      addMediaFile(db, { sectionId: 2, file: '/data/TV/Gone/e1.mkv', size: 1, deletedAt: '2024-01-01 00:00:00' });
      tree.put('/data/TV/Show/Season 01/e2.mkv');
      const before = plex.callsTo('PUT', /^\/library\/sections\/2\/emptyTrash$/).length;
      const detail = await scanAndSettle(plex, config, '/data/TV/Show/Season 01/e2.mkv');
      assert.match(detail, /trash emptied \(2 deleted\)/);
      const calls = plex.callsTo('PUT', /^\/library\/sections\/2\/emptyTrash$/);
      assert.equal(calls.length, before + 1);
      assert.equal(calls.at(-1)!.token, plex.token);
      assert.equal(calls.at(-1)!.tokenIn, 'header');
    });

    test('a missing control file (a dropped mount): no emptyTrash, and the log says why', async () => {
      const { tree, db, config: c0 } = setup(plex);
      const config = { ...c0, PLEX_EMPTY_TRASH: true, PLEX_EMPTY_TRASH_CONTROL_FILES: [join(tree.root, 'mounted.bin')] };
      addMediaFile(db, { sectionId: 1, file: '/data/Movies/Gone/g.mkv', size: 1, deletedAt: '2024-01-01 00:00:00' });
      tree.put('/data/Movies/Ctl (2000)/c.mkv');
      const { log, lines } = recordingLogger();
      const before = trashCalls();
      const detail = await scanAndSettle(plex, config, '/data/Movies/Ctl (2000)/c.mkv', {}, log);
      assert.match(detail, /trash not emptied: control file missing/);
      assert.equal(trashCalls(), before);
      assert.ok(lines.some((l) => l.key === 'PLEX_EMPTY_TRASH_CONTROL_FILES' && l.missing === join(tree.root, 'mounted.bin')));
    });

    test('too many deleted rows: no emptyTrash', async () => {
      const { tree, db, config: c0 } = setup(plex);
      const config = { ...c0, PLEX_EMPTY_TRASH: true, PLEX_EMPTY_TRASH_MAX_FILES: 3 };
      for (let i = 0; i < 2; i++) addMediaFile(db, { sectionId: 1, file: `/data/Movies/Gone/${i}.mkv`, size: 1, deletedAt: '2024-01-01 00:00:00' });
      tree.put('/data/Movies/Many (2000)/m.mkv');
      const before = trashCalls();
      assert.match(await scanAndSettle(plex, config, '/data/Movies/Many (2000)/m.mkv'), /4 deleted items > PLEX_EMPTY_TRASH_MAX_FILES 3/);
      assert.equal(trashCalls(), before);
    });

    test('nothing deleted: no call unless PLEX_EMPTY_TRASH_ZERO_DELETED or the scan is an upgrade', async () => {
      const { tree, config: c0 } = setup(plex);
      tree.put('/data/Movies/Zero (2000)/z.mkv');
      const config = { ...c0, PLEX_EMPTY_TRASH: true };
      let before = trashCalls();
      assert.match(await scanAndSettle(plex, config, '/data/Movies/Zero (2000)/z.mkv'), /trash not emptied: nothing deleted/);
      assert.equal(trashCalls(), before);
      assert.match(await scanAndSettle(plex, config, '/data/Movies/Zero (2000)/z.mkv', { event: 'Upgrade' }), /trash emptied \(0 deleted\)/);
      assert.equal(trashCalls(), before + 1);
      before = trashCalls();
      assert.match(await scanAndSettle(plex, { ...config, PLEX_EMPTY_TRASH_ZERO_DELETED: true }, '/data/Movies/Zero (2000)/z.mkv'), /trash emptied/);
      assert.equal(trashCalls(), before + 1);
    });

    // plex_autoscan empties the trash after an upgrade even with nothing deleted (plex.py:199). A later plain
    // import that merges into the same queued scan must not make the scan forget it stands for an upgrade.
    test('a scan that an upgrade merged into is an upgrade, whatever request came last', async () => {
      const { tree, config: c0 } = setup(plex);
      tree.put('/data/Movies/Merged (2000)/a.mkv');
      tree.put('/data/Movies/Merged (2000)/b.mkv');
      const config = { ...c0, PLEX_EMPTY_TRASH: true };
      const before = trashCalls();
      const q = runQueue([makePlexTarget(plex, config)]);
      try {
        const base = { source: 'Sonarr', updateType: 'Modified', priority: 0 } as const;
        const [up, plain] = q.store.enqueueMany(
          [
            { ...base, folder: '/data/Movies/Merged (2000)', files: ['/data/Movies/Merged (2000)/a.mkv'], event: 'Upgrade' },
            { ...base, folder: '/data/Movies/Merged (2000)', files: ['/data/Movies/Merged (2000)/b.mkv'], event: 'Download' },
          ],
          { delayMs: 0, maxMs: 0 },
        );
        assert.equal(plain!.id, up!.id, 'one scan');
        q.scheduler.poke();
        await waitFor(() => q.store.view.get(up!.id)!.status === 'done', 10_000, 'delivery');
        await q.scheduler.afterStepsSettled();
        assert.match(q.store.view.get(up!.id)!.deliveries[0]!.detail!, /trash emptied \(0 deleted\)/);
        assert.equal(trashCalls(), before + 1);
      } finally {
        await q.close();
      }
    });

    test('an unreadable database aborts, and PLEX_EMPTY_TRASH_MAX_FILES 0 turns emptying off (plex_autoscan)', async () => {
      const { tree, config: c0 } = setup(plex);
      tree.put('/data/Movies/NoDb (2000)/n.mkv');
      const before = trashCalls();
      const missingDb = { ...c0, PLEX_EMPTY_TRASH: true, PLEX_EMPTY_TRASH_ZERO_DELETED: true, PLEX_DATABASE_PATH: join(tree.root, 'nope.db') };
      assert.match(await scanAndSettle(plex, missingDb, '/data/Movies/NoDb (2000)/n.mkv'), /deleted count unknown/);
      const zeroMax = { ...c0, PLEX_EMPTY_TRASH: true, PLEX_EMPTY_TRASH_ZERO_DELETED: true, PLEX_EMPTY_TRASH_MAX_FILES: 0 };
      assert.doesNotMatch(await scanAndSettle(plex, zeroMax, '/data/Movies/NoDb (2000)/n.mkv'), /trash/);
      assert.equal(trashCalls(), before);
    });
  });

  describe('PLEX_ANALYZE_TYPE / PLEX_ANALYZE_DIRECTORY', () => {
    const analyzed = () => plex.callsTo('PUT', /^\/library\/metadata\/[\d,]+\/analyze$/).map((c) => c.path.split('/')[3]);

    function episodes(db: ReturnType<typeof createPlexDb>) {
      const show = db.prepare(`INSERT INTO metadata_items (library_section_id, metadata_type, title) VALUES (2, 2, 'Show')`).run().lastInsertRowid;
      const season = Number(db.prepare(`INSERT INTO metadata_items (library_section_id, parent_id, metadata_type, title) VALUES (2, ?, 3, 'Season 1')`).run(show).lastInsertRowid);
      const e1 = addMediaFile(db, { sectionId: 2, file: '/data/TV/Show/Season 01/e1.mkv', size: 5, parentId: season, metadataType: 4 });
      const e2 = addMediaFile(db, { sectionId: 2, file: '/data/TV/Show/Season 01/e2.mkv', size: 5, parentId: season, metadataType: 4 });
      return { season, e1: e1.metadataItemId, e2: e2.metadataItemId };
    }

    test('a movie file is analyzed by its metadata item through PUT /library/metadata/{id}/analyze', async () => {
      const { tree, db, config } = setup(plex, { PLEX_ANALYZE_TYPE: 'basic' });
      const { metadataItemId } = addMediaFile(db, { sectionId: 1, file: '/data/Movies/An (2000)/an.mkv', size: 5 });
      tree.put('/data/Movies/An (2000)/an.mkv');
      const detail = await scanAndSettle(plex, config, '/data/Movies/An (2000)/an.mkv');
      assert.match(detail, new RegExp(`analyzed ${metadataItemId}$`));
      assert.equal(analyzed().at(-1), String(metadataItemId));
      assert.equal(plex.callsTo('PUT', /^\/library\/metadata\/[\d,]+\/analyze$/).at(-1)!.tokenIn, 'header');
    });

    test('with PLEX_ANALYZE_DIRECTORY: basic analyzes the parent, deep every item under it; without it, the item itself', async () => {
      const { tree, db, config } = setup(plex, { PLEX_ANALYZE_TYPE: 'basic' });
      const ids = episodes(db);
      tree.put('/data/TV/Show/Season 01/e1.mkv');
      await scanAndSettle(plex, config, '/data/TV/Show/Season 01/e1.mkv');
      assert.equal(analyzed().at(-1), String(ids.season));
      const { log, lines } = recordingLogger();
      await scanAndSettle(plex, { ...config, PLEX_ANALYZE_TYPE: 'deep' }, '/data/TV/Show/Season 01/e1.mkv', {}, log);
      assert.equal(analyzed().at(-1), `${ids.e1},${ids.e2}`);
      assert.ok(lines.some((l) => l.key === 'PLEX_ANALYZE_TYPE' && /runs|a basic analysis runs/.test(l.msg)), 'the API logs that deep runs a basic analysis');
      await scanAndSettle(plex, { ...config, PLEX_ANALYZE_DIRECTORY: false }, '/data/TV/Show/Season 01/e1.mkv');
      assert.equal(analyzed().at(-1), String(ids.e1));
    });

    test('safety: folder scans, deletes, "off" and files missing from the database are not analyzed', async () => {
      const { tree, db, config } = setup(plex, { PLEX_ANALYZE_TYPE: 'basic' });
      addMediaFile(db, { sectionId: 1, file: '/data/Movies/Fold (2000)/f.mkv', size: 5 });
      tree.put('/data/Movies/Fold (2000)/f.mkv');
      const before = analyzed().length;
      const target = makePlexTarget(plex, config);
      const folderScan = await target.deliver(scanItem({ folder: '/data/Movies/Fold (2000)' }));
      assert.equal(folderScan.outcome, 'done');
      assert.doesNotMatch(asOutcome(await (folderScan as any).after(new AbortController().signal)).detail, /analy/);
      const deleted = await target.deliver(scanItem({ folder: '/data/Movies/Fold (2000)', files: ['/data/Movies/Fold (2000)/f.mkv'], updateType: 'Deleted' }));
      assert.doesNotMatch(asOutcome(await (deleted as any).after(new AbortController().signal)).detail, /analy/);
      assert.doesNotMatch(await scanAndSettle(plex, { ...config, PLEX_ANALYZE_TYPE: 'off' }, '/data/Movies/Fold (2000)/f.mkv'), /analy/);
      tree.put('/data/Movies/Fold (2000)/unknown.mkv');
      assert.match(await scanAndSettle(plex, config, '/data/Movies/Fold (2000)/unknown.mkv'), /not analyzed: file not in the Plex database/);
      assert.equal(analyzed().length, before);
    });

    test('the database row may appear after the scan: the lookup is retried', async () => {
      const { db, dbPath } = setup(plex);
      const calls: Array<[readonly number[], boolean]> = [];
      const backend = { method: 'scanner', analyze: async (ids: readonly number[], deep: boolean) => void calls.push([ids, deep]) } as unknown as PlexScanBackend;
      setTimeout(() => addMediaFile(db, { sectionId: 1, file: '/data/Movies/Slow/s.mkv', size: 1 }), 40);
      const out = await analyzeFiles(
        { config: { ANALYZE_TYPE: 'deep', ANALYZE_DIRECTORY: true }, db: new PlexDatabase(dbPath), backend, log: pino({ level: 'silent' }), retry: { tries: 20, delayMs: 20 } },
        ['/data/Movies/Slow/s.mkv'],
        new AbortController().signal,
      );
      assert.match(out, /^analyzed \d+$/);
      // The scanner backend is asked for a deep analysis (--analyze-deeply).
      assert.equal(calls.length, 1);
      assert.equal(calls[0]![1], true);
    });
  });
});
