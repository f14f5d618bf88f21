import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { importAutopulse } from '../../../src/peers/autopulse/import.ts';
import { applyAutopulseEnv } from '../../../src/peers/autopulse/import-source.ts';
import { UserError } from '../../../src/core/errors.ts';
import { loadConfigFile } from '../../../src/config/load.ts';
import { ROOT, runCli, spawnRelay, tempDir } from '../../helpers/relay.ts';

const FIX = join(ROOT, 'test', 'fixtures', 'autopulse');
const imp = (file: string, env: NodeJS.ProcessEnv = {}) => importAutopulse(readFileSync(join(FIX, file), 'utf8'), file, env);
type Obj = Record<string, any>;

/*
 * autopulse's config: crates/service/src/settings/{mod,app,auth,opts}.rs, targets/*.rs, triggers/*.rs,
 * webhooks/*.rs at dan-online/autopulse 55124fd. Fixtures: its example/config.yaml uncommented, its README's
 * examples (README.md:159-262), and one config with every section written as TOML, YAML and JSON.
 */
describe("importAutopulse: autopulse's example/config.yaml", () => {
  const r = imp('example-config.yaml');
  const c = r.config as Obj;

  test('app: host, port, and a PostgreSQL database_url becomes the shared queue', () => {
    assert.equal(c.SERVER_IP, '0.0.0.0');
    assert.equal(c.SERVER_PORT, 2875);
    assert.equal(c.SERVER_QUEUE_URL, 'postgres://autopulse:autopulse@localhost:5432/autopulse');
  });

  test("auth: the default admin/password is carried with a loud warning (auth.rs:16-24)", () => {
    assert.equal(c.SERVER_AUTH_USER, 'admin');
    assert.equal(c.SERVER_AUTH_PASS, 'password');
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0]!, /DEFAULT username and password \(admin \/ password\)/);
  });

  test('opts: check_path on turns file checks on; default_timer_wait (60 by default) is the delay', () => {
    assert.equal(c.SERVER_FILE_CHECKS_ENABLED, true);
    // runner.rs:37-48, 159-167: no target gets a row before its file was found; the bound is cleanup_days (10 by
    // default, opts.rs:78), after which autopulse deletes rows still not found (runner.rs:332-347).
    assert.deepEqual(c.SERVER_WAIT_FOR_FILES, { ENABLED: true, FIRST_CHECK_DELAY: 1, MAX_CHECK_DELAY: 60, GIVE_UP_AFTER: 864_000 });
    assert.ok(r.carried.some((l) => l.startsWith('opts.check_path -> SERVER_WAIT_FOR_FILES: no target (Plex, Jellyfin, Emby, commands, Tdarr, the forward target ...) gets a scan before its files are on this machine') && l.includes('within 10 days (GIVE_UP_AFTER 864000, from opts.cleanup_days 10) fails')), r.carried.join('\n'));
    assert.ok(r.notCarried.some((n) => n.startsWith('opts.check_path: autopulse looks every second and never gives up')));
    assert.equal(c.SERVER_SCAN_DELAY, 60);
    assert.ok(r.notCarried.some((n) => n.startsWith('opts.max_retries (5)')));
    assert.ok(r.notCarried.some((n) => n.startsWith('opts.log_file:')));
  });

  test('triggers: sonarr with its rewrite, and manual added as autopulse adds it (settings/mod.rs:346-357)', () => {
    assert.deepEqual(c.SERVER_AUTOPULSE_TRIGGERS, {
      sonarr: { TYPE: 'sonarr', REWRITE: [{ from: '/orig/tv', to: '/new/tv' }] },
      manual: { TYPE: 'manual' },
    });
    assert.deepEqual(c.SERVER_AUTOSCAN_TRIGGERS, {}, "autoscan's routes give /triggers/ to autopulse's");
  });

  test('targets: plex (analyze and refresh off, as autopulse), jellyfin, a raw command', () => {
    assert.deepEqual(c.TARGETS.plex, {
      TYPE: 'plex',
      URL: 'http://plex:32400',
      TOKEN: 'your-plex-token',
      SCAN_METHOD: 'api',
      ANALYZE_TYPE: 'off',
      REFRESH_METADATA: false,
      EMPTY_TRASH: false,
      REQUEST: { TIMEOUT: 10, VERIFY_SSL: true, HEADERS: {} },
    });
    assert.equal(c.PLEX_ENABLED, false, 'no second, unnamed plex target');
    assert.deepEqual(c.TARGETS.jellyfin, { TYPE: 'jellyfin', URL: 'http://jellyfin:8096', API_KEY: 'your-jellyfin-token', REQUEST: { TIMEOUT: 10, VERIFY_SSL: true, HEADERS: {} } });
    assert.equal(c.TARGETS.list.TYPE, 'command');
    assert.equal(c.TARGETS.list.TIMEOUT, 10);
    assert.ok(r.notCarried.some((n) => /targets\.plex: analyze is off/.test(n)), 'the default that differs is said');
  });

  test('webhooks: discord, hookshot, and json keeping autopulse\'s document (FORMAT "autopulse")', () => {
    assert.deepEqual(Object.keys(c.NOTIFICATIONS), ['discord', 'hookshot', 'json']);
    assert.equal(c.NOTIFICATIONS.json.FORMAT, 'autopulse');
    assert.equal(c.NOTIFICATIONS.discord.FORMAT, undefined);
    assert.equal(c.NOTIFICATIONS.hookshot.BATCH_SECONDS, 10);
  });
});

describe("importAutopulse: the README's examples", () => {
  const r = imp('readme.yaml');
  const c = r.config as Obj;

  test('no warning for chosen credentials', () => {
    assert.deepEqual(r.warnings, []);
    assert.equal(c.SERVER_AUTH_USER, 'terry');
  });

  test('every trigger type keeps its rewrite and filter; notify becomes the folder watcher', () => {
    const t = c.SERVER_AUTOPULSE_TRIGGERS;
    assert.deepEqual(t.my_sonarr, { TYPE: 'sonarr', REWRITE: [{ from: '/downloads', to: '/tvshows' }], EXCLUDE: ['^/tvshows/extras/'] });
    assert.equal(t.my_sportarr.TYPE, 'sportarr');
    assert.deepEqual(t.my_manual, { TYPE: 'manual', REWRITE: [{ from: '/downloads', to: '/' }] });
    assert.ok(t.manual, 'the default manual trigger too');
    assert.equal(t.my_notify, undefined);
    assert.deepEqual(c.WATCH, { ENABLED: true, PATHS: [{ PATH: '/watch', REWRITE: [{ from: '/watch', to: '/media' }] }], POLL: false });
    assert.ok(r.notCarried.some((n) => n.startsWith('triggers.my_notify: autopulse reported every file')));
  });

  test('several targets of one kind, each with its own rewrite and filter', () => {
    assert.deepEqual(Object.keys(c.TARGETS), ['my_plex', 'my_different_plex', 'my_jellyfin', 'my_audiobookshelf', 'my_command']);
    assert.deepEqual(c.TARGETS.my_different_plex.REWRITE, [{ from: '/media', to: '/plex' }]);
    assert.equal(c.TARGETS.my_different_plex.URL, 'http://plex:32401');
    assert.deepEqual(c.TARGETS.my_audiobookshelf, {
      TYPE: 'audiobookshelf',
      URL: 'http://audiobookshelf:13378',
      TOKEN: '<your_token>',
      INCLUDE: ['^/audiobooks/'],
      EXCLUDE: ['/samples/'],
      REQUEST: { TIMEOUT: 10, VERIFY_SSL: true, HEADERS: {} },
    });
  });

  test("a raw command runs with FILE_PATH set to each path, as autopulse's sh -c (command.rs:65-68)", async () => {
    const argv = c.TARGETS.my_command.COMMAND as string[];
    const dir = tempDir('autopulse-cmd-');
    const { runProcess } = await import('../../helpers/relay.ts');
    const shown = argv.map((a) => a.replace('list.txt', join(dir, 'list.txt')));
    const res = await runProcess(shown[0]!, [...shown.slice(1), '/tv/A', '/tv/B'], { cwd: dir });
    assert.equal(res.code, 0, res.out);
    assert.equal(readFileSync(join(dir, 'list.txt'), 'utf8'), '/tv/A\n/tv/B\n');
  });

  test('discord mentions: here, a role, a user on failed/hash_mismatch, everyone on any event; each entry keeps its own events (discord.rs:239-241)', () => {
    assert.deepEqual(c.NOTIFICATIONS.my_discord_with_mentions.MENTIONS, [
      { ON: ['failed'], USERS: ['9876543210'], ROLES: ['1234567890'], HERE: true, EVERYONE: false },
      { ON: ['scanned', 'removed', 'failed', 'retrying', 'waiting', 'recovered'], USERS: [], ROLES: [], HERE: false, EVERYONE: true },
    ]);
    assert.ok(!r.notCarried.some((n) => n.includes('merged')), 'nothing is merged');
  });

  test('the same README as JSON imports the same', () => {
    const j = imp('readme.json').config as Obj;
    assert.deepEqual({ ...j, SERVER_PASS: '' }, { ...c, SERVER_PASS: '' });
  });
});

describe('importAutopulse: one config in each format', () => {
  const toml = imp('full.toml');
  const c = toml.config as Obj;

  test('TOML, YAML (.yml) and JSON give the same scanrelay config', () => {
    for (const f of ['full.yml', 'full.json']) assert.deepEqual({ ...(imp(f).config as Obj), SERVER_PASS: '' }, { ...c, SERVER_PASS: '' }, f);
  });

  test('every target kind, with request options, maps to its TYPE', () => {
    assert.deepEqual(
      Object.fromEntries(Object.entries(c.TARGETS as Obj).map(([n, t]) => [n, t.TYPE])),
      { plex: 'plex', emby: 'emby', tdarr: 'tdarr', sonarr: 'sonarr', radarr: 'radarr', flows: 'fileflows', abs: 'audiobookshelf', script: 'command', peer: 'relay' },
    );
    assert.deepEqual(c.TARGETS.plex.REQUEST, { TIMEOUT: 30, VERIFY_SSL: false, HEADERS: { 'X-Custom': 'v' } });
    assert.equal(c.TARGETS.plex.ANALYZE_TYPE, 'basic');
    assert.equal(c.TARGETS.plex.REFRESH_METADATA, true);
    assert.equal(c.TARGETS.tdarr.DB_ID, 'lib1');
    assert.equal(c.TARGETS.sonarr.API_KEY, 'sonarr-key');
    assert.deepEqual(c.TARGETS.script, { TYPE: 'command', COMMAND: ['/scripts/on-scan.sh'], TIMEOUT: 5 });
    assert.deepEqual(
      { PEER: c.TARGETS.peer.PEER, TRIGGER: c.TARGETS.peer.TRIGGER, USERNAME: c.TARGETS.peer.USERNAME, PASSWORD: c.TARGETS.peer.PASSWORD },
      { PEER: 'autopulse', TRIGGER: 'incoming', USERNAME: 'a', PASSWORD: 'b' },
    );
  });

  test('triggers: timer, event timers, excludes; the longest wait caps the delay', () => {
    assert.deepEqual(c.SERVER_AUTOPULSE_TRIGGERS.sonarr, {
      TYPE: 'sonarr',
      REWRITE: [{ from: '^/tv/', to: '/media/tv/' }, { from: '/media/tv/Old', to: '/media/tv/New' }],
      DELAY: 10,
      EXCLUDE_TARGETS: ['abs'],
      EVENT_DELAYS: { download: 5, seriesdelete: 2 },
    });
    assert.deepEqual(c.SERVER_AUTOPULSE_TRIGGERS.radarr, { TYPE: 'radarr', INCLUDE: ['^/movies/'], EXCLUDE: ['/extras/'] });
    assert.equal(c.SERVER_AUTOPULSE_TRIGGERS.scan.TYPE, 'autoscan');
    assert.equal(c.SERVER_SCAN_DELAY, 30);
    assert.equal(c.SERVER_SCAN_DELAY_MAX, 30);
    // filters match the watched path before the rewrite (notify.rs:106-119): WATCH.INCLUDE, tried first on the local path.
    assert.deepEqual(c.WATCH.PATHS, [{ PATH: '/downloads/complete' }]);
    assert.deepEqual(c.WATCH.INCLUDE, ['\\.mkv$']);
    assert.equal(c.WATCH.POLL, true);
  });

  test('opts, anchors and a SQLite database: what is carried and what is said', () => {
    assert.equal(c.SERVER_FILE_CHECKS_ENABLED, false);
    assert.deepEqual(c.SERVER_ANCHOR_FILES, ['/mnt/media/anchor']);
    assert.equal(c.SERVER_QUEUE_URL, undefined);
    assert.equal(toml.databaseUrl, 'sqlite://data/autopulse.db');
    assert.equal(c.NOTIFICATIONS.hook.BATCH_SECONDS, 20);
    assert.equal(c.SERVER_AUTOPULSE_CLEANUP_DAYS, 7, 'how long a request held for its hash waits (runner.rs:332-347)');
    for (const key of ['app.database_url', 'app.log_level', 'opts.check_path', 'opts.cleanup_days', 'timers:']) {
      assert.ok(toml.notCarried.some((n) => n.startsWith(key)), key);
    }
  });
});

describe('AUTOPULSE__ environment and __FILE secrets (settings/mod.rs:233-255, 300-316)', () => {
  test('env overrides the file, lower-cased and split on "__"; a __FILE secret wins over both', () => {
    const dir = tempDir('autopulse-env-');
    writeFileSync(join(dir, 'password'), 'from-file\n');
    const r = imp('readme.yaml', {
      AUTOPULSE__APP__PORT: '9000',
      AUTOPULSE__AUTH__PASSWORD: 'from-env',
      AUTOPULSE__AUTH__PASSWORD__FILE: join(dir, 'password'),
      AUTOPULSE__APP__DATABASE_URL: 'postgres://u:p@db/autopulse',
      AUTOPULSE__TARGETS__MY_PLEX__TOKEN: 'env-token',
      AUTOPULSE__OPTS__CHECK_PATH: 'true',
      OTHER__AUTH__PASSWORD: 'ignored',
    });
    const c = r.config as Obj;
    assert.equal(c.SERVER_PORT, 9000);
    assert.equal(c.SERVER_AUTH_PASS, 'from-file');
    assert.equal(c.SERVER_QUEUE_URL, 'postgres://u:p@db/autopulse');
    assert.equal(c.TARGETS.my_plex.TOKEN, 'env-token');
    assert.equal(c.SERVER_FILE_CHECKS_ENABLED, true);
  });

  test('a Docker user with no file at all: a target and a trigger from the environment alone', () => {
    const doc = {};
    applyAutopulseEnv(doc, { AUTOPULSE__TRIGGERS__SONARR__TYPE: 'sonarr', AUTOPULSE__TARGETS__PLEX__TYPE: 'plex', AUTOPULSE__TARGETS__PLEX__URL: 'http://plex:32400' });
    assert.deepEqual(doc, { triggers: { sonarr: { type: 'sonarr' } }, targets: { plex: { type: 'plex', url: 'http://plex:32400' } } });
  });

  test('a missing secret file is a clear error', () => {
    assert.throws(() => imp('readme.yaml', { AUTOPULSE__AUTH__PASSWORD__FILE: '/nonexistent/secret' }), (e: Error) => e instanceof UserError && /AUTOPULSE__AUTH__PASSWORD__FILE/.test(e.message));
  });
});

describe('rewrites: a list of rules keeps its meaning (utils/src/rewrite.rs:76-85, every rule in turn)', () => {
  test('a target or a notify trigger with two or more rules gets REWRITE_MODE "all"; one rule needs none', () => {
    const r = importAutopulse(
      [
        'targets:',
        '  jf:',
        '    type: jellyfin',
        '    url: http://127.0.0.1:1',
        '    token: k',
        '    rewrite:',
        '      - from: ^/downloads/',
        '        to: /media/',
        '      - from: ^/media/tv/(.*)$',
        '        to: /data/TV/$1',
        '  plex:',
        '    type: plex',
        '    url: http://127.0.0.1:2',
        '    rewrite: { from: /media, to: /plex }',
        'triggers:',
        '  w:',
        '    type: notify',
        '    paths: [/watch]',
        '    rewrite: [{ from: /watch, to: /media }, { from: ^/media/tv/, to: /data/TV/ }]',
        '',
      ].join('\n'),
      'c.yaml',
      {},
    );
    const c = r.config as Obj;
    assert.equal(c.TARGETS.jf.REWRITE_MODE, 'all');
    assert.equal(c.TARGETS.plex.REWRITE_MODE, undefined);
    assert.equal(c.WATCH.PATHS[0].REWRITE_MODE, 'all');
    assert.ok(!r.notCarried.some((n) => /rewrite/.test(n)), 'nothing about rewrites is left to the user');
  });
});

describe('bad input: a clear error naming the key', () => {
  const bad = (text: string, file = 'c.yaml') => () => importAutopulse(text, file, {});
  test('an unknown target type', () => assert.throws(bad('targets:\n  x:\n    type: kodi\n    url: http://k'), /targets\.x\.type: unknown target type "kodi"/));
  test('an unknown trigger type', () => assert.throws(bad('triggers:\n  x:\n    type: plex'), /triggers\.x\.type: unknown trigger type/));
  test('a command with both path and raw', () => assert.throws(bad('targets:\n  c:\n    type: command\n    path: /a\n    raw: b'), /both path and raw/));
  test('an unsupported extension', () => assert.throws(bad('', 'c.ini'), /unsupported config format "ini"/));
  test('broken TOML', () => assert.throws(bad('[app', 'c.toml'), /c\.toml is not valid TOML/));
  test('auth disabled: the routes need credentials, and that is said', () => {
    const r = importAutopulse('auth:\n  enabled: false\n', 'c.yaml', {});
    assert.equal((r.config as Obj).SERVER_AUTH_USER, '');
    assert.ok(r.notCarried.some((n) => n.startsWith('auth.enabled: false')));
  });
});

describe('scanrelay import-autopulse (CLI)', () => {
  test('writes a config the relay loads, prints carried, differences and the warning; refuses to overwrite without --force', async () => {
    const dir = tempDir('autopulse-cli-');
    const out = join(dir, 'config.json');
    const first = await runCli(['import-autopulse', join(FIX, 'example-config.yaml'), '--config', out]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^wrote /);
    assert.match(first.stdout, /carried over:\n {2}- app\.hostname/);
    assert.match(first.stdout, /what differs from autopulse \(read each line\):/);
    assert.match(first.stdout, /!!! auth: autopulse's DEFAULT username and password/);
    const loaded = loadConfigFile(out, {}).config;
    assert.equal(loaded.SERVER_PORT, 2875);
    assert.deepEqual(Object.keys(loaded.SERVER_AUTOPULSE_TRIGGERS).sort(), ['manual', 'sonarr']);
    const again = await runCli(['import-autopulse', join(FIX, 'example-config.yaml'), '--config', out]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /exists and was left as it is/);
  });

  test('issue 47 item 10: the PostgreSQL URL of app.database_url is printed without its password', async () => {
    const dir = tempDir('autopulse-cli-');
    const yaml = join(dir, 'config.yaml');
    writeFileSync(yaml, 'app:\n  database_url: postgres://autopulse:Hunter2-pw@db.lan:5432/autopulse\n');
    const run = await runCli(['import-autopulse', yaml, '--config', join(dir, 'config.json')]);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(!run.stdout.includes('Hunter2-pw'), run.stdout);
    assert.match(run.stdout, /--database postgres:\/\/autopulse:\*\*\*@db\.lan:5432\/autopulse/);
  });

  test("issue 47 item 4: the summary says the default admin/password is limited to home addresses; --new-password writes a strong one and says what to change in each *arr", async () => {
    const dir = tempDir('autopulse-cli-');
    const out = join(dir, 'config.json');
    const plain = await runCli(['import-autopulse', join(FIX, 'example-config.yaml'), '--config', out]);
    assert.match(plain.stdout, /accepted only from loopback and private addresses: run again with --new-password/);
    const run = await runCli(['import-autopulse', join(FIX, 'example-config.yaml'), '--config', out, '--force', '--new-password']);
    assert.equal(run.code, 0, run.stderr);
    const written = JSON.parse(readFileSync(out, 'utf8')) as Obj;
    assert.equal(written.SERVER_AUTH_USER, 'admin');
    assert.notEqual(written.SERVER_AUTH_PASS, 'password');
    assert.ok(written.SERVER_AUTH_PASS.length >= 20 && /^[A-Za-z0-9_-]+$/.test(written.SERVER_AUTH_PASS), written.SERVER_AUTH_PASS);
    assert.ok(run.stdout.includes(`SERVER_AUTH_PASS is now a new random password: ${written.SERVER_AUTH_PASS}`));
    assert.match(run.stdout, new RegExp(`Sonarr: Settings > Connect > the Webhook connection http://<this host>:2875/triggers/sonarr: Username admin, Password ${written.SERVER_AUTH_PASS}`));
    assert.match(run.stdout, /every script or tool that calls http:\/\/<this host>:2875\/triggers\/manual/);
    assert.doesNotMatch(run.stdout, /DEFAULT username and password|accepted only from loopback/);
    // Another run: another password.
    const again = await runCli(['import-autopulse', join(FIX, 'example-config.yaml'), '--config', out, '--force', '--new-password']);
    assert.notEqual((JSON.parse(readFileSync(out, 'utf8')) as Obj).SERVER_AUTH_PASS, written.SERVER_AUTH_PASS, again.stdout);
  });

  test("the written config starts the relay, which answers autopulse's sonarr webhook on /triggers/sonarr", async () => {
    const dir = tempDir('autopulse-e2e-');
    const out = join(dir, 'config.json');
    const imported = await runCli(['import-autopulse', join(FIX, 'full.toml'), '--config', out]);
    assert.equal(imported.code, 0, imported.stderr);
    // A free port on loopback for the test; everything else as written.
    writeFileSync(out, JSON.stringify({ ...JSON.parse(readFileSync(out, 'utf8')), SERVER_PORT: 0, SERVER_IP: '127.0.0.1' }));
    const relay = await spawnRelay({ dir, configPath: out });
    try {
      const res = await fetch(`${relay.base}/triggers/sonarr`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from('pulse:s3cret').toString('base64')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ eventType: 'Download', episodeFile: { relativePath: 'Season 1/e1.mkv' }, series: { path: '/tv/Show' } }),
      });
      assert.equal(res.status, 200);
      const events = (await res.json()) as Array<{ file_path: string; event_source: string }>;
      // full.toml's sonarr rewrite: "^/tv/" -> "/media/tv/", then "/media/tv/Old" -> "/media/tv/New", in turn.
      assert.deepEqual(events.map((e) => [e.event_source, e.file_path]), [['sonarr', '/media/tv/Show/Season 1/e1.mkv']]);
      const wrong = await fetch(`${relay.base}/triggers/sonarr`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      assert.equal(wrong.status, 401);
    } finally {
      await relay.kill();
    }
  });
});

describe('docs/autopulse.md', () => {
  test('the worked example is what import-autopulse writes', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'autopulse.md'), 'utf8');
    const toml = /```toml\n([\s\S]*?)```/.exec(doc)![1]!;
    const shown = JSON.parse(/```json\n(\{\n[\s\S]*?)```/.exec(doc)![1]!) as Obj;
    const r = importAutopulse(toml, 'config.toml', {});
    const written = Object.fromEntries(Object.keys(shown).map((k) => [k, (r.config as Obj)[k]]));
    assert.deepEqual(written, shown);
    assert.equal(r.notCarried.length, 5, 'five differences, as the page says');
  });
});
