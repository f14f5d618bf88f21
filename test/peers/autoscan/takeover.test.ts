import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { resolveSettings } from '../../../src/config/settings.ts';
import { QueueStore } from '../../../src/queue/store.ts';
import { autoscanDb } from '../../helpers/autoscan-db.ts';
import { ROOT, runCli, tempDir } from '../../helpers/relay.ts';

const YML = join(ROOT, 'test', 'fixtures', 'autoscan', 'config.yml');

describe("import-autoscan takes over autoscan's pending scans (autoscan.db)", () => {
  test("AUTOSCAN_CONFIG and AUTOSCAN_DATABASE as autoscan reads them (cmd/autoscan/main.go:87-88); the rows are queued in autoscan's order and counted", async () => {
    const dir = tempDir();
    const dbFile = join(dir, 'autoscan.db');
    autoscanDb(dbFile, [
      ['/mnt/unionfs/Media/Movies/Zero (2000)', 0, '2026-11-25 10:00:00.5+00:00'],
      ['/mnt/unionfs/Media/TV/Late/Season 1', 5, '2026-11-25 10:05:00+00:00'],
      ['/mnt/unionfs/Media/TV/Early/Season 1', 5, '2026-11-25 09:00:00+00:00'],
      ['/mnt/unionfs/Media/Music/Two', 2, '2026-11-25 08:00:00+00:00'],
    ]);
    const queuefile = join(dir, 'queue.db');
    const out = await runCli(['--config', join(dir, 'config.json'), '--queuefile', queuefile, 'import-autoscan'], {
      env: { AUTOSCAN_CONFIG: YML, AUTOSCAN_DATABASE: dbFile },
    });
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /took over autoscan's pending scans from .*autoscan\.db: 4 row\(s\), 4 queued in autoscan's priority order/);
    const store = new QueueStore(queuefile);
    try {
      // autoscan: priority DESC, then time ASC (processor/datastore.go:84-89); scanrelay: lowest number first.
      const open = store.view.listOpen().sort((a, b) => a.id - b.id).map((e) => [e.folder, e.priority]);
      assert.deepEqual(open, [
        ['/mnt/unionfs/Media/TV/Early/Season 1', -5],
        ['/mnt/unionfs/Media/TV/Late/Season 1', -5],
        ['/mnt/unionfs/Media/Music/Two', -2],
        ['/mnt/unionfs/Media/Movies/Zero (2000)', 0],
      ]);
    } finally {
      store.close();
    }
    const again = await runCli(['--config', join(dir, 'config.json'), '--queuefile', queuefile, 'import-autoscan', YML, '--database', dbFile, '--force']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /were already taken over .*not queued again/);
  });

  test('a file that is not autoscan.db is a clear error, exit status not 0', async () => {
    const dir = tempDir();
    const other = join(dir, 'other.db');
    new Database(other).exec('CREATE TABLE x (a)');
    const out = await runCli(['--config', join(dir, 'config.json'), '--queuefile', join(dir, 'q.db'), 'import-autoscan', YML, '--database', other]);
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /has no scan table: it is not autoscan's database/);
  });

  test('without a config.yml argument or AUTOSCAN_CONFIG: a clear error', async () => {
    const dir = tempDir();
    const out = await runCli(['--config', join(dir, 'config.json'), 'import-autoscan'], { env: { AUTOSCAN_CONFIG: '' } });
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /give autoscan's config\.yml/);
  });
});

describe("autoscan's environment and --version", () => {
  test('AUTOSCAN_LOG and AUTOSCAN_VERBOSITY (a -v count) set the log file and level when scanrelay has none', () => {
    assert.equal(resolveSettings({}, { AUTOSCAN_VERBOSITY: '1' }).loglevel, 'debug');
    assert.equal(resolveSettings({}, { AUTOSCAN_VERBOSITY: '2' }).loglevel, 'trace');
    assert.equal(resolveSettings({}, { AUTOSCAN_VERBOSITY: '0' }).loglevel, 'info');
    assert.equal(resolveSettings({}, { AUTOSCAN_VERBOSITY: '2', SCANRELAY_LOGLEVEL: 'WARN' }).loglevel, 'warn');
    assert.equal(resolveSettings({}, { AUTOSCAN_LOG: '/tmp/activity.log' }).logfile, '/tmp/activity.log');
  });

  test('--version prints the version and exits 0, as autoscan --version does (main.go:94-106)', async () => {
    const out = await runCli(['--version']);
    assert.equal(out.code, 0, out.stderr);
    // The release, and the commit where it is known (a git checkout; src/core/version.ts).
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
    assert.match(out.stdout.trim(), new RegExp(`^${version.replace(/\./g, '\\.')}( \\(commit [0-9a-f]{7,40}\\))?$`));
  });
});
