import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { FakeArrManage } from '../fakes/arr-manage.ts';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakePlex } from '../fakes/plex.ts';
import { CLI, ROOT, runCli, spawnRelay, tempDir, waitFor, type RelayProcess } from '../helpers/relay.ts';
import { Terminal } from '../helpers/tmux.ts';

/**
 * `scanrelay setup` against a fake Plex, a fake Sonarr and a fake Radarr whose paths differ from Plex's, with the
 * real relay running: the rewrites it writes, the one Webhook connection per *arr, the *arrs' tests reaching the
 * relay, and real Download events ending as the right Plex section scans.
 */

const SECTIONS = [
  { id: '1', title: 'Movies', type: 'movie' as const, locations: ['/data/media/Movies'] },
  { id: '2', title: 'TV Shows', type: 'show' as const, locations: ['/data/media/TV'] },
];

interface World {
  plex: FakePlex;
  sonarr: FakeArrManage;
  radarr: FakeArrManage;
  relay: RelayProcess;
  configPath: string;
}

async function world(sections = SECTIONS, relayOpts: { config?: Record<string, unknown>; env?: NodeJS.ProcessEnv } = {}): Promise<World> {
  const plex = await new FakePlex({ sections }).start();
  const sonarr = await new FakeArrManage('sonarr').start();
  const radarr = await new FakeArrManage('radarr').start();
  sonarr.rootFolders = ['/tv', '/anime'];
  sonarr.items = [{ id: 1, title: 'Show', path: '/tv/Show (2020)' }];
  radarr.rootFolders = ['/movies/'];
  radarr.items = [{ id: 7, title: 'Film', path: '/movies/Film (2020)' }];
  const dir = tempDir();
  const relay = await spawnRelay({ dir, config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_SCAN_DELAY: 1, SERVER_IGNORE_LIST: ['keep-me'], ...relayOpts.config }, ...(relayOpts.env ? { env: relayOpts.env } : {}) });
  return { plex, sonarr, radarr, relay, configPath: relay.configPath };
}

async function stop(w: World | undefined): Promise<void> {
  await w?.relay.kill();
  await Promise.all([w?.plex.stop(), w?.sonarr.stop(), w?.radarr.stop()]);
}

const flags = (w: World, extra: string[] = []) => [
  '--config', w.configPath, 'setup', '--yes',
  '--plex', w.plex.url, '--plex-token', w.plex.token,
  '--sonarr', w.sonarr.url, '--sonarr-key', w.sonarr.apiKey,
  '--radarr', w.radarr.url, '--radarr-key', w.radarr.apiKey,
  '--relay-url', w.relay.base,
  ...extra,
];

/** A port nothing listens on (a listener opened and closed again): connecting is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

const readConfig = (w: World) => JSON.parse(readFileSync(w.configPath, 'utf8')) as Record<string, any>;
const changesTo = (arr: FakeArrManage) => arr.calls.filter((c) => c.method !== 'GET');

describe('scanrelay setup --yes against a running relay', () => {
  let w: World;
  let first: { code: number | null; stdout: string; stderr: string };

  before(async () => {
    w = await world();
    w.sonarr.addConnection('Plex', 'PlexServer', true);
    w.radarr.addConnection('Jellyfin', 'MediaBrowser', true);
    first = await runCli(flags(w), { cwd: ROOT, timeoutMs: 120_000 });
  });
  after(() => stop(w));

  test('writes each *arr trigger\'s rewrite from its root folder to the Plex library location, keeping every other key (mode 600)', () => {
    assert.equal(first.code, 0, first.stderr + first.stdout);
    const c = readConfig(w);
    assert.deepEqual(c.SERVER_AUTOSCAN_TRIGGERS.sonarr.REWRITE, [{ from: '^/tv(/|$)', to: '/data/media/TV${1}' }]);
    assert.deepEqual(c.SERVER_AUTOSCAN_TRIGGERS.radarr.REWRITE, [{ from: '^/movies(/|$)', to: '/data/media/Movies${1}' }]);
    // The other triggers and keys are as they were.
    assert.deepEqual(c.SERVER_AUTOSCAN_TRIGGERS.lidarr, { PRIORITY: 0, REWRITE: [] });
    assert.deepEqual(c.SERVER_IGNORE_LIST, ['keep-me']);
    assert.equal(c.SERVER_PASS, 'test-secret');
    assert.equal(c.SERVER_SCAN_DELAY, 1);
    assert.ok(c.SERVER_AUTH_USER && c.SERVER_AUTH_PASS, 'the /triggers/ routes need credentials');
    assert.equal(statSync(w.configPath).mode & 0o777, 0o600);
    // The file's own key order, not sorted (SERVER_SCAN_PRIORITIES is read in the text's order).
    assert.deepEqual(Object.keys(c).slice(0, 3), ['SERVER_PORT', 'SERVER_IP', 'SERVER_PASS']);
    assert.match(first.stdout, /Sonarr root \/tv -> TV Shows \/data\/media\/TV: rewrite/);
    assert.match(first.stdout, /e\.g\. \/tv\/Show \(2020\) -> \/data\/media\/TV\/Show \(2020\)/);
    assert.match(first.stdout, /No restart needed/);
  });

  test('a root folder no library holds is one line, and gets no rewrite', () => {
    const lines = first.stdout.split('\n').filter((l) => l.includes('/anime'));
    assert.equal(lines.length, 2, lines.join('\n')); // the root folder list, and the one line about it
    assert.match(lines[1]!, /Sonarr root \/anime: no library holds it .*; no rewrite$/);
    assert.ok(!JSON.stringify(readConfig(w).SERVER_AUTOSCAN_TRIGGERS).includes('anime'));
  });

  test('one Webhook connection per *arr: POST to its trigger route with the relay\'s credentials, import/upgrade/rename/delete on', () => {
    const c = readConfig(w);
    for (const [arr, name] of [[w.sonarr, 'sonarr'], [w.radarr, 'radarr']] as const) {
      const hooks = arr.webhooks();
      assert.equal(hooks.length, 1);
      const value = (n: string) => hooks[0]!.fields.find((f) => f.name === n)?.value;
      assert.equal(value('url'), `${w.relay.base}/triggers/${name}`);
      assert.equal(value('method'), 1);
      assert.equal(value('username'), c.SERVER_AUTH_USER);
      assert.equal(value('password'), c.SERVER_AUTH_PASS);
      assert.equal(hooks[0]!.onDownload, true);
      assert.equal(hooks[0]!.onUpgrade, true);
      assert.equal(hooks[0]!.onRename, true);
      assert.equal(hooks[0]!.onGrab, false);
      assert.equal(hooks[0]!.onHealthIssue, false);
    }
    assert.equal(w.sonarr.webhooks()[0]!.onEpisodeFileDelete, true);
    assert.equal(w.sonarr.webhooks()[0]!.onSeriesDelete, true);
    assert.equal(w.radarr.webhooks()[0]!.onMovieFileDelete, true);
  });

  test("each *arr's test reached the relay (the save's test and setup's own POST notification/test)", () => {
    for (const arr of [w.sonarr, w.radarr]) {
      const tests = arr.sent.filter((s) => s.payload.eventType === 'Test');
      assert.equal(tests.length, 2, JSON.stringify(tests));
      assert.ok(tests.every((t) => t.status === 200), JSON.stringify(tests));
      assert.equal(arr.callsTo('POST', '/api/v3/notification/test').length, 1);
    }
    assert.match(first.stdout, /Sonarr: the relay received the test/);
    assert.match(first.stdout, /a real import of \/tv\/Show \(2020\) would scan \/data\/media\/TV\/Show \(2020\) in library TV Shows/);
    assert.match(first.stdout, /a real import of \/movies\/Film \(2020\) would scan \/data\/media\/Movies\/Film \(2020\) in library Movies/);
  });

  test("without --disable-arr-library-update the *arrs' own media-server connections are left alone, and setup says each import scans twice", () => {
    assert.equal(w.sonarr.connections.find((c) => c.name === 'Plex')!.fields.find((f) => f.name === 'updateLibrary')!.value, true);
    assert.equal(w.radarr.connections.find((c) => c.name === 'Jellyfin')!.fields.find((f) => f.name === 'updateLibrary')!.value, true);
    assert.match(first.stdout, /Sonarr's connection "Plex" \(PlexServer\) still updates the library: each import will be scanned twice/);
    assert.match(first.stdout, /Radarr's connection "Jellyfin" \(MediaBrowser\) still updates the library/);
    assert.ok(!changesTo(w.sonarr).some((c) => c.method === 'PUT'), 'no connection was changed');
  });

  test('real Download events from Sonarr and Radarr end as scans of the right Plex sections and folders', async () => {
    const mark = w.plex.refreshes().length;
    const sent = [...(await w.sonarr.importFile(1, 'Season 01/Show - S01E01.mkv')), ...(await w.radarr.importFile(7, 'Film (2020).mkv'))];
    assert.deepEqual(sent.map((s) => s.status), [200, 200]);
    await waitFor(() => w.plex.refreshes().length >= mark + 2, 60_000, 'two Plex scans');
    assert.deepEqual(
      w.plex.refreshes().slice(mark).map((r) => [r.section, r.path]).sort(),
      [['1', '/data/media/Movies/Film (2020)'], ['2', '/data/media/TV/Show (2020)/Season 01']],
    );
  });

  test('a rerun with --disable-arr-library-update: still one Webhook per *arr, the same config, and Update Library off', async () => {
    const before = readFileSync(w.configPath, 'utf8');
    const again = await runCli(flags(w, ['--disable-arr-library-update']), { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(again.code, 0, again.stderr + again.stdout);
    assert.equal(w.sonarr.webhooks().length, 1);
    assert.equal(w.radarr.webhooks().length, 1);
    assert.equal(readFileSync(w.configPath, 'utf8'), before);
    assert.equal(w.sonarr.connections.find((c) => c.name === 'Plex')!.fields.find((f) => f.name === 'updateLibrary')!.value, false);
    assert.equal(w.radarr.connections.find((c) => c.name === 'Jellyfin')!.fields.find((f) => f.name === 'updateLibrary')!.value, false);
    assert.match(again.stdout, /Sonarr's connection "Plex" \(PlexServer\): updateLibrary set to false/);
    assert.match(again.stdout, /updated connection "scanrelay"/);
  });
});

describe('scanrelay setup: what the running relay cannot take without a restart', () => {
  let w: World;
  let other: FakePlex;
  before(async () => {
    w = await world();
    other = await new FakePlex({ sections: SECTIONS }).start();
  });
  after(async () => {
    await stop(w);
    await other.stop();
  });

  test('a new Plex URL is written, and setup ends by saying plainly that the relay must be restarted for it', async () => {
    const args = flags(w);
    args[args.indexOf(w.plex.url)] = other.url;
    args[args.indexOf(w.plex.token)] = other.token;
    const run = await runCli(args, { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.equal(readConfig(w).PLEX_LOCAL_URL, other.url);
    assert.match(run.stdout, /the relay loaded SERVER_AUTOSCAN_TRIGGERS, SERVER_AUTH_USER, SERVER_AUTH_PASS without a restart/);
    assert.match(run.stdout.trim().split('\n').pop()!, /^Done\. Restart the relay: it reads PLEX_LOCAL_URL only when it starts\.$/);
  });
});

describe('scanrelay setup with a relay that cannot reload (it runs with another secret than the file has)', () => {
  test('its routes already take the connections: the *arrs are set up, and setup ends saying a restart is needed for the rewrites', async () => {
    const w = await world(SECTIONS, { config: { SERVER_AUTH_USER: 'relay', SERVER_AUTH_PASS: 'pass' }, env: { SCANRELAY__SERVER_PASS: 'the-running-secret' } });
    try {
      const run = await runCli(flags(w), { cwd: ROOT, timeoutMs: 120_000 });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.match(run.stdout, /the relay did not load them \(HTTP 404: not found\); its routes take the connections as they are, so setup goes on/);
      assert.match(run.stdout.trim().split('\n').pop()!, /^Done\. Restart the relay: it reads SERVER_AUTOSCAN_TRIGGERS only when it starts\.$/);
      assert.equal(w.sonarr.webhooks().length, 1);
      assert.equal(w.radarr.webhooks().length, 1);
    } finally {
      await stop(w);
    }
  });

  test('its routes would refuse the connections: one line, the config written, no *arr changed', async () => {
    const w = await world(SECTIONS, { env: { SCANRELAY__SERVER_PASS: 'the-running-secret' } });
    try {
      const run = await runCli(flags(w), { cwd: ROOT, timeoutMs: 120_000 });
      assert.equal(run.code, 2);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.match(run.stderr, /did not load the new triggers \(HTTP 404: not found\) and its route http:\/\/127\.0\.0\.1:\d+\/triggers\/sonarr answers HTTP 404: .* was written, no \*arr was changed; restart the relay, then run setup again/);
      assert.deepEqual([...changesTo(w.sonarr), ...changesTo(w.radarr)], []);
    } finally {
      await stop(w);
    }
  });
});

describe('scanrelay setup: nothing changes on a dry run or bad input', () => {
  let w: World;
  before(async () => {
    w = await world();
  });
  after(() => stop(w));

  test('--dry-run prints the plan, writes nothing and makes only GET requests', async () => {
    const before = readFileSync(w.configPath, 'utf8');
    const run = await runCli(flags(w, ['--dry-run', '--disable-arr-library-update']), { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.equal(readFileSync(w.configPath, 'utf8'), before);
    assert.deepEqual([...changesTo(w.sonarr), ...changesTo(w.radarr)], []);
    assert.ok(w.sonarr.calls.length > 0);
    assert.match(run.stdout, /Sonarr root \/tv -> TV Shows \/data\/media\/TV: rewrite/);
    assert.match(run.stdout, /Sonarr: would add a Webhook connection -> POST http:\/\/127\.0\.0\.1:\d+\/triggers\/sonarr/);
    assert.match(run.stdout, /Would write .*SERVER_AUTOSCAN_TRIGGERS/);
    assert.match(run.stdout, /Dry run: nothing was written/);
  });

  test('with Jellyfin instead of Plex: its libraries (/Library/VirtualFolders) are paired the same way', async () => {
    const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
    try {
      jellyfin.virtualFolders = [
        { Name: 'Shows', Locations: ['/media/shows/TV'], CollectionType: 'tvshows' },
        { Name: 'Films', Locations: ['/media/films/Movies'], CollectionType: 'movies' },
      ];
      const args = flags(w, ['--dry-run']).filter((a, i, all) => a !== '--plex' && a !== '--plex-token' && all[i - 1] !== '--plex' && all[i - 1] !== '--plex-token');
      const run = await runCli([...args, '--jellyfin', jellyfin.url, '--jellyfin-key', 'jf-key'], { cwd: ROOT, timeoutMs: 120_000 });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      // The config's Plex is still there; Jellyfin, named on the command line, comes first.
      assert.match(run.stdout, /Sonarr root \/tv -> Shows \/media\/shows\/TV: rewrite \^\/tv\(\/\|\$\) -> \/media\/shows\/TV\$\{1\}/);
      assert.match(run.stdout, /Radarr root \/movies\/ -> Films \/media\/films\/Movies/);
      assert.ok(jellyfin.calls.some((c) => c.path === '/Library/VirtualFolders' && c.status === 200 && c.token === 'jf-key'));
    } finally {
      await jellyfin.stop();
    }
  });

  test('a wrong API key: one line naming the service and what failed, exit 2, nothing written or changed', async () => {
    const before = readFileSync(w.configPath, 'utf8');
    const args = flags(w);
    args[args.indexOf(w.radarr.apiKey)] = 'wrong-key';
    const run = await runCli(args, { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(run.code, 2);
    const lines = run.stderr.trim().split('\n');
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0]!, new RegExp(`Radarr at ${w.radarr.url.replace(/[.]/g, '\\.')}: the API key was refused \\(HTTP 401`));
    assert.equal(readFileSync(w.configPath, 'utf8'), before);
    assert.deepEqual([...changesTo(w.sonarr), ...changesTo(w.radarr)], []);
  });

  test('a wrong Sonarr URL or Plex token: one line naming the service and what failed, exit 2, nothing written', async () => {
    const before = readFileSync(w.configPath, 'utf8');
    const badUrl = flags(w);
    const port = await closedPort();
    badUrl[badUrl.indexOf(w.sonarr.url)] = `http://127.0.0.1:${port}`;
    const byUrl = await runCli(badUrl, { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(byUrl.code, 2);
    assert.deepEqual(byUrl.stderr.trim().split('\n').length, 1, byUrl.stderr);
    assert.match(byUrl.stderr, new RegExp(`^scanrelay: Sonarr at http://127\\.0\\.0\\.1:${port}: cannot connect for GET system/status \\(ECONNREFUSED\\)`));
    const badToken = flags(w);
    badToken[badToken.indexOf(w.plex.token)] = 'not-the-token';
    const byToken = await runCli(badToken, { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(byToken.code, 2);
    assert.match(byToken.stderr, /^scanrelay: Plex at http:\/\/127\.0\.0\.1:\d+: the token was refused \(HTTP 401 to GET \/library\/sections/);
    assert.equal(readFileSync(w.configPath, 'utf8'), before);
    assert.deepEqual([...changesTo(w.sonarr), ...changesTo(w.radarr)], []);
  });

  test('a relay that does not answer at --relay-url: one line before any *arr is asked anything', async () => {
    const calls = w.sonarr.calls.length;
    const args = flags(w);
    const port = await closedPort();
    args[args.indexOf(w.relay.base)] = `http://127.0.0.1:${port}`;
    const run = await runCli(args, { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(run.code, 2);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`the relay at http://127\\.0\\.0\\.1:${port}: cannot connect for GET /health \\(ECONNREFUSED\\); start the relay first`));
    assert.equal(w.sonarr.calls.length, calls);
  });

  test('a service slower than the time limit: the step names what it waited for', async () => {
    w.radarr.latencyMs = 3_000;
    try {
      const run = await runCli(flags(w, ['--dry-run']), { cwd: ROOT, timeoutMs: 120_000, env: { SCANRELAY_SETUP_TIMEOUT_MS: '500' } });
      assert.equal(run.code, 2);
      assert.match(run.stdout, /waiting for Radarr at http:\/\/127\.0\.0\.1:\d+ \(status, root folders\) \.\.\.$/m);
      assert.match(run.stderr, /Radarr at http:\/\/127\.0\.0\.1:\d+: no answer to GET system\/status within 0.5 s \(waited for Radarr/);
    } finally {
      w.radarr.latencyMs = 0;
    }
  });
});

describe('scanrelay setup in a terminal', () => {
  let w: World;
  let t: Terminal | undefined;
  before(async () => {
    // Two libraries end in "TV": the root /tv is claimed by both.
    w = await world([
      { id: '1', title: 'Movies', type: 'movie', locations: ['/data/media/Movies'] },
      { id: '2', title: 'TV Shows', type: 'show', locations: ['/data/media/TV'] },
      { id: '3', title: 'Kids TV', type: 'show', locations: ['/data/kids/TV'] },
    ]);
    w.sonarr.addConnection('Plex', 'PlexServer', true);
    // A second root also ends in "TV"; its items are in Kids TV, which decides it without a question.
    w.sonarr.rootFolders.push('/cartoons/TV');
    w.sonarr.items.push({ id: 2, title: 'Bluey', path: '/cartoons/TV/Bluey (2018)' });
    w.plex.items = [{ ratingKey: '50', sectionId: '3', type: 'episode', file: '/data/kids/TV/Bluey (2018)/Season 01/Bluey - S01E01.mkv', addedAt: 1 }];
  });
  after(async () => {
    t?.close();
    await stop(w);
  });

  test('--yes reports the root two libraries claim and skips it', async () => {
    const run = await runCli(flags(w, ['--dry-run']), { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /Sonarr root \/tv: claimed by TV Shows \(\/data\/media\/TV\) and Kids TV \(\/data\/kids\/TV\); skipped/);
    assert.match(run.stdout, /Sonarr root \/cartoons\/TV -> Kids TV \/data\/kids\/TV \(by its items\): rewrite/);
  });

  test('interactively: asks which library holds the root, whether to turn off Update Library, and to apply', async () => {
    const dir = tempDir();
    const args = flags(w).filter((a) => a !== '--yes');
    t = Terminal.start([process.execPath, CLI, ...args], { dir, cwd: ROOT, env: { HOME: dir } });
    await t.waitForText('could be in two libraries: which one holds it?');
    await t.waitForText('Kids TV (/data/kids/TV)');
    // The first choice is TV Shows: Enter takes it.
    t.type('');
    await t.answer('Sonarr\'s connection "Plex" (PlexServer) also tells the server to scan', 'y');
    await t.answer('Apply these changes', 'y');
    assert.equal(await t.exitCode(120_000), 0, t.screen());
    const c = readConfig(w);
    assert.deepEqual(c.SERVER_AUTOSCAN_TRIGGERS.sonarr.REWRITE, [
      { from: '^/tv(/|$)', to: '/data/media/TV${1}' },
      { from: '^/cartoons/TV(/|$)', to: '/data/kids/TV${1}' },
    ]);
    assert.equal(w.sonarr.webhooks().length, 1);
    assert.equal(w.sonarr.connections.find((x) => x.name === 'Plex')!.fields.find((f) => f.name === 'updateLibrary')!.value, false);
    assert.match(t.screen(), /Sonarr: the relay received the test/);
  });

  test('a later run with --yes keeps the rule chosen at the question for the root it cannot decide', async () => {
    const run = await runCli(flags(w), { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.match(run.stdout, /Sonarr root \/tv: claimed by .*; skipped/);
    assert.deepEqual(readConfig(w).SERVER_AUTOSCAN_TRIGGERS.sonarr.REWRITE, [
      { from: '^/cartoons/TV(/|$)', to: '/data/kids/TV${1}' },
      { from: '^/tv(/|$)', to: '/data/media/TV${1}' },
    ]);
    assert.equal(w.sonarr.webhooks().length, 1);
  });
});

describe('scanrelay setup with a Lidarr (API v1)', () => {
  let plex: FakePlex;
  let lidarr: FakeArrManage;
  let relay: RelayProcess;
  before(async () => {
    plex = await new FakePlex({ sections: [{ id: '3', title: 'Music', type: 'artist', locations: ['/data/media/Music'] }] }).start();
    lidarr = await new FakeArrManage('lidarr').start();
    lidarr.rootFolders = ['/music'];
    lidarr.items = [{ id: 4, title: 'blink-182', path: '/music/blink-182' }];
    relay = await spawnRelay({ config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_SCAN_DELAY: 1 } });
  });
  after(async () => {
    await relay?.kill();
    await Promise.all([plex?.stop(), lidarr?.stop()]);
  });

  test('reads and registers through /api/v1, with On Release Import and On Track Retag on; its imports scan the Music section', async () => {
    const run = await runCli(['--config', relay.configPath, 'setup', '--yes', '--plex', plex.url, '--plex-token', plex.token, '--lidarr', lidarr.url, '--lidarr-key', lidarr.apiKey, '--relay-url', relay.base], { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.ok(lidarr.calls.every((c) => c.path.startsWith('/api/v1/')), 'Lidarr is asked on API v1 only');
    assert.deepEqual(JSON.parse(readFileSync(relay.configPath, 'utf8')).SERVER_AUTOSCAN_TRIGGERS.lidarr.REWRITE, [{ from: '^/music(/|$)', to: '/data/media/Music${1}' }]);
    const [hook] = lidarr.webhooks();
    assert.equal(lidarr.webhooks().length, 1);
    assert.equal(hook!.onReleaseImport, true);
    assert.equal(hook!.onTrackRetag, true);
    assert.equal(hook!.onGrab, false);
    assert.ok(lidarr.sent.filter((s) => s.payload.eventType === 'Test').every((s) => s.status === 200));
    const mark = plex.refreshes().length;
    assert.deepEqual((await lidarr.importFile(4, 'California (2016)/CD 01/01 - Cynical.flac')).map((s) => s.status), [200]);
    await waitFor(() => plex.refreshes().length > mark, 60_000, 'the Plex scan');
    assert.deepEqual(plex.refreshes().slice(mark).map((r) => [r.section, r.path]), [['3', '/data/media/Music/blink-182/California (2016)/CD 01']]);
  });
});

describe('scanrelay setup in a terminal, with no flags', () => {
  let w: World;
  let t: Terminal | undefined;
  before(async () => {
    w = await world();
  });
  after(async () => {
    t?.close();
    await stop(w);
  });

  test('asks how the *arrs reach the relay and for each *arr (the config already names Plex), then sets them up', async () => {
    const dir = tempDir();
    t = Terminal.start([process.execPath, CLI, '--config', w.configPath, 'setup'], { dir, cwd: ROOT, env: { HOME: dir } });
    await t.answer('How do the *arrs reach the relay (URL)?', w.relay.base);
    await t.answer('Sonarr URL (blank: none)?', w.sonarr.url);
    // The password prompt shows a hint line under the question: wait for the question, then for its check mark.
    await t.waitForText('? Sonarr API key');
    t.type(w.sonarr.apiKey);
    await t.waitForText('✔ Sonarr API key');
    await t.answer('Radarr URL (blank: none)?', '');
    await t.answer('Lidarr URL (blank: none)?', '');
    await t.answer('Readarr URL (blank: none)?', '');
    await t.waitForText('Sonarr root /tv -> TV Shows /data/media/TV: rewrite');
    await t.answer('Apply these changes', '');
    assert.equal(await t.exitCode(120_000), 0, t.screen());
    assert.ok(!t.screen().includes(w.sonarr.apiKey), 'the key is not echoed');
    assert.deepEqual(readConfig(w).SERVER_AUTOSCAN_TRIGGERS.sonarr.REWRITE, [{ from: '^/tv(/|$)', to: '/data/media/TV${1}' }]);
    assert.equal(w.sonarr.webhooks().length, 1);
    assert.deepEqual(w.radarr.calls, [], 'no Radarr was named');
    assert.match(t.screen(), /Sonarr: the relay received the test/);
  });
});
