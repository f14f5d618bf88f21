import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, SECRET, type TestApp } from '../helpers/app.ts';
import { ROOT } from '../helpers/relay.ts';

const fixture = (name: string) => readFileSync(join(ROOT, 'test', 'fixtures', 'arr', `${name}.json`), 'utf8');
const JSON_TYPE = { 'content-type': 'application/json', accept: 'application/json' };
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

describe('POST /<secret> with media-manager webhooks (in process)', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'], '/data/Movies/': ['/movies/'] }, SERVER_IGNORE_LIST: ['/.grab/', 'Extras'] });
  });
  after(() => t.close());
  const post = (payload: string, headers: Record<string, string> = JSON_TYPE, method: 'POST' | 'PUT' = 'POST') =>
    t.app.inject({ method, url: `/${SECRET}`, payload, headers });

  test('a Test from each manager answers 200 and queues nothing', async () => {
    for (const m of ['sonarr', 'radarr', 'lidarr', 'readarr']) {
      const res = await post(fixture(`${m}/test`));
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { status: 'ok', event: 'Test' });
    }
    assert.equal(t.store.countOpen(), 0);
  });

  test('events with nothing to scan answer 200 {"status":"ignored","reason":...} and queue nothing', async () => {
    for (const name of ['sonarr/grab', 'sonarr/health', 'radarr/movie-added', 'lidarr/download-failure', 'readarr/application-update', 'sonarr/series-delete-files-kept']) {
      const res = await post(fixture(name));
      assert.equal(res.statusCode, 200, name);
      const body = res.json();
      assert.equal(body.status, 'ignored', name);
      assert.equal(typeof body.reason, 'string');
    }
    assert.equal(t.store.countOpen(), 0);
  });

  test('a Sonarr v4 import queues one scan per distinct folder, mapped, with title and ids kept', async () => {
    const res = await post(fixture('sonarr/download-v4-multi'));
    assert.equal(res.statusCode, 200, res.body);
    const folders = new Set(res.json().scans.map((s: { folder: string }) => s.folder));
    assert.deepEqual([...folders].sort(), ['/data/TV/Westworld/Season 01', '/data/TV/Westworld/Season 02']);
    const open = t.store.view.listOpen().filter((e) => e.folder.startsWith('/data/TV/Westworld'));
    assert.equal(open.length, 2);
    for (const e of open) {
      assert.equal(e.source, 'Sonarr');
      assert.equal(e.title, 'Westworld');
      assert.deepEqual(e.ids, { tvdbId: 296762, tmdbId: 63247, imdbId: 'tt0475784', tvMazeId: 1371 });
    }
  });

  test('a 6,000-file import (mapped in slices, its files stored in one statement per folder) queues each folder once with every file', async () => {
    const episodeFiles = Array.from({ length: 6000 }, (_, i) => ({ path: `/tv/Big Show/Season ${String(1 + (i % 3)).padStart(2, '0')}/e${i}.mkv` }));
    episodeFiles.push(episodeFiles[10]!); // a file listed twice is answered and stored once
    const res = await post(JSON.stringify({ eventType: 'Download', series: { path: '/tv/Big Show', title: 'Big Show' }, episodeFiles }));
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    assert.equal(res.json().scans.length, 6000);
    const open = t.store.view.listOpen().filter((e) => e.folder.startsWith('/data/TV/Big Show'));
    assert.deepEqual(open.map((e) => e.folder).sort(), ['/data/TV/Big Show/Season 01', '/data/TV/Big Show/Season 02', '/data/TV/Big Show/Season 03']);
    for (const e of open) {
      // Every file counted once; the scan keeps a sample of 1,000 of them (issue 35, item 11).
      assert.equal(e.fileCount, 2000, e.folder);
      const kept = t.store.view.get(e.id)!.files;
      assert.equal(kept.length, 1000, e.folder);
      assert.ok(kept.every((f) => f.startsWith(`${e.folder}/e`)));
    }
  });

  test('a bad path deep in a large import (in a later slice) is answered 400 and queues nothing of it', async () => {
    const before = t.store.countOpen();
    const episodeFiles = Array.from({ length: 6000 }, (_, i) => ({ path: `/tv/Other Show/Season 01/e${i}.mkv` }));
    episodeFiles[4500] = { path: 'relative/e4500.mkv' };
    const res = await post(JSON.stringify({ eventType: 'Download', series: { path: '/tv/Other Show' }, episodeFiles }));
    assert.equal(res.statusCode, 400, res.body.slice(0, 300));
    assert.match(res.json().error, /relative/);
    assert.equal(t.store.countOpen(), before);
  });

  test('a PUT works as a POST (the managers offer both methods)', async () => {
    const res = await post(fixture('radarr/download'), JSON_TYPE, 'PUT');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().scans[0].folder, '/data/Movies/Interstellar (2014)');
  });

  test('SERVER_IGNORE_LIST: a manual request for a matching mapped path is answered ignored and not queued; a webhook is queued (scan.py:326-335)', async () => {
    const before = t.store.countOpen();
    const res = await post(JSON.stringify({ eventType: 'Manual', filepath: '/tv/Dark/extras/Behind the Scenes.mkv' }));
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.status, 'ignored');
    assert.match(body.scans[0].reason, /"Extras" in SERVER_IGNORE_LIST/);
    assert.equal(t.store.countOpen(), before);
    // plex_autoscan's webhook branches (scan.py:429-450) never consult the list.
    const hook = await post(JSON.stringify({ eventType: 'Download', series: { path: '/tv/Dark' }, episodeFile: { relativePath: 'extras/Behind the Scenes.mkv' } }));
    assert.equal(hook.statusCode, 200);
    assert.equal(hook.json().status, 'queued');
    assert.equal(hook.json().scans[0].folder, '/data/TV/Dark/extras');
  });

  test('a known shape with a wrong field: 400 naming the field', async () => {
    const res = await post(JSON.stringify({ eventType: 'Download', series: { path: '/tv/X' }, episodeFiles: [{ relativePath: 42 }] }));
    assert.equal(res.statusCode, 400);
    assert.match(res.json().error, /Sonarr Download payload: field episodeFiles\[0\]\.relativePath/);
  });

  test('an unknown shape: 400 naming what is expected', async () => {
    const res = await post(JSON.stringify({ eventType: 'Download', file: '/tv/x.mkv' }));
    assert.equal(res.statusCode, 400);
    assert.match(res.json().error, /unrecognised payload: expected .*Sonarr\/Radarr\/Lidarr\/Readarr webhook/);
  });
});

describe('hardened intake (in process)', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());
  const send = (payload: string | Buffer, headers: Record<string, string>) => t.app.inject({ method: 'POST', url: `/${SECRET}`, payload, headers });

  test('bodies over 1 MiB get 413, as JSON and as a form', async () => {
    const big = 'x'.repeat(1024 * 1024 + 10);
    const json = await send(JSON.stringify({ eventType: 'Manual', filepath: big }), JSON_TYPE);
    assert.equal(json.statusCode, 413);
    assert.match(json.json().error, /larger than 1048576 bytes/);
    const form = await send(`eventType=Manual&filepath=${big}`, FORM_TYPE);
    assert.equal(form.statusCode, 413);
  });

  test('a client still sending an oversized body reads the 413 and its message, and the connection stays usable', async () => {
    // Over a real socket: with a hang-up straight after the answer, a client still writing gets a reset
    // (EPIPE) instead of the 413. Sent in two halves, the answer arriving after the first.
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const socket: Socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // Waits on the socket's own events, not a count of sleeps: a loaded machine only makes it slower.
    const until = (what: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!what.test(received)) return;
          socket.off('data', check).off('close', gone);
          resolve();
        };
        const gone = () => reject(new Error(`the connection closed before ${what} came; received: ${received}`));
        socket.on('data', check).once('close', gone);
        check();
      });
    const body = Buffer.alloc(1536 * 1024, 'x');
    socket.write(`POST /${SECRET} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: application/json\r\ncontent-length: ${body.length}\r\n\r\n`);
    socket.write(body.subarray(0, 64 * 1024));
    await until(/larger than 1048576 bytes/);
    assert.match(received, /^HTTP\/1\.1 413 /);
    assert.doesNotMatch(received, /connection: close/i);
    socket.write(body.subarray(64 * 1024));
    received = '';
    socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(/"status":"ok"/);
    socket.end();
    await closed;
  });

  test('malformed JSON, empty JSON and poisoned JSON get 400', async () => {
    for (const body of ['{"eventType": "Download", ', '', '{"__proto__": {"admin": true}}', 'nul']) {
      const res = await send(body, JSON_TYPE);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.equal(typeof res.json().error, 'string');
    }
  });

  test('JSON that is not an object, and forms without a request, get 400', async () => {
    for (const [body, headers] of [
      ['[1,2,3]', JSON_TYPE],
      ['"Download"', JSON_TYPE],
      ['null', JSON_TYPE],
      ['%%%&&=', FORM_TYPE],
      ['eventType=Manual&eventType=Manual&filepath=/tv/x.mkv', FORM_TYPE],
    ] as const) {
      const res = await send(body, headers);
      assert.equal(res.statusCode, 400, body);
    }
  });

  test('a wrong content type gets 415 naming the accepted ones', async () => {
    for (const type of ['text/plain', 'application/xml', 'application/octet-stream']) {
      const res = await send('eventType=Test', { 'content-type': type, accept: 'application/json' });
      assert.equal(res.statusCode, 415, type);
      assert.match(res.json().error, /send application\/x-www-form-urlencoded, multipart\/form-data or application\/json/);
    }
  });

  test('nothing was queued by any of it', () => {
    assert.equal(t.store.countOpen(), 0);
  });
});

describe('SERVER_RATE_LIMIT and basic auth (in process)', () => {
  test('SERVER_RATE_LIMIT=3: the 4th request in a minute from one client gets 429; 0 (default) never limits', async () => {
    const limited = await buildTestApp({ SERVER_RATE_LIMIT: 3 });
    try {
      const codes: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await limited.app.inject({ method: 'POST', url: `/${SECRET}`, payload: '{"eventType":"Test"}', headers: JSON_TYPE });
        codes.push(res.statusCode);
        if (res.statusCode === 429) assert.match(res.json().error, /at most 3 requests per minute/);
      }
      assert.deepEqual(codes, [200, 200, 200, 429]);
      const health = await limited.app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(health.statusCode, 200, 'health checks are not limited');
    } finally {
      await limited.close();
    }
    const open = await buildTestApp();
    try {
      for (let i = 0; i < 30; i++) {
        const res = await open.app.inject({ method: 'POST', url: `/${SECRET}`, payload: '{"eventType":"Test"}', headers: JSON_TYPE });
        assert.equal(res.statusCode, 200);
      }
    } finally {
      await open.close();
    }
  });

  test('SERVER_AUTH_USER/PASS: 401 with a challenge unless the credentials match; the secret is still required', async () => {
    const t = await buildTestApp({ SERVER_AUTH_USER: 'sonarr', SERVER_AUTH_PASS: 'pä ss:word' });
    try {
      const post = (url: string, authorization?: string) =>
        t.app.inject({ method: 'POST', url, payload: '{"eventType":"Test"}', headers: { ...JSON_TYPE, ...(authorization ? { authorization } : {}) } });
      const none = await post(`/${SECRET}`);
      assert.equal(none.statusCode, 401);
      assert.match(String(none.headers['www-authenticate']), /^Basic realm="scanrelay"/);
      assert.equal((await post(`/${SECRET}`, basic('sonarr', 'wrong'))).statusCode, 401);
      assert.equal((await post(`/${SECRET}`, basic('radarr', 'pä ss:word'))).statusCode, 401);
      assert.equal((await post(`/${SECRET}`, 'Bearer abc')).statusCode, 401);
      assert.equal((await post(`/${SECRET}`, basic('sonarr', 'pä ss:word'))).statusCode, 200);
      assert.equal((await post('/not-the-secret', basic('sonarr', 'pä ss:word'))).statusCode, 404);
      const api = await t.app.inject({ method: 'GET', url: `/api/${SECRET}?cmd=queue_count` });
      assert.equal(api.statusCode, 401, 'the cmd API is behind the same auth');
    } finally {
      await t.close();
    }
  });
});

describe('plex_autoscan cmd API at /api/<secret> (in process)', () => {
  let t: TestApp;
  let resets = 0;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());
  const api = (method: 'GET' | 'POST', url: string, payload?: string, headers?: Record<string, string>) => t.app.inject({ method, url, payload, headers });

  test('queue_count by GET query, POST form and POST JSON counts the open scans', async () => {
    const queued = await t.app.inject({ method: 'POST', url: `/${SECRET}`, payload: fixture('radarr/download'), headers: JSON_TYPE });
    assert.equal(queued.statusCode, 200);
    for (const res of [
      await api('GET', `/api/${SECRET}?cmd=queue_count`),
      await api('POST', `/api/${SECRET}`, 'cmd=queue_count', FORM_TYPE),
      await api('POST', `/api/${SECRET}`, '{"cmd":"QUEUE_COUNT"}', JSON_TYPE),
    ]) {
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { queue_count: 1 });
    }
  });

  // scan.py:254-276: api_call answers every error as 200 with {"error": ...} (jsonify without a status); the
  // clients (scripts, dashboards) read the JSON.
  test('a missing or unknown cmd, or a body that cannot be read, gets 200 with an error', async () => {
    for (const res of [
      await api('GET', `/api/${SECRET}`),
      await api('POST', `/api/${SECRET}`, '{}', JSON_TYPE),
      await api('POST', `/api/${SECRET}`, '{"cmd": 5}', JSON_TYPE),
      await api('GET', `/api/${SECRET}?cmd=drop_tables`),
      await api('POST', `/api/${SECRET}`, '{"cmd": ', JSON_TYPE),
      await api('POST', `/api/${SECRET}`, 'cmd', { 'content-type': 'application/x-unknown' }),
    ]) {
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.json().error, /cmd|body/);
    }
    assert.match((await api('GET', `/api/${SECRET}?cmd=drop_tables`)).json().error, /^unknown cmd: drop_tables/);
  });

  test('reset_page_token answers an error while drive monitoring is off, and resets it when on', async () => {
    const off = await api('GET', `/api/${SECRET}?cmd=reset_page_token`);
    assert.equal(off.statusCode, 200);
    assert.match(off.json().error, /drive monitoring is off/);
    const on = await buildTestApp({}, { drive: { enabled: () => true, resetPageToken: async () => void resets++ } });
    try {
      const res = await on.app.inject({ method: 'POST', url: `/api/${SECRET}`, payload: 'cmd=reset_page_token', headers: FORM_TYPE });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().success, true);
      assert.equal(resets, 1);
    } finally {
      await on.close();
    }
  });

  test('a wrong secret gets 404 and runs nothing', async () => {
    const res = await api('GET', '/api/nope?cmd=queue_count');
    assert.equal(res.statusCode, 404);
  });
});
