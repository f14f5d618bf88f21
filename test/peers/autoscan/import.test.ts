import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { goDurationSeconds, importAutoscan } from '../../../src/peers/autoscan/import.ts';
import { UserError } from '../../../src/core/errors.ts';
import { parseConfig } from '../../../src/config/load.ts';
import { buildTestApp } from '../../helpers/app.ts';
import { autoscanDb } from '../../helpers/autoscan-db.ts';
import { ROOT, runCli, tempDir } from '../../helpers/relay.ts';

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
    // Each trigger keeps its own rules (autoscan triggers/sonarr/sonarr.go:23-38, triggers/manual/manual.go:26-41).
    assert.deepEqual(config.SERVER_AUTOSCAN_TRIGGERS, {
      manual: { PRIORITY: -3, REWRITE: [{ from: '^/Media/', to: '/mnt/unionfs/Media/' }] },
      radarr: -2,
      radarr4k: -5,
      'sonarr-docker': { PRIORITY: -1, REWRITE: [{ from: '^/tv/(.*)$', to: '/mnt/unionfs/Media/TV/$1' }] },
    });
  });

  test("rewrites: each rule goes to the place it came from, none into the global SERVER_PATH_REWRITES", () => {
    assert.equal(config.SERVER_PATH_REWRITES, undefined);
    // Each target keeps its own (autoscan targets/plex/plex.go:35,79; targets/jellyfin/jellyfin.go:35,68).
    assert.deepEqual(config.PLEX_REWRITE, [{ from: '^/mnt/unionfs/Media/', to: '/data/' }]);
    assert.deepEqual((config.JELLYFIN as { REWRITE: unknown }).REWRITE, [{ from: '^/mnt/unionfs/Media/', to: '/media/' }]);
    assert.deepEqual((config.EMBY as { REWRITE: unknown }).REWRITE, [{ from: '^/mnt/unionfs/Media/', to: '/data/' }]);
  });

  test('two triggers with rules for the same `from` are no conflict: each keeps its own', () => {
    const out = importAutoscan(
      'triggers:\n  sonarr:\n    - name: sonarr\n      rewrite:\n        - from: ^/data/\n          to: /mnt/unionfs/Media/TV/\n' +
        '  radarr:\n    - name: radarr\n      rewrite:\n        - from: ^/data/\n          to: /mnt/unionfs/Media/Movies/\n',
    );
    const triggers = parseConfig(out.config).config.SERVER_AUTOSCAN_TRIGGERS;
    assert.deepEqual(triggers.sonarr!.REWRITE, [{ from: '^/data/', to: '/mnt/unionfs/Media/TV/' }]);
    assert.deepEqual(triggers.radarr!.REWRITE, [{ from: '^/data/', to: '/mnt/unionfs/Media/Movies/' }]);
    assert.doesNotMatch(out.notCarried.join('\n'), /conflict|not carried; scanrelay sends every target/);
  });

  test('targets: plex, jellyfin and emby with url and token', () => {
    assert.equal(config.PLEX_ENABLED, true);
    assert.equal(config.PLEX_LOCAL_URL, 'http://plex.lan:32400');
    assert.equal(config.PLEX_TOKEN, 'plex-token-123');
    assert.equal(config.PLEX_SCAN_METHOD, 'api');
    assert.deepEqual(config.JELLYFIN, { ENABLED: true, URL: 'http://jellyfin.lan:8096', API_KEY: 'jf-key', REWRITE: [{ from: '^/mnt/unionfs/Media/', to: '/media/' }] });
    assert.deepEqual(config.EMBY, { ENABLED: true, URL: 'http://emby.lan:8096', API_KEY: 'emby-key', REWRITE: [{ from: '^/mnt/unionfs/Media/', to: '/data/' }] });
  });

  test('what differs on purpose is listed: the 3x delay cap, scan-delay, the inotify trigger carried into WATCH', () => {
    const text = notCarried.join('\n');
    assert.match(text, /scan-delay: not carried/);
    assert.match(text, /never later than 3x that \(450 s\).*SERVER_SCAN_DELAY_MAX to 0/);
    assert.match(text, /triggers\.inotify: carried into WATCH/);
  });

  test('the result loads as a scanrelay config; inotify became WATCH with its path', () => {
    const loaded = parseConfig(config).config;
    assert.equal(loaded.SERVER_PATH_REWRITES.length, 0);
    assert.equal(loaded.WATCH.ENABLED, true);
    assert.deepEqual(loaded.WATCH.PATHS, [{ PATH: '/mnt/local/Media', REWRITE: [], REWRITE_MODE: 'first', INCLUDE: [], EXCLUDE: [], PRIORITY: 0 }]);
  });

  test('per-component verbosity and a missing authentication are named, with how to open the routes', () => {
    const out = importAutoscan('triggers:\n  sonarr:\n    - name: s\n      verbosity: debug\ntargets:\n  plex:\n    - url: http://x\n      token: y\n      verbosity: trace\n');
    const text = out.notCarried.join('\n');
    assert.match(text, /verbosity: autoscan set it per trigger and target \(triggers\.sonarr\[0\] \(debug\), targets\.plex\[0\] \(trace\)\).*--loglevel/);
    assert.match(text, /scanrelay keeps them closed \(404\).*To open them, set SERVER_AUTH_USER and SERVER_AUTH_PASS/);
  });

  test('inotify: each path with its own rules then the trigger\'s (autoscan triggers/inotify/inotify.go:51-68)', () => {
    const out = importAutoscan(
      'triggers:\n  inotify:\n    - priority: 2\n      include: [\'^/mnt/unionfs/Media/\']\n      exclude: [\'\\.(srt|pdf)$\']\n' +
        '      rewrite:\n        - from: ^/mnt/local/Media/\n          to: /mnt/unionfs/Media/\n' +
        '      paths:\n        - path: /mnt/local/Media\n          exclude: [\'/Samples?/\']\n          rewrite:\n            - from: ^/mnt/local/Media/Kids/\n              to: /mnt/unionfs/Media/Kids/\n',
    );
    assert.deepEqual(parseConfig(out.config).config.WATCH.PATHS, [
      {
        PATH: '/mnt/local/Media',
        REWRITE: [
          { from: '^/mnt/local/Media/Kids/', to: '/mnt/unionfs/Media/Kids/' },
          { from: '^/mnt/local/Media/', to: '/mnt/unionfs/Media/' },
        ],
        // autoscan's rewriter stops at the first rule that matches (autoscan.go:64-86).
        REWRITE_MODE: 'first',
        INCLUDE: ['^/mnt/unionfs/Media/'],
        EXCLUDE: ['/Samples?/', '\\.(srt|pdf)$'],
        PRIORITY: -2,
      },
    ]);
  });

  test('minimum-age 0: no cap to report (3x 0 is 0)', () => {
    const out = importAutoscan('minimum-age: 0s\nauthentication:\n  username: a\n  password: b\n');
    assert.doesNotMatch(out.notCarried.join('\n'), /3x/);
  });

  test('an inotify trigger without paths is named, not carried (WATCH needs a folder)', () => {
    const out = importAutoscan('triggers:\n  inotify:\n    - priority: 1\n');
    assert.equal(out.config.WATCH, undefined);
    assert.match(out.notCarried.join('\n'), /triggers\.inotify: no paths listed/);
  });

  test('bernard: the service account and the shared drive ids go to GOOGLE; each rule gets an exact instruction', () => {
    const out = importAutoscan(
      'triggers:\n  bernard:\n    - account: /config/sa.json\n      cron: "*/5 * * * *"\n      rewrite:\n        - from: ^/Media/\n          to: /mnt/unionfs/Media/\n' +
        '      drives:\n        - id: 0A1xxxxxxxxxUk9PVA\n',
    );
    const google = parseConfig(out.config).config.GOOGLE;
    assert.equal(google.ENABLED, true);
    assert.equal(google.SERVICE_ACCOUNT_FILE, '/config/sa.json');
    assert.equal(google.TEAMDRIVE, true);
    assert.deepEqual(google.TEAMDRIVES, ['0A1xxxxxxxxxUk9PVA']);
    const text = out.notCarried.join('\n');
    assert.match(text, /add to SERVER_PATH_MAPPINGS .*\{"\/mnt\/unionfs\/Media\/": \["<name of shared drive 0A1xxxxxxxxxUk9PVA>\/Media\/"\]\}/);
    assert.match(text, /cron: .* GOOGLE\.POLL_INTERVAL/);
    assert.match(text, /page cache in autoscan\.db is not taken/);
  });

  test('a-train: global and per-drive rules and the priority (autoscan triggers/a_train/a_train.go:14-24)', () => {
    const out = importAutoscan(
      'triggers:\n  a-train:\n    priority: 5\n    rewrite:\n      - from: ^/Media/\n        to: /mnt/unionfs/Media/\n' +
        '    drives:\n      - id: 0A1xxxxxxxxxUk9PVA\n        rewrite:\n          - from: ^/TV/\n            to: /mnt/unionfs/TV/\n',
    );
    assert.deepEqual(parseConfig(out.config).config.A_TRAIN, {
      PRIORITY: -5,
      REWRITE: [{ from: '^/Media/', to: '/mnt/unionfs/Media/' }],
      DRIVES: [{ ID: '0A1xxxxxxxxxUk9PVA', REWRITE: [{ from: '^/TV/', to: '/mnt/unionfs/TV/' }] }],
    });
  });

  test("autoscan's defaults when keys are missing; no authentication is reported", () => {
    const out = importAutoscan('targets:\n  plex:\n    - url: http://localhost:32400\n      token: x\n');
    assert.equal(out.config.SERVER_PORT, 3030);
    assert.equal(out.config.SERVER_SCAN_DELAY, 600);
    assert.equal(out.config.SERVER_AUTOSCAN_TRIGGERS, undefined, 'the schema default (sonarr, radarr, lidarr, readarr) applies');
    assert.deepEqual(Object.keys(parseConfig(out.config).config.SERVER_AUTOSCAN_TRIGGERS), ['sonarr', 'radarr', 'lidarr', 'readarr']);
    assert.match(out.notCarried.join('\n'), /SERVER_AUTH_USER and SERVER_AUTH_PASS/);
  });

  test('mistakes are errors naming the key', () => {
    const cases: Array<[string, RegExp]> = [
      ['minimum-age: ten minutes\n', /minimum-age: must be a duration/],
      ['port: http\n', /port: must be a port number/],
      ['triggers:\n  sonarr:\n    - priority: 1\n', /triggers\.sonarr\[0\]\.name/],
      ['triggers:\n  sonarr:\n    - name: s\n      priority: high\n', /triggers\.sonarr\[0\]\.priority/],
      ['targets:\n  plex:\n    - url: x\n      rewrite:\n        - from: ^/a(?=b)\n          to: c\n', /cannot be carried over.*PLEX_REWRITE\.0\.from: invalid regular expression "\^\/a\(\?=b\)" \(RE2 syntax\): invalid or unsupported Perl syntax/],
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
      // The queue holds the relay's own path; Plex's rule applies when Plex is sent the scan.
      assert.equal(res.json().scans[0].folder, '/mnt/unionfs/Media/TV/Andor/Season 1');
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
    assert.match(first.stdout, /what differs from autoscan \(read each line\):\n {2}- /);
    assert.doesNotMatch(first.stdout, /everything was carried over|every setting was carried over/);
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

// Issue 42 item 13. autoscan's Plex target only asks Plex to refresh the folder, GET
// /library/sections/{id}/refresh?path= for each library holding it, nothing after (Cloudbox/autoscan
// targets/plex/plex.go:77-107, targets/plex/api.go:149-167): no analyze, no wait for Plex's own scans.
describe("import-autoscan writes autoscan's behaviour, not plex_autoscan's defaults", () => {
  test('analyze off, no directory analyze, no wait for external scanners; each printed as a difference from the default', () => {
    const out = importAutoscan('targets:\n  plex:\n    - url: http://plex:32400\n      token: t\n');
    assert.equal(out.config.PLEX_ANALYZE_TYPE, 'off');
    assert.equal(out.config.PLEX_ANALYZE_DIRECTORY, false);
    assert.equal(out.config.PLEX_WAIT_FOR_EXTERNAL_SCANNERS, false);
    const { file: config } = parseConfig(out.config);
    assert.equal(config.PLEX_ANALYZE_TYPE, 'off', 'the relay then never analyzes');
    for (const key of ['PLEX_ANALYZE_TYPE', 'PLEX_ANALYZE_DIRECTORY', 'PLEX_WAIT_FOR_EXTERNAL_SCANNERS']) {
      assert.ok(out.notCarried.some((n) => n.startsWith(`${key}: `) && /plex_autoscan's default/.test(n)), `${key} is printed: ${out.notCarried.join('\n')}`);
    }
    assert.ok(out.notCarried.some((n) => /^Plex gets one scan at a time/.test(n)), 'the one-scan-at-a-time wait, which no key turns off, is printed too');
  });

  test("autoscan.db's pending rows: the command says they wait a full minimum-age from now", async () => {
    const dir = tempDir();
    const dbFile = join(dir, 'autoscan.db');
    autoscanDb(dbFile, [['/mnt/unionfs/Media/Movies/Zero (2000)', 0, '2026-11-25 10:00:00+00:00']]);
    const r = await runCli(['--config', join(dir, 'config.json'), '--queuefile', join(dir, 'queue.db'), 'import-autoscan', YML, '--database', dbFile]);
    assert.equal(r.code, 0, r.stderr);
    const delay = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).SERVER_SCAN_DELAY;
    assert.match(r.stdout, /1 queued in autoscan's priority order\n/);
    assert.match(r.stdout, new RegExp(`\\neach taken-over scan waits a full SERVER_SCAN_DELAY \\(${delay} s, autoscan's minimum-age\\) from now, not from the time autoscan recorded it\\n`));
  });
});
