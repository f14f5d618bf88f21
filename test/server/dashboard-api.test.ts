import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Relay } from '../../src/server/run.ts';
import { FakePlex } from '../fakes/plex.ts';
import { postForm, waitFor } from '../helpers/relay.ts';
import { plexAndRelayForSuite, startRelayAgainst } from '../helpers/suite.ts';

const SECRET = 'api-secret';

async function startWith(plex: FakePlex, extra: Record<string, unknown> = {}): Promise<Relay & { api: string }> {
  // Scans wait 10 minutes, so nothing is sent unless a test asks for it (retry makes a scan due now).
  const relay = await startRelayAgainst(plex, { SERVER_PASS: SECRET, SERVER_ALLOW_MANUAL_SCAN: true, SERVER_IGNORE_LIST: ['/sample/'], ...extra }, { scheduler: { retryBaseMs: 200 } });
  const url = new URL(relay.url);
  return Object.assign(relay, { api: `${url.origin}/api/${SECRET}` });
}

async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed };
}

describe('JSON API under /api/<secret>/', () => {
  let plex: FakePlex;
  let relay: Relay & { api: string };

  plexAndRelayForSuite(startWith, (p, r) => {
    plex = p;
    relay = r;
  });

  test('POST scan queues the mapped folder and GET queue lists it as pending, with nothing sent to Plex', async () => {
    const res = await call('POST', `${relay.api}/scan`, { path: '/movies/Alien (1979)/Alien (1979).mkv' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.status, 'queued');
    assert.equal(res.body.scans[0].folder, '/data/Movies/Alien (1979)');
    const id = res.body.scans[0].id;

    const queue = await call('GET', `${relay.api}/queue`);
    assert.equal(queue.status, 200);
    const item = queue.body.items.find((i: any) => i.id === id);
    assert.ok(item, JSON.stringify(queue.body));
    assert.equal(item.status, 'pending');
    assert.equal(item.source, 'API');
    assert.equal(item.folder, '/data/Movies/Alien (1979)');
    assert.deepEqual(item.files, ['/data/Movies/Alien (1979)/Alien (1979).mkv']);
    assert.ok(item.dueAt - item.requestedAt >= 599_000, 'due after SERVER_SCAN_DELAY');
    assert.deepEqual(item.deliveries, []);
    assert.equal(plex.refreshes().length, 0);

    const again = await call('POST', `${relay.api}/scan`, { path: '/movies/Alien (1979)/extra.srt' });
    assert.equal(again.body.status, 'merged');
    assert.equal(again.body.scans[0].id, id);
  });

  test('POST scan rejects bad bodies and bad paths with 400 and a message, queueing nothing', async () => {
    const before = (await call('GET', `${relay.api}/queue`)).body.count;
    const cases: Array<[unknown, RegExp]> = [
      [{}, /path/],
      [{ path: 5 }, /path/],
      [{ path: '' }, /missing or empty/],
      [{ path: '/movies/../etc/passwd' }, /\.\./],
      [{ path: 'relative/film.mkv' }, /not absolute/],
      ['not json', /JSON|json/],
    ];
    for (const [body, message] of cases) {
      const res = await call('POST', `${relay.api}/scan`, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)} -> ${JSON.stringify(res.body)}`);
      assert.match(res.body.error, message);
    }
    assert.equal((await call('GET', `${relay.api}/queue`)).body.count, before);
  });

  test('GET map shows the mapped path, folder and Plex section without queueing anything', async () => {
    const before = (await call('GET', `${relay.api}/queue`)).body.count;
    const hit = await call('GET', `${relay.api}/map?path=${encodeURIComponent('/tv/Dark/Season 01/Dark - S01E01.mkv')}`);
    assert.equal(hit.status, 200);
    assert.equal(hit.body.mapped, '/data/TV/Dark/Season 01/Dark - S01E01.mkv');
    assert.deepEqual(hit.body.match, { key: '/data/TV/', value: '/tv/' });
    assert.equal(hit.body.folder, '/data/TV/Dark/Season 01');
    assert.deepEqual(hit.body.section, { target: 'plex', id: '2', title: 'TV', location: '/data/TV' });
    assert.equal(hit.body.problem, null);

    const outside = await call('GET', `${relay.api}/map?path=${encodeURIComponent('/music/Band/song.flac')}`);
    assert.equal(outside.body.section, null);
    assert.match(outside.body.sectionError, /no Plex section/);

    const ignored = await call('GET', `${relay.api}/map?path=${encodeURIComponent('/movies/X (2000)/sample/x.mkv')}`);
    assert.equal(ignored.body.ignored, '/sample/');

    const relative = await call('GET', `${relay.api}/map?path=relative.mkv`);
    assert.match(relative.body.problem, /not absolute/);

    const missing = await call('GET', `${relay.api}/map`);
    assert.equal(missing.status, 400);
    assert.match(missing.body.error, /path/);
    assert.equal((await call('GET', `${relay.api}/queue`)).body.count, before);
  });

  test('retry makes a pending scan due now: Plex gets the refresh and it moves to history', async () => {
    const queued = await call('POST', `${relay.api}/scan`, { path: '/movies/Heat (1995)/' });
    const id = queued.body.scans[0].id;
    const res = await call('POST', `${relay.api}/queue/${id}/retry`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    await waitFor(() => plex.refreshes().some((r) => r.path === '/data/Movies/Heat (1995)'), 15_000, 'refresh of Heat');
    const done = await waitFor(async () => (await call('GET', `${relay.api}/history`)).body.items.find((i: any) => i.id === id && i.status === 'done'), 15_000, 'history entry');
    assert.equal(done.deliveries[0].target, 'plex');
    assert.equal(done.deliveries[0].status, 'done');
    assert.match(done.deliveries[0].detail, /section 1 \(Movies\)/);
    assert.equal(typeof done.tookMs, 'number');

    const twice = await call('POST', `${relay.api}/queue/${id}/retry`);
    assert.equal(twice.status, 409);
    assert.match(twice.body.error, /done/);
    assert.equal((await call('POST', `${relay.api}/queue/999999/retry`)).status, 404);
    const bad = await call('POST', `${relay.api}/queue/abc/retry`);
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /scan id/);
  });

  test('a failed scan can be retried once the cause is fixed', async () => {
    // Accepted while Plex is down (its libraries unknown); once Plex answers, the folder is in no section.
    await plex.setMode('down');
    const queued = await call('POST', `${relay.api}/scan`, { path: '/data/Docs/Planet (2006)/' });
    assert.equal(queued.status, 200);
    const id = queued.body.scans[0].id;
    await plex.setMode('up');
    await call('POST', `${relay.api}/queue/${id}/retry`);
    const failed = await waitFor(async () => (await call('GET', `${relay.api}/history?status=failed`)).body.items.find((i: any) => i.id === id), 15_000, 'failed scan');
    assert.match(failed.deliveries[0].lastError, /in no Plex section/);

    plex.sections = [...plex.sections, { id: '3', title: 'Docs', type: 'movie', locations: ['/data/Docs'] }];
    const res = await call('POST', `${relay.api}/queue/${id}/retry`);
    assert.equal(res.status, 200);
    await waitFor(() => plex.refreshes().some((r) => r.path === '/data/Docs/Planet (2006)' && r.section === '3'), 15_000, 'refresh after retry');
    await waitFor(async () => (await call('GET', `${relay.api}/history?status=done`)).body.items.some((i: any) => i.id === id), 15_000, 'done after retry');
  });

  test('DELETE removes a pending scan; unknown ids 404, finished scans 409', async () => {
    const queued = await call('POST', `${relay.api}/scan`, { path: '/movies/Jaws (1975)/' });
    const id = queued.body.scans[0].id;
    const res = await call('DELETE', `${relay.api}/queue/${id}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(!(await call('GET', `${relay.api}/queue`)).body.items.some((i: any) => i.id === id));
    assert.equal((await call('DELETE', `${relay.api}/queue/${id}`)).status, 404);

    const history = (await call('GET', `${relay.api}/history?status=done`)).body.items;
    const finished = await call('DELETE', `${relay.api}/queue/${history[0].id}`);
    assert.equal(finished.status, 409);
    assert.match(finished.body.error, /done/);
    assert.equal((await call('DELETE', `${relay.api}/queue/0`)).status, 400);
  });

  test('GET history filters by status, source and path text, newest first, and validates its query', async () => {
    // A Sonarr-sourced scan through the intake (the webhook trigger's door), delivered.
    const [sonarr] = await relay.intake.enqueue([{ folder: '/data/TV/Dark/Season 02', source: 'Sonarr', event: 'Download', title: 'Dark' }]);
    await call('POST', `${relay.api}/queue/${sonarr!.id}/retry`);
    await waitFor(async () => (await call('GET', `${relay.api}/history?source=Sonarr`)).body.count === 1, 15_000, 'Sonarr scan in history');

    const all = (await call('GET', `${relay.api}/history`)).body.items;
    assert.ok(all.length >= 3);
    const finished = all.map((i: any) => i.finishedAt);
    assert.deepEqual(finished, [...finished].sort((a, b) => b - a), 'newest first');

    const sonarrOnly = (await call('GET', `${relay.api}/history?source=Sonarr`)).body.items;
    assert.deepEqual(sonarrOnly.map((i: any) => [i.source, i.title, i.folder]), [['Sonarr', 'Dark', '/data/TV/Dark/Season 02']]);
    const failedOnly = (await call('GET', `${relay.api}/history?status=failed`)).body.items;
    assert.ok(failedOnly.every((i: any) => i.status === 'failed'));
    const text = (await call('GET', `${relay.api}/history?text=heat`)).body.items;
    assert.deepEqual(text.map((i: any) => i.folder), ['/data/Movies/Heat (1995)']);
    assert.equal((await call('GET', `${relay.api}/history?limit=1`)).body.items.length, 1);
    assert.equal((await call('GET', `${relay.api}/history?source=&status=`)).body.items.length, all.length, 'empty fields mean any');

    for (const bad of ['status=maybe', 'limit=0', 'limit=5000', 'source=Netflix']) {
      const res = await call('GET', `${relay.api}/history?${bad}`);
      assert.equal(res.status, 400, bad);
      assert.equal(typeof res.body.error, 'string');
    }
  });

  test('a wrong secret gets 404 on every route; plex_autoscan\'s cmd API still answers', async () => {
    const origin = new URL(relay.url).origin;
    for (const [method, path] of [
      ['GET', 'queue'],
      ['GET', 'history'],
      ['GET', 'map?path=/movies/x'],
      ['POST', 'scan'],
      ['POST', 'queue/1/retry'],
      ['DELETE', 'queue/1'],
    ] as const) {
      const res = await call(method, `${origin}/api/wrong/${path}`, method === 'POST' ? { path: '/movies/X/' } : undefined);
      assert.equal(res.status, 404, `${method} ${path}`);
    }
    const cmd = await call('GET', `${relay.api}?cmd=queue_count`);
    assert.equal(cmd.status, 200);
    assert.equal(cmd.body.queue_count, (await call('GET', `${relay.api}/queue`)).body.count);
  });
});

describe('JSON API and dashboard with Basic auth and with manual scans off', () => {
  test('Basic auth is asked on the API and the page; with SERVER_ALLOW_MANUAL_SCAN false the page is 401 but the API works', async () => {
    const plex = await new FakePlex().start();
    const relay = await startWith(plex, { SERVER_AUTH_USER: 'me', SERVER_AUTH_PASS: 'pw', SERVER_ALLOW_MANUAL_SCAN: false });
    try {
      const auth = { authorization: `Basic ${Buffer.from('me:pw').toString('base64')}` };
      assert.equal((await call('GET', `${relay.api}/queue`)).status, 401);
      assert.equal((await call('GET', `${relay.api}/queue`, undefined, auth)).status, 200);
      const page = await call('GET', relay.url, undefined, { ...auth, accept: 'text/html' });
      assert.equal(page.status, 401);
      assert.match(page.body, /SERVER_ALLOW_MANUAL_SCAN/);
      assert.equal((await call('GET', `${relay.url}/parts`, undefined, auth)).status, 401);
      // plex_autoscan never gated the POST on SERVER_ALLOW_MANUAL_SCAN, only the page.
      const posted = await postForm(relay.url, { eventType: 'Manual', filepath: '/movies/Up (2009)/' }, auth);
      assert.equal(posted.status, 200);
    } finally {
      await relay.close();
      await plex.stop();
    }
  });
});
