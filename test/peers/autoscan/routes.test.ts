// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { ROOT } from '../../helpers/relay.ts';

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

describe("autoscan's route details (cmd/autoscan/router.go and the trigger handlers)", () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp({ SERVER_AUTH_USER: 'hello there', SERVER_AUTH_PASS: 'general kenobi', SERVER_ALLOW_MANUAL_SCAN: true });
  });
  afterEach(() => t.close());
  const openFolders = () => t.store.view.listOpen().map((e) => e.folder).sort();

  test('GET (or HEAD, DELETE) on a webhook trigger or A-Train answers 405 with Allow, as chi does for a POST-only route (router.go:68,88-115)', async () => {
    for (const [method, url] of [['GET', '/triggers/sonarr'], ['DELETE', '/triggers/radarr'], ['HEAD', '/triggers/lidarr'], ['GET', '/triggers/a-train/0A1']] as const) {
      const res = await t.app.inject({ method, url, headers: AUTH });
      assert.equal(res.statusCode, 405, `${method} ${url}`);
      assert.match(String(res.headers.allow), /POST/);
    }
    assert.equal(t.store.countOpen(), 0);
  });

  test('a manual PUT (or PATCH, DELETE) scans the dir values like a POST: autoscan treats every method but GET and HEAD so (manual.go:56-85)', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: `/triggers/manual?dir=${encodeURIComponent(`/data/Movies/${method} (2000)/`)}`, headers: { ...AUTH, accept: 'application/json' } });
      assert.equal(res.statusCode, 200, `${method}: ${res.body}`);
    }
    // path.Clean before the rewrite (manual.go:78): the trailing slash is gone.
    assert.deepEqual(openFolders(), ['/data/Movies/DELETE (2000)', '/data/Movies/PATCH (2000)', '/data/Movies/PUT (2000)']);
    const slash = await t.app.inject({ method: 'POST', url: '/triggers/manual/?dir=%2Fdata%2FTV%2FDark', headers: { ...AUTH, accept: 'application/json' } });
    assert.equal(slash.statusCode, 200, 'chi serves /triggers/manual/ too');
    const none = await t.app.inject({ method: 'PUT', url: '/triggers/manual', headers: { ...AUTH, accept: 'application/json' } });
    assert.equal(none.statusCode, 400, 'no dir: 400, as manual.go:66-70');
  });

  test('a Lidarr Download with empty trackFiles answers 400, as lidarr.go:75-79 does; nothing is queued', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/triggers/lidarr',
      payload: JSON.stringify({ eventType: 'Download', artist: { path: '/data/Music/X' }, trackFiles: [] }),
      headers: JSON_HEADERS,
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().error, /Required fields are missing/);
    assert.equal(t.store.countOpen(), 0);
    // The secret URL keeps its own answer for the same payload (200, ignored).
    const secret = await t.app.inject({ method: 'POST', url: '/test-secret', payload: JSON.stringify({ eventType: 'Download', artist: { path: '/data/Music/X' }, trackFiles: [] }), headers: JSON_HEADERS });
    assert.equal(secret.statusCode, 200, secret.body);
  });
});

describe("A-Train: POST /triggers/a-train/{drive}, autoscan's own fixtures (triggers/a_train/a_train_test.go)", () => {
  let t: TestApp;
  // a_train_test.go:36-49's standardConfig: drive 1234VA with its own rule, a global rule, priority 5.
  const standard = {
    PRIORITY: -5,
    DRIVES: [{ ID: '1234VA', REWRITE: [{ from: '^/TV/*', to: '/mnt/unionfs/Media/TV/$1' }] }],
    REWRITE: [{ from: '^/Movies/*', to: '/mnt/unionfs/Media/Movies/$1' }],
  };
  beforeEach(async () => {
    t = await buildTestApp({ SERVER_AUTH_USER: 'hello there', SERVER_AUTH_PASS: 'general kenobi', A_TRAIN: standard });
  });
  afterEach(() => t.close());
  const aTrain = (drive: string, payload: string, headers: Record<string, string> = JSON_HEADERS) =>
    t.app.inject({ method: 'POST', url: `/triggers/a-train/${drive}`, payload, headers });
  const open = () => t.store.view.listOpen().map((e) => ({ folder: e.folder, priority: e.priority, source: e.source })).sort((a, b) => a.folder.localeCompare(b.folder));

  test('full.json to drive 1234VA: the drive rule then the global one, four folders, the trigger priority (a_train_test.go:57-89)', async () => {
    const res = await aTrain('1234VA', readFileSync(join(ROOT, 'test', 'fixtures', 'autoscan', 'a-train', 'full.json'), 'utf8'));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(open(), [
      { folder: '/mnt/unionfs/Media/Movies/Interstellar (2014)', priority: -5, source: 'A-Train' },
      { folder: '/mnt/unionfs/Media/Movies/Mortal Kombat (2021)', priority: -5, source: 'A-Train' },
      { folder: '/mnt/unionfs/Media/Movies/Wonder Woman 1984 (2020)', priority: -5, source: 'A-Train' },
      { folder: '/mnt/unionfs/Media/TV/Legion/Season 1', priority: -5, source: 'A-Train' },
    ]);
  });

  test('modified.json to a drive not listed: only the global rule, which does not match; one folder named twice is one scan (a_train_test.go:90-112)', async () => {
    const res = await aTrain('anotherVA', readFileSync(join(ROOT, 'test', 'fixtures', 'autoscan', 'a-train', 'modified.json'), 'utf8'));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(open(), [{ folder: '/TV/Legion/Season 1', priority: -5, source: 'A-Train' }]);
  });

  test("keys are read without regard to case, as Go's JSON decoder does; other keys are ignored", async () => {
    const res = await aTrain('1234VA', JSON.stringify({ CREATED: ['/Movies/Up (2009)'], Deleted: ['/TV/Dark/Season 1'], other: 1 }));
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(open().map((o) => o.folder), ['/mnt/unionfs/Media/Movies/Up (2009)', '/mnt/unionfs/Media/TV/Dark/Season 1']);
  });

  test('bad bodies are 400 naming the problem (Go: a decode error), nothing queued; an empty event is 200', async () => {
    for (const body of ['not json', '[]', '{"created": "/Movies/Up"}', '{"deleted": [1]}']) {
      const res = await aTrain('1234VA', body);
      assert.equal(res.statusCode, 400, body);
    }
    assert.equal(t.store.countOpen(), 0);
    assert.equal((await aTrain('1234VA', '{}')).statusCode, 200);
  });

  test('the same Basic auth as the other routes: 401 without it, nothing queued', async () => {
    const res = await aTrain('1234VA', '{"created": ["/Movies/Up"]}', { 'content-type': 'application/json' });
    assert.equal(res.statusCode, 401);
    assert.equal(t.store.countOpen(), 0);
  });
});
