import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { addMissingKeys, plexAutoscanDefaults } from '../../src/config/defaults.ts';
import { UserError } from '../../src/core/errors.ts';
import { formatConfigJson, parseConfig } from '../../src/config/load.ts';
import { scanDelayMax } from '../../src/config/schema.ts';
import { resolveScanMethod } from '../../src/targets/plex/settings.ts';
import { resolveSettings } from '../../src/config/settings.ts';
import { runCli, tempDir } from '../helpers/relay.ts';

describe('config', () => {
  test("missing keys take plex_autoscan's base_config defaults", () => {
    const { file: config } = parseConfig({});
    assert.equal(config.SERVER_PORT, 3467);
    assert.equal(config.SERVER_SCAN_DELAY, 180);
    assert.equal(config.SERVER_ALLOW_MANUAL_SCAN, false);
    assert.equal(config.USE_SUDO, true);
    assert.equal(config.PLEX_ANALYZE_TYPE, 'basic');
    assert.equal(config.PLEX_WAIT_FOR_EXTERNAL_SCANNERS, true);
    assert.equal(config.SERVER_MAX_FILE_CHECKS, 10);
    assert.equal(config.GOOGLE.POLL_INTERVAL, 120);
    assert.equal(config.GOOGLE.SHOW_CACHE_LOGS, true);
    assert.equal(config.RCLONE.RC_CACHE_REFRESH.RC_URL, 'http://localhost:5572');
    assert.equal(config.PLEX_SCANNER, '/usr/lib/plexmediaserver/Plex\\ Media\\ Scanner');
    assert.match(config.SERVER_PASS, /^[0-9a-f]{32}$/);
  });

  test('nested sections get defaults for their missing keys', () => {
    const { config } = parseConfig({ GOOGLE: { ENABLED: true, ALLOWED: { FILE_PATHS: ['My Drive/Media/'] } } });
    assert.equal(config.GOOGLE.ENABLED, true);
    assert.equal(config.GOOGLE.ALLOWED.MIME_TYPES, false);
    assert.deepEqual(config.GOOGLE.TEAMDRIVES, []);
  });

  test('CLOUD is an alias of GOOGLE; both present is an error naming them', () => {
    assert.equal(parseConfig({ CLOUD: { ENABLED: true } }).config.GOOGLE.ENABLED, true);
    assert.throws(() => parseConfig({ CLOUD: {}, GOOGLE: {} }), (e: Error) => e instanceof UserError && /GOOGLE and CLOUD/.test(e.message));
  });

  test('a wrong type names the key and what was expected', () => {
    assert.throws(
      () => parseConfig({ SERVER_PORT: 'abc' }),
      (e: Error) => e instanceof UserError && /SERVER_PORT/.test(e.message) && /number/.test(e.message),
    );
    assert.throws(() => parseConfig({ GOOGLE: { ENABLED: true, POLL_INTERVAL: 'x' } }), (e: Error) => /GOOGLE\.POLL_INTERVAL/.test(e.message));
    assert.throws(() => parseConfig({ PLEX_SCAN_METHOD: 'magic' }), (e: Error) => /PLEX_SCAN_METHOD/.test(e.message));
  });

  test('unknown and retired keys are kept aside with one warning each', () => {
    const { warnings } = parseConfig({ FOO: 1, BAR: 2, PLEX_SECTION_PATH_MAPPINGS: {}, SERVER_USE_SQLITE: false });
    assert.equal(warnings.filter((w) => /unknown config keys/.test(w)).length, 1);
    assert.ok(warnings.some((w) => /FOO, BAR/.test(w)));
    assert.ok(warnings.some((w) => /PLEX_SECTION_PATH_MAPPINGS is ignored/.test(w)));
    assert.ok(warnings.some((w) => /SERVER_USE_SQLITE is false/.test(w)));
  });

  test('an environment variable named like a key overrides it with JSON', () => {
    const { config } = parseConfig({ SERVER_PORT: 1 }, { SERVER_PORT: '4000', SERVER_PATH_MAPPINGS: '{"/a/":["/b/"]}' });
    assert.equal(config.SERVER_PORT, 4000);
    assert.deepEqual(config.SERVER_PATH_MAPPINGS, { '/a/': ['/b/'] });
    assert.throws(() => parseConfig({}, { SERVER_PORT: 'not json' }), /SERVER_PORT must hold JSON/);
  });

  test('scan method auto: api with a token, scanner without', () => {
    assert.equal(resolveScanMethod({ SCAN_METHOD: 'auto', TOKEN: 'x' }), 'api');
    assert.equal(resolveScanMethod({ SCAN_METHOD: 'auto', TOKEN: '' }), 'scanner');
    assert.equal(resolveScanMethod({ SCAN_METHOD: 'api', TOKEN: '' }), 'api');
  });

  test('SERVER_SCAN_DELAY_MAX defaults to 3x the delay; 0 means no cap', () => {
    assert.equal(scanDelayMax({ SERVER_SCAN_DELAY: 60, SERVER_SCAN_DELAY_MAX: null }), 180);
    assert.equal(scanDelayMax({ SERVER_SCAN_DELAY: 60, SERVER_SCAN_DELAY_MAX: 0 }), 0);
  });

  test('update_config adds missing keys; GOOGLE only when neither GOOGLE nor CLOUD exists', () => {
    const { merged, added } = addMissingKeys({ SERVER_PORT: 9999, CLOUD: { ENABLED: true }, MINE: 'kept' });
    assert.equal(merged.SERVER_PORT, 9999);
    assert.equal(merged.SERVER_SCAN_DELAY, 180);
    assert.equal(merged.SERVER_ALLOW_MANUAL_SCAN, false);
    assert.equal(merged.MINE, 'kept');
    assert.ok(!('GOOGLE' in merged));
    assert.ok(added.includes('SERVER_SCAN_DELAY'));
    assert.ok('GOOGLE' in addMissingKeys({}).merged);
    assert.deepEqual(Object.keys(plexAutoscanDefaults()).length, 37);
  });

  test('config JSON is written like plex_autoscan: sorted keys at every level, 2-space indent', () => {
    assert.equal(formatConfigJson({ b: 1, a: { d: [2], c: {} } }), '{\n  "a": {\n    "c": {},\n    "d": [\n      2\n    ]\n  },\n  "b": 1\n}\n');
  });
});

describe('settings precedence', () => {
  test('command line, then SCANRELAY_*, then PLEX_AUTOSCAN_*, then the default', () => {
    const env = { SCANRELAY_LOGLEVEL: 'debug', PLEX_AUTOSCAN_LOGLEVEL: 'WARN', PLEX_AUTOSCAN_QUEUEFILE: '/tmp/pa-queue.db', PLEX_AUTOSCAN_CONFIG: '/etc/pa/config.json' };
    const s = resolveSettings({ loglevel: 'TRACE' }, env);
    assert.equal(s.loglevel, 'trace');
    assert.equal(resolveSettings({}, env).loglevel, 'debug');
    assert.equal(resolveSettings({}, { PLEX_AUTOSCAN_LOGLEVEL: 'WARN' }).loglevel, 'warn');
    assert.equal(s.queuefile, '/tmp/pa-queue.db');
    assert.equal(s.config, '/etc/pa/config.json');
    assert.equal(s.cachefile, '/etc/pa/cache.db');
    assert.match(resolveSettings({}, {}).config, /config\/config\.json$/);
    assert.throws(() => resolveSettings({ loglevel: 'loud' }, {}), /--loglevel/);
  });
});

describe('CLI config handling', () => {
  test('a bad config exits with status 2 and names the key, without a stack trace', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ SERVER_PORT: 'abc' }));
    const r = await runCli(['--config', file, 'server']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /SERVER_PORT/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });

  test('invalid JSON exits 2 with the file named', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.json');
    writeFileSync(file, '{ "SERVER_PORT": ');
    const r = await runCli(['--config', file, 'map', '/x']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /not valid JSON/);
  });

  test('update_config writes the file back with the missing keys, keeping unknown ones', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ SERVER_PASS: 'abc', CUSTOM: true }));
    const r = await runCli(['--config', file, 'update_config']);
    assert.equal(r.code, 0, r.stderr);
    const written = readFileSync(file, 'utf8');
    const json = JSON.parse(written);
    assert.equal(json.SERVER_PASS, 'abc');
    assert.equal(json.CUSTOM, true);
    assert.equal(json.SERVER_PORT, 3467);
    assert.equal(json.SERVER_SCAN_DELAY, 180);
    assert.deepEqual(Object.keys(json), Object.keys(json).sort());
    assert.equal(written, formatConfigJson(json));
  });

  test('map prints the mapped path, the matched value and the folder', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/', '/mnt/media/Movies/'] } }));
    const r = await runCli(['--config', file, 'map', '/mnt/media/Movies/Heat (1995)/Heat.mkv']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /mapped:\s+\/data\/Movies\/Heat \(1995\)\/Heat\.mkv/);
    assert.match(r.stdout, /matched: "\/mnt\/media\/Movies\/" -> "\/data\/Movies\/"/);
    assert.match(r.stdout, /folder:\s+\/data\/Movies\/Heat \(1995\)\n/);
    assert.match(r.stdout, /section: none/);
  });

  test('map shows every rule that fired: each SERVER_PATH_REWRITES rule in order, then the mapping', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        SERVER_PATH_REWRITES: [
          { from: '^/tv/', to: '/mnt/unionfs/Media/TV/' },
          { from: '^/skip/', to: '/x/' },
          { from: '^/mnt/unionfs/(Media)/', to: '/mnt/local/$1/' },
        ],
        SERVER_PATH_MAPPINGS: { '/data/': ['/mnt/local/Media/'] },
      }),
    );
    const r = await runCli(['--config', file, 'map', '/tv/Dark/e1.mkv']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.deepEqual(lines.filter((l) => l.startsWith('rewrite:')), [
      'rewrite: SERVER_PATH_REWRITES[0] "^/tv/" -> "/mnt/unionfs/Media/TV/": /mnt/unionfs/Media/TV/Dark/e1.mkv',
      'rewrite: SERVER_PATH_REWRITES[2] "^/mnt/unionfs/(Media)/" -> "/mnt/local/$1/": /mnt/local/Media/TV/Dark/e1.mkv',
    ]);
    assert.match(r.stdout, /matched: "\/mnt\/local\/Media\/" -> "\/data\/"/);
    assert.match(r.stdout, /mapped:\s+\/data\/TV\/Dark\/e1\.mkv/);
    const json = JSON.parse((await runCli(['--config', file, 'map', '--json', '/tv/Dark/e1.mkv'])).stdout);
    assert.deepEqual(json.rewrites.map((f: { index: number }) => f.index), [0, 2]);
  });
});
