import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { ROOT } from '../helpers/relay.ts';

/*
 * autoscan's routes (autoscan cmd/autoscan/router.go): GET /health, POST /triggers/<name> for the managers,
 * /triggers/manual?dir=... (manual.go reads the `dir` query values), Basic auth on /triggers/ when both
 * username and password are set. The payloads in test/fixtures/autoscan/ have the trimmed shapes of
 * autoscan's own trigger test data (only the fields autoscan reads).
 */
const fixture = (name: string) => readFileSync(join(ROOT, 'test', 'fixtures', 'autoscan', `${name}.json`), 'utf8');
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const AUTH = { authorization: basic('hello there', 'general kenobi') };
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json', ...AUTH };

describe("autoscan's routes with SERVER_AUTH_USER/PASS set", () => {
  let t: TestApp;
  // A fresh queue per test: a pending folder absorbs later requests below it.
  beforeEach(async () => {
    t = await buildTestApp({
      SERVER_AUTH_USER: 'hello there',
      SERVER_AUTH_PASS: 'general kenobi',
      SERVER_ALLOW_MANUAL_SCAN: true,
      SERVER_PATH_REWRITES: [
        { from: '^/tv/', to: '/mnt/unionfs/Media/TV/' },
        { from: '^/movies/', to: '/mnt/unionfs/Media/Movies/' },
        { from: '^/music/', to: '/mnt/unionfs/Media/Music/' },
        { from: '^/books/', to: '/mnt/unionfs/Media/Books/' },
        { from: '^/mnt/unionfs/Media/', to: '/data/' },
      ],
      SERVER_AUTOSCAN_TRIGGERS: { sonarr: 0, 'sonarr-docker': -2, radarr: 0, radarr4k: -5, lidarr: 0, readarr: 0, manual: -1 },
    });
  });
  afterEach(() => t.close());
  const post = (url: string, payload?: string, headers: Record<string, string> = JSON_HEADERS) =>
    t.app.inject({ method: 'POST', url, payload, headers });
  const openFolders = () => t.store.view.listOpen().map((e) => e.folder).sort();

  test('GET /health answers 200 without credentials', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health' });
    assert.equal(res.statusCode, 200);
  });

  test('POST /triggers/sonarr: a Download queues the episode folder, rewritten by every rule', async () => {
    const res = await post('/triggers/sonarr', fixture('sonarr-download'));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().scans[0].folder, '/data/TV/Severance/Season 2');
    assert.ok(openFolders().includes('/data/TV/Severance/Season 2'));
  });

  test('a Rename (series folder renamed) queues the new folder and, for the old one, its nearest existing parent', async () => {
    const res = await post('/triggers/sonarr-docker', fixture('sonarr-rename'));
    assert.equal(res.statusCode, 200, res.body);
    const folders = new Set(res.json().scans.map((s: { folder: string }) => s.folder));
    assert.deepEqual([...folders].sort(), ['/data/TV', '/data/TV/Severance (2022)']);
  });

  test('deletes: series and episode file (Sonarr), movie and movie file (Radarr)', async () => {
    for (const [route, name, folder] of [
      ['/triggers/sonarr', 'sonarr-series-delete', '/data/TV'],
      ['/triggers/sonarr', 'sonarr-episode-file-delete', '/data/TV/Severance/Season 1'],
      ['/triggers/radarr', 'radarr-movie-delete', '/data/Movies'],
      ['/triggers/radarr', 'radarr-movie-file-delete', '/data/Movies/Prisoners (2013)'],
    ] as const) {
      for (const e of t.store.view.listOpen()) t.store.cancel(e.id);
      const res = await post(route, fixture(name));
      assert.equal(res.statusCode, 200, `${name}: ${res.body}`);
      assert.equal(res.json().scans[0].folder, folder, name);
    }
  });

  test('Radarr, Lidarr and Readarr downloads queue their folders', async () => {
    const radarr = await post('/triggers/radarr', fixture('radarr-download'));
    assert.equal(radarr.json().scans[0].folder, '/data/Movies/Arrival (2016)');
    const lidarr = await post('/triggers/lidarr', fixture('lidarr-download'));
    assert.deepEqual(
      [...new Set(lidarr.json().scans.map((s: { folder: string }) => s.folder))].sort(),
      ['/data/Music/Daft Punk/Discovery (2001)/CD 01', '/data/Music/Daft Punk/Discovery (2001)/CD 02'],
    );
    const readarr = await post('/triggers/readarr', fixture('readarr-download'));
    assert.equal(readarr.json().scans[0].folder, '/data/Books/Ursula K. Le Guin/The Dispossessed (1974)');
  });

  test("each trigger's priority goes with its scans (SERVER_AUTOSCAN_TRIGGERS)", async () => {
    const res = await post('/triggers/radarr4k', JSON.stringify({ eventType: 'Download', movieFile: { relativePath: 'Dune.2021.2160p.mkv' }, movie: { folderPath: '/movies/Dune (2021)' } }));
    assert.equal(res.statusCode, 200, res.body);
    const entry = t.store.view.listOpen().find((e) => e.folder === '/data/Movies/Dune (2021)');
    assert.equal(entry?.priority, -5);
  });

  test('a Test event answers 200 and queues nothing', async () => {
    const before = t.store.countOpen();
    const res = await post('/triggers/radarr', fixture('test'));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(t.store.countOpen(), before);
    const bad = await post('/triggers/sonarr', 'this is not JSON');
    assert.equal(bad.statusCode, 400, 'a body that is not JSON answers 400, as autoscan does');
  });

  test('a name that is not in SERVER_AUTOSCAN_TRIGGERS is 404', async () => {
    assert.equal((await post('/triggers/radarr4k', fixture('radarr-download'))).statusCode, 200);
    const res = await post('/triggers/whisparr', fixture('radarr-download'));
    assert.equal(res.statusCode, 404);
  });

  test('no or wrong credentials: 401 with a Basic challenge, nothing queued', async () => {
    const before = t.store.countOpen();
    for (const headers of [{ 'content-type': 'application/json' }, { 'content-type': 'application/json', authorization: basic('hello there', 'wrong') }] as Array<Record<string, string>>) {
      const res = await post('/triggers/sonarr', JSON.stringify({ eventType: 'Download', episodeFile: { relativePath: 'S1/x.mkv' }, series: { path: '/tv/Nope' } }), headers);
      assert.equal(res.statusCode, 401);
      assert.match(String(res.headers['www-authenticate']), /^Basic /);
    }
    const manual = await t.app.inject({ method: 'POST', url: '/triggers/manual?dir=%2Ftv%2FNope' });
    assert.equal(manual.statusCode, 401);
    assert.equal(t.store.countOpen(), before);
  });

  test('POST /triggers/manual?dir=...&dir=... queues each folder as it is, with the manual priority', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/triggers/manual?dir=%2Ftv%2FShogun%2FSeason%201&dir=%2Fmovies%2FHeat%20(1995)', headers: { ...AUTH, accept: 'application/json' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().scans.map((s: { folder: string }) => s.folder), ['/data/TV/Shogun/Season 1', '/data/Movies/Heat (1995)']);
    const entry = t.store.view.listOpen().find((e) => e.folder === '/data/TV/Shogun/Season 1');
    assert.equal(entry?.source, 'Manual');
    assert.equal(entry?.priority, -1);
  });

  test('POST /triggers/manual without dir, or with a ".." dir, is a 400 naming the problem', async () => {
    const none = await t.app.inject({ method: 'POST', url: '/triggers/manual', headers: { ...AUTH, accept: 'application/json' } });
    assert.equal(none.statusCode, 400);
    assert.match(none.json().error, /dir/);
    const dots = await t.app.inject({ method: 'POST', url: '/triggers/manual?dir=%2Ftv%2F..%2Fetc', headers: { ...AUTH, accept: 'application/json' } });
    assert.equal(dots.statusCode, 400);
    assert.match(dots.json().error, /dir must not contain a "\.\." segment/);
  });

  test('GET /triggers/manual shows the manual page; its form posts dir', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/triggers/manual', headers: AUTH });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
    assert.match(res.body, /name="dir"/);
    const form = await t.app.inject({
      method: 'POST',
      url: '/triggers/manual',
      payload: 'dir=%2Fmovies%2FAlien%20(1979)',
      headers: { ...AUTH, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    });
    assert.equal(form.statusCode, 200, form.body);
    assert.match(form.body, /\/data\/Movies\/Alien \(1979\)/);
  });
});

describe("autoscan's routes without SERVER_AUTH_USER/PASS", () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ SERVER_AUTH_USER: 'only-a-user' });
  });
  after(() => t.close());

  test('/triggers/* is not served (it carries no secret) and says why; /health is', async () => {
    for (const url of ['/triggers/sonarr', '/triggers/manual?dir=%2Ftv%2FX']) {
      const res = await t.app.inject({ method: 'POST', url, payload: fixture('sonarr-download'), headers: { 'content-type': 'application/json', authorization: basic('only-a-user', '') } });
      assert.equal(res.statusCode, 404, url);
      assert.match(res.json().error, /SERVER_AUTH_USER and SERVER_AUTH_PASS/);
    }
    assert.equal(t.store.countOpen(), 0);
    assert.equal((await t.app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
  });
});
