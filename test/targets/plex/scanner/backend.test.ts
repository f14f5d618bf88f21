import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { createLogger } from '../../../../src/log.ts';
import { TargetError } from '../../../../src/targets/http.ts';
import { PlexApi } from '../../../../src/targets/plex/api.ts';
import { PlexDatabase } from '../../../../src/targets/plex/database.ts';
import { PlexTarget } from '../../../../src/targets/plex/target.ts';
import { PlexScannerBackend } from '../../../../src/targets/plex/backends/scanner/backend.ts';
import type { ScannerSettings } from '../../../../src/targets/plex/backends/scanner/command.ts';
import { createPlexDb } from '../../../fakes/plex-db.ts';
import { FakePlex } from '../../../fakes/plex.ts';
import { CONTAINER_SUPPORT_DIR, FakeScanner } from '../../../fakes/scanner.ts';
import { plexSettingsOf, scanItem, testConfig } from '../../../helpers/plex-target.ts';
import { tempDir } from '../../../helpers/relay.ts';

const LD = '/usr/lib/plexmediaserver/lib';

function settings(fake: FakeScanner, over: Partial<ScannerSettings> = {}): ScannerSettings {
  return {
    SCANNER: fake.escapedScanner,
    LD_LIBRARY_PATH: LD,
    SUPPORT_DIR: '/var/lib/plexmediaserver/Library/Application\\ Support',
    USER: 'plex',
    USE_SUDO: false,
    USE_DOCKER: false,
    DOCKER_NAME: 'plex',
    ...over,
  };
}

describe('Plex scanner backend through fake docker, sudo and scanner', () => {
  let fake: FakeScanner;
  let dbPath: string;
  const savedPath = process.env.PATH;

  before(() => {
    dbPath = join(tempDir(), 'com.plexapp.plugins.library.db');
    createPlexDb(dbPath, [
      { id: 1, name: 'Movies', type: 1, roots: ['/data/Movies'] },
      { id: 2, name: 'TV Shows', type: 2, roots: ['/data/TV', '/data/TV/Kids'] },
      { id: 3, name: 'Kids TV', type: 2, roots: ['/data/TV/Kids Extra'] },
    ]).close();
  });
  beforeEach(() => {
    fake = new FakeScanner();
    process.env.PATH = fake.env().PATH;
  });
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  const backend = (over: Partial<ScannerSettings> = {}, opts: { timeoutMs?: number; api?: PlexApi; db?: string; maxRetries?: number } = {}) =>
    new PlexScannerBackend(settings(fake, over), { database: new PlexDatabase(opts.db ?? dbPath), api: opts.api, timeoutMs: opts.timeoutMs ?? 30_000, maxRetries: opts.maxRetries ?? 3, retryDelayMs: 0 });

  const hostile = (root: string) => [
    '/data/Movies/Heat (1995)',
    "/data/Movies/It's Complicated (2009)",
    '/data/Movies/The "Quoted" Movie',
    '/data/Movies/$HOME and ${PATH}',
    '/data/Movies/`id` and $(id)',
    '/data/Movies/x;rm -rf ~;echo',
    `/data/Movies/'; touch ${root}/pwned; '`,
    `/data/Movies/"; touch ${root}/pwned2; "`,
    '/data/Movies/Amélie (2001) 千と千尋 🎬',
    '/data/Movies/new\nline',
    '/data/Movies/ leading and trailing ',
    '/data/Movies/back\\slash \\ ',
  ];

  for (const mode of ['docker', 'sudo', 'plain'] as const) {
    test(`${mode}: hostile folder names reach the scanner as exactly one argument`, async () => {
      const b = backend({ USE_DOCKER: mode === 'docker', USE_SUDO: mode === 'sudo', USER: 'abc', DOCKER_NAME: 'plex' });
      const folders = hostile(fake.root);
      for (const folder of folders) await b.scan('1', folder);
      const calls = fake.scannerCalls();
      assert.deepEqual(
        calls.map((c) => c.argv),
        folders.map((folder) => ['--scan', '--refresh', '--section', '1', '--directory', folder]),
      );
      assert.equal(existsSync(join(fake.root, 'pwned')), false, 'a folder name ran a command');
      assert.equal(existsSync(join(fake.root, 'pwned2')), false, 'a folder name ran a command');
      for (const c of calls) assert.equal(c.env.LD_LIBRARY_PATH, LD);
    });
  }

  test('docker: right user and container; the container keeps its own support folder (not exported)', async () => {
    await backend({ USE_DOCKER: true, USE_SUDO: true, USER: 'abc', DOCKER_NAME: 'plex' }).scan('2', '/data/TV/Dark');
    const [wrapper] = fake.wrapperCalls();
    assert.deepEqual(wrapper!.slice(0, 8), ['docker', 'exec', '-u', 'abc', '-i', 'plex', 'bash', '-c']);
    assert.equal(wrapper!.length, 9);
    assert.doesNotMatch(wrapper![8]!, /PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR/);
    const [call] = fake.scannerCalls();
    assert.equal(call!.env.FAKE_USER, 'abc');
    assert.equal(call!.env.FAKE_CONTAINER, 'plex');
    assert.equal(call!.env.PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR, CONTAINER_SUPPORT_DIR);
    assert.equal(call!.env.LD_LIBRARY_PATH, LD);
  });

  test('sudo: runs as PLEX_USER with the support folder exported; escaped-space keys work', async () => {
    await backend({ USE_SUDO: true, USER: 'plex', SUPPORT_DIR: '/config/Library/Application\\ Support' }).scan('1', '/data/Movies/Up');
    const [wrapper] = fake.wrapperCalls();
    assert.deepEqual(wrapper!.slice(0, 5), ['sudo', '-u', 'plex', 'bash', '-c']);
    const [call] = fake.scannerCalls();
    assert.equal(call!.env.FAKE_USER, 'plex');
    assert.equal(call!.env.PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR, '/config/Library/Application Support');
    assert.equal(call!.env.LD_LIBRARY_PATH, LD);
  });

  test('neither: plain bash as the current user, no wrapper; a quoted scanner path works too', async () => {
    await backend({ SCANNER: `'${fake.scannerPath}'` }).scan('1', '/data/Movies/Up');
    assert.equal(fake.wrapperCalls().length, 0);
    const [call] = fake.scannerCalls();
    assert.equal(call!.env.FAKE_USER, undefined);
    assert.equal(call!.env.PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR, '/var/lib/plexmediaserver/Library/Application Support');
  });

  test('the scan detail keeps the exit status and what the scanner said', async () => {
    const { detail } = await backend().scan('1', '/data/Movies/Up');
    assert.match(detail!, /status 0/);
    assert.match(detail!, /'--scan' operation is deprecated/);
  });

  // plex_autoscan ignores the scanner's exit status (plex.py:173-178: run_command's return value is dropped) and
  // goes on with its after-scan steps. scanrelay runs a failing scanner again, at most PLEX_SCANNER_MAX_RETRIES
  // times, then fails the scan saying so; RUN_COMMAND_AFTER_SCAN still runs, as in plex_autoscan.
  test('a non-zero exit is run again at most PLEX_SCANNER_MAX_RETRIES times, then the scan fails and says so', async () => {
    fake.failNext(2, 3);
    const { detail } = await backend({}, { maxRetries: 3 }).scan('1', '/data/Movies/Up');
    assert.match(detail!, /status 0/);
    assert.equal(fake.scannerCalls().length, 3, 'two failed runs, then one that worked');

    fake.failNext(10, 3);
    const before = fake.scannerCalls().length;
    await assert.rejects(backend({}, { maxRetries: 3 }).scan('1', '/data/Movies/Up'), (err: unknown) => {
      assert.ok(err instanceof TargetError);
      assert.equal(err.kind, 'fatal');
      assert.match(err.message, /exited with status 3/);
      assert.match(err.message, /database is locked/);
      assert.match(err.message, /4 runs \(PLEX_SCANNER_MAX_RETRIES 3\)/);
      return true;
    });
    assert.equal(fake.scannerCalls().length, before + 4);
  });

  test('the target fails the scan for good after the retries, and RUN_COMMAND_AFTER_SCAN still runs', async () => {
    const out = join(tempDir(), 'after.log');
    const config = testConfig({ RUN_COMMAND_AFTER_SCAN: `echo "after $SCANRELAY_SECTION $SCANRELAY_PATH" >> '${out}'`, SERVER_FILE_CHECKS_ENABLED: false, PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, PLEX_ANALYZE_TYPE: 'off', PLEX_SCANNER_MAX_RETRIES: 1 });
    assert.equal(testConfig({}).PLEX_SCANNER_MAX_RETRIES, 3, 'default 3');
    fake.failNext(10, 3);
    const target = new PlexTarget(backend({}, { maxRetries: config.PLEX_SCANNER_MAX_RETRIES }), await createLogger({ level: 'error', pretty: false }), { settings: plexSettingsOf(config) });
    const failed = await target.deliver(scanItem({ folder: '/data/Movies/Up' }));
    assert.equal(failed.outcome, 'failed');
    assert.match((failed as { error: string }).error, /2 runs \(PLEX_SCANNER_MAX_RETRIES 1\)/);
    assert.equal(readFileSync(out, 'utf8'), 'after 1 /data/Movies/Up\n');
  });

  test('missing docker, a wrong container and a missing scanner give clear messages', async () => {
    process.env.PATH = tempDir();
    await assert.rejects(backend({ USE_DOCKER: true }).scan('1', '/data/Movies/Up'), /cannot run docker: not found on PATH/);
    process.env.PATH = fake.env().PATH;
    await assert.rejects(backend({ USE_DOCKER: true, DOCKER_NAME: 'plexx' }).scan('1', '/data/Movies/Up'), /status 1.*No such container: plexx/s);
    await assert.rejects(backend({ SCANNER: '/nowhere/Plex\\ Media\\ Scanner' }).scan('1', '/data/Movies/Up'), /status 127 \(command not found: check PLEX_SCANNER/);
    assert.deepEqual(await backend({ SCANNER: '/nowhere/Plex\\ Media\\ Scanner' }).available(), {
      ok: false,
      error: 'the Plex Media Scanner /nowhere/Plex\\ Media\\ Scanner does not exist (check PLEX_SCANNER)',
    });
    assert.deepEqual(await backend().available(), { ok: true });
    assert.deepEqual(await backend({ USE_SUDO: true }).available(), { ok: true });
    assert.match((await backend({ USE_DOCKER: true, DOCKER_NAME: 'gone' }).available()).error!, /No such container: gone/);
    process.env.PATH = tempDir();
    assert.deepEqual(await backend({ USE_SUDO: true }).available(), { ok: false, error: 'the Plex Media Scanner check cannot run sudo: not found on PATH' });
  });

  // plex_autoscan had no timeout: a hung scanner held its lock for good (plex.py:172-176, utils.run_command waits).
  // A run killed at PLEX_SCANNER_TIMEOUT is a failed run: it counts toward PLEX_SCANNER_MAX_RETRIES, so a scanner
  // that always hangs fails the scan after 1 + PLEX_SCANNER_MAX_RETRIES runs instead of being retried forever.
  test('a hung scanner is killed after the timeout; that run counts toward PLEX_SCANNER_MAX_RETRIES', async () => {
    fake.setHang(true);
    const before = fake.scannerCalls().length;
    // The timeout leaves the fake's shell time to start and record its call on a loaded machine (a run killed
    // before its first line would count as a run here but never show in scannerCalls).
    await assert.rejects(backend({ USE_DOCKER: true }, { timeoutMs: 3000, maxRetries: 1 }).scan('1', '/data/Movies/Up'), (err: unknown) => {
      assert.ok(err instanceof TargetError && err.kind === 'fatal', String(err));
      // The stderr tail between the two (a shell's "Terminated") depends on timing.
      assert.match(err.message, /killed after the timeout \(PLEX_SCANNER_TIMEOUT\).*; gave up after 2 runs \(PLEX_SCANNER_MAX_RETRIES 1\)/);
      return true;
    });
    assert.equal(fake.scannerCalls().length, before + 2, 'killed twice, then given up');
  });

  test('scanner runs never overlap, even when deliveries come at once', async () => {
    fake.setSlow(true);
    const b = backend({ USE_DOCKER: true });
    await Promise.all([b.scan('1', '/data/Movies/A'), b.scan('1', '/data/Movies/B'), b.analyze([5], false)]);
    assert.equal(fake.scannerCalls().length, 3);
    assert.equal(fake.sawOverlap(), false);
  });

  test('analyze runs --analyze or --analyze-deeply with the item ids', async () => {
    const b = backend({ USE_DOCKER: true });
    await b.analyze([101, 102], false);
    await b.analyze([7], true);
    assert.deepEqual(fake.scannerCalls().map((c) => c.argv), [['--analyze', '--item', '101,102'], ['--analyze-deeply', '--item', '7']]);
  });

  test('sections come from Plex database: longest root on whole segments', async () => {
    const b = backend();
    assert.deepEqual(await b.resolveSection('/data/TV/Kids/Bluey'), { id: '2', title: 'TV Shows', location: '/data/TV/Kids' });
    assert.deepEqual(await b.resolveSection('/data/TV/Kids Extra/Show'), { id: '3', title: 'Kids TV', location: '/data/TV/Kids Extra' });
    assert.equal(await b.resolveSection('/data/Movies2/X'), undefined);
    assert.deepEqual(await b.knownLocations(), ['/data/Movies', '/data/TV', '/data/TV/Kids', '/data/TV/Kids Extra']);
  });

  test('without a readable database: the API section list when a token is set, else a clear error', async () => {
    const missing = join(tempDir(), 'nope.db');
    await assert.rejects(backend({}, { db: missing }).resolveSection('/data/Movies/Up'), /cannot open the Plex database .*nope\.db.*PLEX_DATABASE_PATH/s);
    const plex = await new FakePlex().start();
    try {
      const b = backend({}, { db: missing, api: new PlexApi(plex.url, plex.token) });
      assert.deepEqual(await b.resolveSection('/data/TV2/Show'), { id: '2', title: 'TV', location: '/data/TV2' });
    } finally {
      await plex.stop();
    }
  });

  after(() => {
    process.env.PATH = savedPath;
  });
});
