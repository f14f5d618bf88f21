import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { goDurationSeconds, importAutoscan } from '../../src/config/autoscan-import.ts';
import { UserError } from '../../src/config/errors.ts';
import { parseConfig } from '../../src/config/load.ts';
import { buildTestApp } from '../helpers/app.ts';
import { ROOT, runCli, tempDir } from '../helpers/relay.ts';

const YML = join(ROOT, 'test', 'fixtures', 'autoscan', 'config.yml');

/* autoscan's config format: cmd/autoscan/main.go (config struct, defaults port 3030, minimum-age 10m), the README's examples. */
describe('goDurationSeconds: Go durations as autoscan writes minimum-age', () => {
  const cases: Array<[unknown, number | undefined]> = [
    ['10m', 600],
    ['2m30s', 150],
    ['1h', 3600],
    ['1.5h', 5400],
    ['90s', 90],
    ['500ms', 0.5],
    ['0', 0],
    ['1h2m3s', 3723],
    ['10', undefined], // a string without unit is an error in Go's time.ParseDuration
    ['ten minutes', undefined],
    ['', undefined],
    [600, 0], // a YAML integer is nanoseconds in a Go time.Duration (whole milliseconds are kept)
    [1500000000, 1.5],
  ];
  for (const [input, expected] of cases) test(JSON.stringify(input), () => assert.equal(goDurationSeconds(input), expected));
});

describe('importAutoscan', () => {
  const { config, notCarried } = importAutoscan(readFileSync(YML, 'utf8'), 'config.yml');

  test('port, minimum-age, anchors and authentication', () => {
    assert.equal(config.SERVER_PORT, 3131);
    assert.equal(config.SERVER_SCAN_DELAY, 150);
    assert.deepEqual(config.SERVER_ANCHOR_FILES, ['/mnt/unionfs/gdrive.anchor', '/mnt/unionfs/onedrive.anchor']);
    assert.equal(config.SERVER_AUTH_USER, 'relay');
    assert.equal(config.SERVER_AUTH_PASS, 's3cret word');
    assert.equal(config.SERVER_ALLOW_MANUAL_SCAN, true);
  });

  test("triggers: names become routes; priorities turn round (autoscan: higher first; scanrelay: lowest first)", () => {
    assert.deepEqual(config.SERVER_AUTOSCAN_TRIGGERS, { manual: -3, radarr: -2, radarr4k: -5, 'sonarr-docker': -1 });
  });

  test("rewrites: the triggers' rules, then the first target's, in that order", () => {
    assert.deepEqual(config.SERVER_PATH_REWRITES, [
      { from: '^/Media/', to: '/mnt/unionfs/Media/' },
      { from: '^/tv/(.*)$', to: '/mnt/unionfs/Media/TV/$1' },
      { from: '^/mnt/unionfs/Media/', to: '/data/' },
    ]);
  });

  test('targets: plex, jellyfin and emby with url and token', () => {
    assert.equal(config.PLEX_ENABLED, true);
    assert.equal(config.PLEX_LOCAL_URL, 'http://plex.lan:32400');
    assert.equal(config.PLEX_TOKEN, 'plex-token-123');
    assert.equal(config.PLEX_SCAN_METHOD, 'api');
    assert.deepEqual(config.JELLYFIN, { ENABLED: true, URL: 'http://jellyfin.lan:8096', API_KEY: 'jf-key' });
    assert.deepEqual(config.EMBY, { ENABLED: true, URL: 'http://emby.lan:8096', API_KEY: 'emby-key' });
  });

  test('what could not be carried over is listed', () => {
    const text = notCarried.join('\n');
    assert.match(text, /scan-delay: not carried/);
    assert.match(text, /triggers\.inotify: not carried/);
    assert.match(text, /targets\.jellyfin\[0\]\.rewrite: not carried/);
    assert.doesNotMatch(text, /targets\.emby\[0\]\.rewrite/, "emby's rules equal plex's: nothing lost");
    assert.match(text, /applies all of them, in order, to every path/);
  });

  test('the result loads as a scanrelay config', () => {
    const loaded = parseConfig(config).config;
    assert.equal(loaded.SERVER_PATH_REWRITES.length, 3);
  });

  test("autoscan's defaults when keys are missing; no authentication is reported", () => {
    const out = importAutoscan('targets:\n  plex:\n    - url: http://localhost:32400\n      token: x\n');
    assert.equal(out.config.SERVER_PORT, 3030);
    assert.equal(out.config.SERVER_SCAN_DELAY, 600);
    assert.equal(out.config.SERVER_AUTOSCAN_TRIGGERS, undefined, 'the schema default (sonarr, radarr, lidarr, readarr) applies');
    assert.deepEqual(parseConfig(out.config).config.SERVER_AUTOSCAN_TRIGGERS, { sonarr: 0, radarr: 0, lidarr: 0, readarr: 0 });
    assert.match(out.notCarried.join('\n'), /SERVER_AUTH_USER and SERVER_AUTH_PASS/);
  });

  test('mistakes are errors naming the key', () => {
    const cases: Array<[string, RegExp]> = [
      ['minimum-age: ten minutes\n', /minimum-age: must be a duration/],
      ['port: http\n', /port: must be a port number/],
      ['triggers:\n  sonarr:\n    - priority: 1\n', /triggers\.sonarr\[0\]\.name/],
      ['triggers:\n  sonarr:\n    - name: s\n      priority: high\n', /triggers\.sonarr\[0\]\.priority/],
      ['targets:\n  plex:\n    - url: x\n      rewrite:\n        - from: ^/a\\z\n          to: c\n', /cannot be carried over.*SERVER_PATH_REWRITES\.0\.from/],
      ['port: [1\n', /not valid YAML/],
      ['- a\n- b\n', /must hold a YAML mapping/],
    ];
    for (const [yaml, message] of cases) {
      assert.throws(() => importAutoscan(yaml), (e: Error) => e instanceof UserError && message.test(e.message), yaml);
    }
  });

  test('the imported config serves the old webhook URL: only host and port change for the *arr', async () => {
    const t = await buildTestApp({ ...config, SERVER_PASS: 'x' });
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: '/triggers/sonarr-docker',
        payload: JSON.stringify({ eventType: 'Download', episodeFile: { relativePath: 'Season 1/Andor.S01E01.mkv' }, series: { path: '/tv/Andor' } }),
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('relay:s3cret word').toString('base64')}` },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().scans[0].folder, '/data/TV/Andor/Season 1');
      assert.equal(t.store.view.listOpen()[0]?.priority, -1);
    } finally {
      await t.close();
    }
  });
});

describe('scanrelay import-autoscan', () => {
  test('writes --config, prints what was not carried, and leaves an existing file alone unless --force', async () => {
    const dir = tempDir();
    const out = join(dir, 'sub', 'config.json');
    const first = await runCli(['import-autoscan', YML, '--config', out]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /wrote .*config\.json/);
    assert.match(first.stdout, /not carried over:\n {2}- /);
    const written = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(written.SERVER_PORT, 3131);

    writeFileSync(out, '{"SERVER_PORT": 1}');
    const again = await runCli(['import-autoscan', YML, '--config', out]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /exists and was left as it is: pass --force/);
    assert.equal(readFileSync(out, 'utf8'), '{"SERVER_PORT": 1}');

    const forced = await runCli(['import-autoscan', YML, '--config', out, '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(JSON.parse(readFileSync(out, 'utf8')).SERVER_PORT, 3131);
  });

  test('a missing or invalid file is a one-line error, exit 2', async () => {
    const dir = tempDir();
    const missing = await runCli(['import-autoscan', join(dir, 'nope.yml'), '--config', join(dir, 'c.json')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read/);
    const bad = join(dir, 'bad.yml');
    writeFileSync(bad, 'minimum-age: soon\n');
    const invalid = await runCli(['import-autoscan', bad, '--config', join(dir, 'c.json')]);
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /minimum-age/);
    assert.doesNotMatch(invalid.stderr, /\n\s+at /);
  });
});
