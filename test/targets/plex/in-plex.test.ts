import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { PlexDatabase } from '../../../src/targets/plex/database.ts';
import { filesInPlex } from '../../../src/targets/plex/in-plex.ts';
import { addMediaFile, createPlexDb } from '../../fakes/plex-db.ts';
import { FakePlex } from '../../fakes/plex.ts';
import { makePlexTarget, mediaTree, recordingLogger, scanItem, testConfig } from '../../helpers/plex-target.ts';

const FILE = '/data/Movies/Known (2000)/Known (2000).mkv';

describe('SERVER_SKIP_FILES_IN_PLEX: files Plex already has', () => {
  let plex: FakePlex;
  beforeEach(async () => {
    plex = await new FakePlex().start();
  });
  afterEach(async () => plex.stop());

  function setup(o: Record<string, unknown> = {}, size = 5) {
    const tree = mediaTree();
    const dbPath = join(tree.root, 'library.db');
    const db = createPlexDb(dbPath, [{ id: 1, name: 'Movies', type: 1, roots: ['/data/Movies'] }]);
    addMediaFile(db, { sectionId: 1, file: FILE, size });
    tree.put(FILE, '12345');
    const config = testConfig({
      PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, PLEX_DATABASE_PATH: dbPath, SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings,
      // Deliveries follow each other here without waiting for Plex's scans to end: no wait for other scans.
      SERVER_SKIP_FILES_IN_PLEX: true, PLEX_ANALYZE_TYPE: 'off', PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, ...o,
    });
    return { tree, db, dbPath, config };
  }
  const scansOf = (folder: string) => plex.refreshes().filter((r) => r.path === folder).length;

  test('a file listed in media_parts with the same size on disk is not scanned, and the log says why', async () => {
    const { config } = setup();
    const { log, lines } = recordingLogger();
    const before = scansOf('/data/Movies/Known (2000)');
    const result = await makePlexTarget(plex, config, { log }).deliver(scanItem({ folder: '/data/Movies/Known (2000)', files: [FILE] }));
    assert.deepEqual(result, { outcome: 'done', detail: 'not scanned: the file is already in Plex' });
    assert.equal(scansOf('/data/Movies/Known (2000)'), before);
    assert.ok(lines.some((l) => l.key === 'SERVER_SKIP_FILES_IN_PLEX'));
  });

  test('safety: a different size, a new file, a delete or the key off all scan', async () => {
    const differentSize = setup({}, 999);
    const before = scansOf('/data/Movies/Known (2000)');
    assert.equal((await makePlexTarget(plex, differentSize.config).deliver(scanItem({ folder: '/data/Movies/Known (2000)', files: [FILE] }))).outcome, 'done');
    assert.equal(scansOf('/data/Movies/Known (2000)'), before + 1);
    const same = setup();
    same.tree.put('/data/Movies/Known (2000)/extra.srt');
    await makePlexTarget(plex, same.config).deliver(scanItem({ folder: '/data/Movies/Known (2000)', files: [FILE, '/data/Movies/Known (2000)/extra.srt'] }));
    await makePlexTarget(plex, same.config).deliver(scanItem({ folder: '/data/Movies/Known (2000)', files: [FILE], updateType: 'Deleted' }));
    await makePlexTarget(plex, { ...same.config, SERVER_SKIP_FILES_IN_PLEX: false }).deliver(scanItem({ folder: '/data/Movies/Known (2000)', files: [FILE] }));
    assert.equal(scansOf('/data/Movies/Known (2000)'), before + 4);
  });

  test('a scan whose file list was cut (files beyond the kept sample) is scanned even when Plex has every kept file (issue 35, item 11)', async () => {
    const { config } = setup();
    const before = scansOf('/data/Movies/Known (2000)');
    const result = await makePlexTarget(plex, config).deliver(scanItem({ folder: '/data/Movies/Known (2000)', files: [FILE], moreFiles: 5 }));
    assert.equal(result.outcome, 'done');
    assert.equal(scansOf('/data/Movies/Known (2000)'), before + 1);
  });

  test('drive changes are checked even with the key off (plex_autoscan always did); DISABLE_DISK_FILE_SIZE_CHECK skips the size test', async () => {
    const { config } = setup({ SERVER_SKIP_FILES_IN_PLEX: false }, 999);
    const drive = scanItem({ folder: '/data/Movies/Known (2000)', files: [FILE], source: 'Drive' });
    const before = scansOf('/data/Movies/Known (2000)');
    assert.equal((await makePlexTarget(plex, config).deliver(drive)).outcome, 'done');
    assert.equal(scansOf('/data/Movies/Known (2000)'), before + 1, 'size differs: scanned');
    const noSize = { ...config, GOOGLE: { ...config.GOOGLE, DISABLE_DISK_FILE_SIZE_CHECK: true } };
    const result = await makePlexTarget(plex, noSize).deliver(drive);
    assert.match((result as { detail: string }).detail, /already in Plex/);
    assert.equal(scansOf('/data/Movies/Known (2000)'), before + 1);
  });

  test('safety: the database is opened read-only, never written, readable while Plex writes, and a missing one means "scan"', () => {
    const { tree, db, dbPath, config } = setup();
    db.pragma('wal_checkpoint(TRUNCATE)');
    const hash = () => createHash('sha256').update(readFileSync(dbPath)).digest('hex');
    const before = hash();
    // Plex holds a write transaction open: reads still see the committed rows (WAL).
    const writer = new Database(dbPath);
    writer.exec('BEGIN IMMEDIATE');
    writer.prepare(`INSERT INTO media_parts (file, size) VALUES ('/data/Movies/Uncommitted/u.mkv', 1)`).run();
    const reader = new PlexDatabase(dbPath);
    try {
      assert.deepEqual(filesInPlex(reader, [FILE, '/data/Movies/Uncommitted/u.mkv'], config), { inPlex: [FILE], notInPlex: ['/data/Movies/Uncommitted/u.mkv'] });
      // LIKE wildcards in a path match only themselves.
      assert.deepEqual(filesInPlex(reader, ['/data/Movies/Known _2000)/Known (2000).mkv'], config).inPlex, []);
      assert.throws(() => (reader as any).handle().prepare(`DELETE FROM media_parts`).run(), /readonly/);
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
      reader.close();
    }
    assert.equal(hash(), before);
    assert.throws(() => filesInPlex(new PlexDatabase(join(tree.root, 'missing.db')), [FILE], config), /cannot open the Plex database/);
  });
});
