// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { importAutopulse } from '../../../src/peers/autopulse/import.ts';
import { intentOf, waitOf } from '../../../src/peers/autopulse/routes.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { ROOT, tempDir, waitFor } from '../../helpers/relay.ts';

/*
 * autopulse's routes (crates/server/src/routes/triggers.rs, middleware/auth.rs at dan-online/autopulse 55124fd).
 * Each test imports an autopulse config with import-autopulse's importer, starts the relay's app on the result,
 * and replays the requests of autopulse's own tests (crates/server/src/tests/routes/triggers.rs,
 * crates/service/src/tests/triggers/*.rs), checking the answer and what was queued.
 */
const FIX = join(ROOT, 'test', 'fixtures', 'autopulse');
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

/** The config of autopulse's tests/routes/triggers.rs:23-64 (a_train autoscan, sonarr with a filter, sportarr), as YAML. */
const ROUTES_TEST_CONFIG = `
triggers:
  a_train:
    type: autoscan
    rewrite: { from: /downloads, to: /media }
  sonarr:
    type: sonarr
    rewrite: { from: /TV, to: /media/tv }
    filter: { exclude: ["S01E02"] }
  sportarr:
    type: sportarr
    rewrite: { from: /Sports, to: /media/sports }
`;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function relayFrom(text: string, file: string, extra: Record<string, unknown> = {}): Promise<TestApp> {
  const { config } = importAutopulse(text, file, {});
  t = await buildTestApp({ ...config, SERVER_PASS: 'test-secret', SERVER_QUEUE_URL: undefined, ...extra });
  return t;
}
const AUTH = { authorization: basic('admin', 'password') };
const openFolders = (a: TestApp) => a.store.view.listOpen().map((e) => e.folder).sort();

describe("autopulse's route tests, replayed (tests/routes/triggers.rs)", () => {
  test('webhook_trigger_returns_only_queued_paths_after_filtering (triggers.rs:67-110)', async () => {
    const a = await relayFrom(ROUTES_TEST_CONFIG, 'config.yaml');
    const res = await a.app.inject({
      method: 'POST',
      url: '/triggers/sonarr',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: { eventType: 'Download', episodeFiles: [{ relativePath: 'Season 1/Westworld.S01E01.mkv' }, { relativePath: 'Season 1/Westworld.S01E02.mkv' }], series: { path: '/TV/Westworld' } },
    });
    assert.equal(res.statusCode, 200, res.body);
    const events = res.json() as Array<Record<string, unknown>>;
    assert.equal(events.length, 1, 'the filtered path is not queued');
    assert.equal(events[0]!.file_path, '/media/tv/Westworld/Season 1/Westworld.S01E01.mkv');
    assert.equal(events[0]!.event_source, 'sonarr');
    assert.equal(events[0]!.process_status, 'pending');
    assert.deepEqual(openFolders(a), ['/media/tv/Westworld/Season 1']);
  });

  test('autoscan_trigger_applies_rewrite_to_dir (triggers.rs:117-145)', async () => {
    const a = await relayFrom(ROUTES_TEST_CONFIG, 'config.yaml');
    const res = await a.app.inject({ method: 'GET', url: '/triggers/a_train?dir=/downloads/show/episode.mkv', headers: AUTH });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().file_path, '/media/show/episode.mkv');
    assert.deepEqual(openFolders(a), ['/media/show/episode.mkv'], 'a dir is scanned as the folder it names');
  });

  test('sportarr_trigger_parses_download_webhook (triggers.rs:148-188)', async () => {
    const a = await relayFrom(ROUTES_TEST_CONFIG, 'config.yaml');
    const res = await a.app.inject({
      method: 'POST',
      url: '/triggers/sportarr',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: { eventType: 'Download', episodeFile: { relativePath: 'Season 2026/NFL.2026.08.04.mkv' }, series: { path: '/Sports/NFL' } },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().map((e: { file_path: string }) => e.file_path), ['/media/sports/NFL/Season 2026/NFL.2026.08.04.mkv']);
    assert.deepEqual(openFolders(a), ['/media/sports/NFL/Season 2026']);
  });

  test('sportarr_trigger_parses_real_rename_webhook (triggers.rs:192-234)', async () => {
    const a = await relayFrom(ROUTES_TEST_CONFIG, 'config.yaml');
    const res = await a.app.inject({
      method: 'POST',
      url: '/triggers/sportarr',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: { eventType: 'Rename', title: 'Renamed 1 file(s)', message: 'Scope: NFL', applicationUrl: '', instanceName: 'Sportarr', series: { title: '', path: '/Sports/NFL' }, renamedCount: 1 },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().map((e: { file_path: string }) => e.file_path), ['/media/sports/NFL']);
  });

  test('sportarr_trigger_parses_real_series_delete_webhook: no series.path, nothing queued (triggers.rs:238-275)', async () => {
    const a = await relayFrom(ROUTES_TEST_CONFIG, 'config.yaml');
    const res = await a.app.inject({
      method: 'POST',
      url: '/triggers/sportarr',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: { eventType: 'SeriesDelete', title: 'Event deleted', message: 'The event was removed from the library.', applicationUrl: '', instanceName: 'Sportarr', series: { id: 2, title: 'NFL' } },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), []);
    assert.deepEqual(openFolders(a), []);
  });
});

describe("autopulse's status codes (triggers.rs, middleware/auth.rs:48-51)", () => {
  test('no or wrong credentials: 401 "Authentication required", before the trigger is looked up', async () => {
    const a = await relayFrom(ROUTES_TEST_CONFIG, 'config.yaml');
    for (const headers of [{}, { authorization: basic('admin', 'wrong') }]) {
      const res = await a.app.inject({ method: 'GET', url: '/triggers/nope?path=/x', headers });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json(), 'Authentication required');
    }
    assert.deepEqual(openFolders(a), []);
  });

  test('an unknown trigger: 404 "Trigger not found"; a bad query: 400; a manual trigger with a body: 400 "Invalid request"', async () => {
    const a = await relayFrom(ROUTES_TEST_CONFIG, 'config.yaml');
    const nf = await a.app.inject({ method: 'GET', url: '/triggers/nope?path=/x', headers: AUTH });
    assert.equal(nf.statusCode, 404);
    assert.equal(nf.body, 'Trigger not found');
    const noQuery = await a.app.inject({ method: 'GET', url: '/triggers/manual', headers: AUTH });
    assert.equal(noQuery.statusCode, 400);
    const body = await a.app.inject({ method: 'POST', url: '/triggers/manual', headers: { ...AUTH, 'content-type': 'application/json' }, payload: { path: '/x' } });
    assert.equal(body.statusCode, 400);
    assert.equal(body.body, 'Invalid request');
    const dirOnManual = await a.app.inject({ method: 'GET', url: '/triggers/manual?dir=/x', headers: AUTH });
    assert.equal(dirOnManual.statusCode, 400);
    assert.equal(dirOnManual.body, 'Invalid query parameters');
  });

  test('a body the trigger cannot read: 500 "Unable to parse request"; broken JSON: 400; a webhook trigger by GET: "Not implemented"', async () => {
    const a = await relayFrom(ROUTES_TEST_CONFIG, 'config.yaml');
    const bad = await a.app.inject({ method: 'POST', url: '/triggers/sonarr', headers: { ...AUTH, 'content-type': 'application/json' }, payload: { eventType: 'Download' } });
    assert.equal(bad.statusCode, 500);
    assert.equal(bad.body, 'Unable to parse request');
    const broken = await a.app.inject({ method: 'POST', url: '/triggers/sonarr', headers: { ...AUTH, 'content-type': 'application/json' }, payload: '{"eventType":' });
    assert.equal(broken.statusCode, 400);
    const get = await a.app.inject({ method: 'GET', url: '/triggers/sonarr?path=/x', headers: AUTH });
    assert.equal(get.statusCode, 200);
    assert.equal(get.body, 'Not implemented');
    const test = await a.app.inject({ method: 'POST', url: '/triggers/sonarr', headers: { ...AUTH, 'content-type': 'application/json' }, payload: { eventType: 'Test' } });
    assert.equal(test.statusCode, 200);
    assert.deepEqual(test.json(), []);
    assert.deepEqual(openFolders(a), []);
  });

  test('an empty POST reads the query like GET (triggers.rs:34-38), whatever its content type', async () => {
    const a = await relayFrom(ROUTES_TEST_CONFIG, 'config.yaml');
    const res = await a.app.inject({ method: 'POST', url: '/triggers/manual?path=/media/tv/Show/S01E01.mkv', headers: { ...AUTH, 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().file_path, '/media/tv/Show/S01E01.mkv');
    assert.deepEqual(openFolders(a), ['/media/tv/Show']);
  });
});

describe('the manual trigger (README.md:265-273; settings/mod.rs:99-113)', () => {
  test("served though the config does not list it, with autopulse's README credentials", async () => {
    const a = await relayFrom(readFileSync(join(FIX, 'readme.yaml'), 'utf8'), 'readme.yaml');
    const res = await a.app.inject({ method: 'GET', url: '/triggers/manual?path=/tv/Show/Season%201/ep.mkv', headers: { authorization: basic('terry', 'yoghurt') } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().event_source, 'manual');
    assert.deepEqual(openFolders(a), ['/tv/Show/Season 1']);
  });

  test("my_manual's rewrite and a filtered path (204, nothing queued)", async () => {
    const a = await relayFrom(readFileSync(join(FIX, 'readme.yaml'), 'utf8'), 'readme.yaml');
    const auth = { authorization: basic('terry', 'yoghurt') };
    const res = await a.app.inject({ method: 'GET', url: '/triggers/my_manual?path=/downloads/movies/Film/film.mkv', headers: auth });
    assert.equal(res.statusCode, 200, res.body);
    // autopulse's rewrite replaces every match: "/downloads" -> "/" leaves "//movies/..." (rewrite.rs:80-82), which
    // names the same file on disk and to the targets; the relay keeps it as one separator (autopulse #190).
    assert.equal(res.json().file_path, '/movies/Film/film.mkv');
    const filtered = await a.app.inject({
      method: 'POST',
      url: '/triggers/my_sonarr',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: { eventType: 'Download', episodeFile: { relativePath: 'extras/x.mkv' }, series: { path: '/downloads' } },
    });
    assert.equal(filtered.statusCode, 200);
    assert.deepEqual(filtered.json(), [], 'the README filter excludes ^/tvshows/extras/');
  });

  test('hash: a mismatch is held and scanned once the file matches (runner.rs:53-100)', async () => {
    const dir = tempDir('autopulse-hold-');
    mkdirSync(join(dir, 'Show'));
    const file = join(dir, 'Show', 'ep.mkv');
    writeFileSync(file, 'half an episode');
    const sum = createHash('sha256').update('the whole episode').digest('hex');
    // The folder is a library the relay knows (a SERVER_PATH_MAPPINGS key): only there is a file read for its hash.
    const a = await relayFrom('opts:\n  check_path: true\n', 'config.yaml', { SERVER_FILE_CHECK_DELAY: 0.05, SERVER_MAX_FILE_CHECKS: 1000, SERVER_PATH_MAPPINGS: { [dir]: [dir] } });
    const res = await a.app.inject({ method: 'GET', url: `/triggers/manual?path=${encodeURIComponent(file)}&hash=${sum}`, headers: AUTH });
    assert.equal(res.json().found_status, 'hash_mismatch');
    assert.deepEqual(openFolders(a), []);
    writeFileSync(file, 'the whole episode');
    await waitFor(() => openFolders(a).length > 0, 30_000, 'the held scan');
    assert.deepEqual(openFolders(a), [join(dir, 'Show')]);
  });

  test('hash: a matching sha256 is scanned; a mismatch is reported as hash_mismatch and not scanned while it differs (runner.rs:53-100)', async () => {
    const dir = tempDir('autopulse-hash-');
    mkdirSync(join(dir, 'Show'));
    const file = join(dir, 'Show', 'ep.mkv');
    writeFileSync(file, 'episode bytes');
    const sum = createHash('sha256').update('episode bytes').digest('hex');
    const a = await relayFrom('opts:\n  check_path: true\n', 'config.yaml', { SERVER_PATH_MAPPINGS: { [dir]: [dir] } });
    const bad = await a.app.inject({ method: 'GET', url: `/triggers/manual?path=${encodeURIComponent(file)}&hash=${'0'.repeat(64)}`, headers: AUTH });
    assert.equal(bad.statusCode, 200, bad.body);
    assert.equal(bad.json().found_status, 'hash_mismatch');
    assert.deepEqual(openFolders(a), []);
    const good = await a.app.inject({ method: 'GET', url: `/triggers/manual?path=${encodeURIComponent(file)}&hash=${sum}`, headers: AUTH });
    assert.equal(good.statusCode, 200, good.body);
    assert.equal(good.json().found_status, 'found');
    assert.equal(good.json().file_hash, sum);
    assert.deepEqual(openFolders(a), [join(dir, 'Show')]);
  });
});

describe("autopulse's service trigger tests (crates/service/src/tests/triggers/*.rs), through the routes", () => {
  const CONFIG = 'triggers:\n  radarr: { type: radarr }\n  lidarr: { type: lidarr }\n  readarr: { type: readarr }\n  sonarr: { type: sonarr }\n';
  const cases: Array<[string, unknown, string[]]> = [
    ['sonarr', { eventType: 'Rename', series: { path: '/tv/Show' }, renamedEpisodeFiles: [{ previousPath: '/tv/Show/Season 1/old.mkv', relativePath: 'Season 1/new.mkv' }] }, ['/tv/Show/Season 1/old.mkv', '/tv/Show/Season 1/new.mkv']],
    ['sonarr', { eventType: 'EpisodeFileDelete', series: { path: '/tv/Show' }, episodeFile: { relativePath: 'Season 2/e.mkv' } }, ['/tv/Show/Season 2/e.mkv']],
    ['radarr', { eventType: 'Download', movie: { folderPath: '/movies/Film (2020)' }, movieFile: { relativePath: 'Film.mkv' }, deletedFiles: [{ relativePath: 'Old.mkv' }] }, ['/movies/Film (2020)/Film.mkv', '/movies/Film (2020)/Old.mkv']],
    ['radarr', { eventType: 'MovieDelete', movie: { folderPath: '/movies/Gone' } }, ['/movies/Gone']],
    ['lidarr', { eventType: 'Download', trackFiles: [{ path: '/music/A/B/01.flac' }, { path: '/music/A/B/02.flac' }] }, ['/music/A/B/01.flac', '/music/A/B/02.flac']],
    ['lidarr', { eventType: 'ArtistDelete', artist: { path: '/music/A' } }, ['/music/A']],
    ['readarr', { eventType: 'Download', bookFiles: [{ path: '/books/Au/Book/b.epub' }] }, ['/books/Au/Book/b.epub']],
    ['readarr', { eventType: 'BookFileDelete', bookFile: { path: '/books/Au/Book/old.epub' } }, ['/books/Au/Book/old.epub']],
  ];
  for (const [name, payload, paths] of cases) {
    test(`${name} ${(payload as { eventType: string }).eventType}`, async () => {
      const a = await relayFrom(CONFIG, 'config.yaml');
      const res = await a.app.inject({ method: 'POST', url: `/triggers/${name}`, headers: { ...AUTH, 'content-type': 'application/json' }, payload: payload as object });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().map((e: { file_path: string }) => e.file_path), paths);
    });
  }
});

describe('timers: the trigger wait plus the event wait (timer.rs:11-20)', () => {
  test('waitOf', () => {
    assert.equal(waitOf({ DELAY: 10, EVENT_DELAYS: { download: 5 } }, 'Download'), 15);
    assert.equal(waitOf({ DELAY: undefined, EVENT_DELAYS: { download: 5 } }, 'Download'), 5);
    assert.equal(waitOf({ DELAY: 10, EVENT_DELAYS: {} }, 'Rename'), 10);
    assert.equal(waitOf({ DELAY: undefined, EVENT_DELAYS: {} }, 'Rename'), undefined);
  });
});

describe("a trigger's scans carry its wait and its targets (runner.rs:254-263)", () => {
  test('EXCLUDE_TARGETS leaves the other named targets; TARGETS names them; DELAY is the delay', () => {
    const base = { TYPE: 'sonarr' as const, REWRITE: [], INCLUDE: [], EXCLUDE: [], EVENT_DELAYS: {} };
    const paths = [{ path: '/tv/A/e.mkv', kind: 'guess' as const }];
    const ex = intentOf({ ...base, EXCLUDE_TARGETS: ['abs'], DELAY: 15 }, 'sonarr', 'Download', paths, 15, ['plex', 'abs', 'emby']);
    assert.deepEqual([ex.targets, ex.delay, ex.source], [['plex', 'emby'], 15, 'Sonarr']);
    assert.deepEqual(intentOf({ ...base, TARGETS: ['emby'] }, 'sonarr', 'Download', paths, undefined, ['plex', 'emby']).targets, ['emby']);
    const all = intentOf(base, 'sonarr', 'Download', paths, undefined, ['plex']);
    assert.equal(all.targets, undefined, 'no selection: every target');
    assert.equal(all.delay, undefined, 'no wait: SERVER_SCAN_DELAY');
  });
});

describe('GET /stats (routes/stats.rs): the counts, with no credentials', () => {
  test('a queued scan counts as pending', async () => {
    const a = await relayFrom(ROUTES_TEST_CONFIG, 'config.yaml');
    await a.app.inject({ method: 'GET', url: '/triggers/manual?path=/media/tv/Show/e.mkv', headers: AUTH });
    const res = await a.app.inject({ method: 'GET', url: '/stats' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().stats, { total: 1, processed: 0, retrying: 0, failed: 0, pending: 1 });
    assert.equal(typeof res.json().speed, 'number');
  });
});

describe("with autopulse's routes on, autoscan's are not served", () => {
  test('/triggers/ answers the autopulse way', async () => {
    const a = await relayFrom(ROUTES_TEST_CONFIG, 'config.yaml');
    const res = await a.app.inject({ method: 'POST', url: '/triggers/radarr', headers: { ...AUTH, 'content-type': 'application/json' }, payload: { eventType: 'Test' } });
    assert.equal(res.statusCode, 404);
    assert.equal(res.body, 'Trigger not found');
  });
});
