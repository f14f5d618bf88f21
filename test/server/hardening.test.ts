import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import type { Logger } from '../../src/core/logger.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { connectionCap, softFileLimit } from '../../src/server/limits.ts';
import { redactSecret, shortSecretUrl } from '../../src/server/redact.ts';
import type { Relay } from '../../src/server/run.ts';
import { FakePlex } from '../fakes/plex.ts';
import { buildTestApp, SECRET as TEST_SECRET } from '../helpers/app.ts';
import { ROOT, tempDir } from '../helpers/relay.ts';
import { plexAndRelayForSuite, startRelayAgainst } from '../helpers/suite.ts';

const SECRET = 'hardening-secret';
const sonarr = readFileSync(join(ROOT, 'test', 'fixtures', 'arr', 'sonarr', 'download.json'), 'utf8');
const JSON_TYPE = { 'content-type': 'application/json', accept: 'application/json' };

async function start(plex: FakePlex, extra: Record<string, unknown> = {}, log: Logger = silentLogger()): Promise<Relay & { origin: string; port: number }> {
  const relay = await startRelayAgainst(plex, { SERVER_PASS: SECRET, SERVER_ALLOW_MANUAL_SCAN: true, ...extra }, { log });
  const url = new URL(relay.url);
  return Object.assign(relay, { origin: url.origin, port: Number(url.port) });
}

/**
 * Sends raw bytes and collects what comes back until the server closes the connection. Resolves with the
 * answer and whether the server ended the connection itself.
 */
function raw(port: number, bytes: string): Promise<{ text: string; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString('utf8')));
    socket.on('error', reject);
    socket.on('end', () => {
      socket.destroy();
      resolve({ text, closedByServer: true });
    });
    socket.write(bytes);
  });
}

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

describe('the secret before the body (issue 23, item 2)', () => {
  let plex: FakePlex;
  let relay: Relay & { origin: string; port: number };
  plexAndRelayForSuite(start, (p, r) => {
    plex = p;
    relay = r;
  });

  test('a broken JSON body to a wrong secret is 404, not 400, and the connection is closed', async () => {
    const res = await fetch(`${relay.origin}/wrongsecret`, { method: 'POST', headers: JSON_TYPE, body: '{bad' });
    assert.equal(res.status, 404);
    assert.equal(res.headers.get('connection'), 'close');
    assert.deepEqual(await res.json(), { error: 'not found' });
  });

  test('a wrong secret is answered 404 while its 900 KB body has not been sent, and the server hangs up', async () => {
    // Only the headers and 10 bytes of a 900 KB body: a server that read the body first would wait forever.
    const head = `POST /wrongsecret HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 921600\r\n\r\n{"eventTyp`;
    const { text, closedByServer } = await raw(relay.port, head);
    assert.match(text, /^HTTP\/1\.1 404 /);
    assert.match(text, /\r\nconnection: close\r\n/i);
    assert.ok(closedByServer);
    // A path no route knows is treated the same.
    const other = await raw(relay.port, head.replace('/wrongsecret', '/a/b/c'));
    assert.match(other.text, /^HTTP\/1\.1 404 /);
  });

  test('the right secret still reads the body and queues', async () => {
    const res = await fetch(relay.url, { method: 'POST', headers: JSON_TYPE, body: sonarr });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal((await res.json()).status, 'queued');
  });
});

describe('rate limits that hold (issue 23, item 3)', () => {
  let plex: FakePlex;
  before(async () => {
    plex = await new FakePlex().start();
  });
  after(async () => plex?.stop());

  test('five bad requests do not make a correct Sonarr call get 429 (SERVER_RATE_LIMIT 5)', async () => {
    const relay = await start(plex, { SERVER_RATE_LIMIT: 5 });
    try {
      for (let i = 0; i < 5; i++) {
        const bad = await fetch(`${relay.origin}/not-the-secret`, { method: 'POST', headers: JSON_TYPE, body: sonarr });
        assert.equal(bad.status, 404);
      }
      const good = await fetch(relay.url, { method: 'POST', headers: JSON_TYPE, body: sonarr });
      assert.equal(good.status, 200, await good.clone().text());
      // Real senders are still limited: five answered requests, the sixth is 429.
      const codes: number[] = [];
      for (let i = 0; i < 5; i++) codes.push((await fetch(relay.url, { method: 'POST', headers: JSON_TYPE, body: sonarr })).status);
      assert.deepEqual(codes, [200, 200, 200, 200, 429]);
    } finally {
      await relay.close();
    }
  });

  test('a wrong Basic password on /metrics is limited (429 with Retry-After); the right one still gets through', async () => {
    const relay = await start(plex, { SERVER_AUTH_USER: 'u', SERVER_AUTH_PASS: 'p' });
    try {
      const codes: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 25; i++) {
        const res = await fetch(`${relay.origin}/metrics`, { headers: { authorization: basic('u', 'guess' + i) } });
        codes.push(res.status);
        if (res.status === 429) retryAfter = res.headers.get('retry-after');
        await res.arrayBuffer();
      }
      assert.deepEqual(codes.slice(0, 20), Array(20).fill(401));
      assert.deepEqual(codes.slice(20), Array(5).fill(429));
      assert.match(retryAfter ?? '', /^\d+$/);
      const ok = await fetch(`${relay.origin}/metrics`, { headers: { authorization: basic('u', 'p') } });
      assert.equal(ok.status, 200);
      // And a webhook with the right secret and password is answered too.
      const hook = await fetch(relay.url, { method: 'POST', headers: { ...JSON_TYPE, authorization: basic('u', 'p') }, body: sonarr });
      assert.equal(hook.status, 200);
    } finally {
      await relay.close();
    }
  });

  test('guessing the secret on /<any>/parts, /<any>/dashboard.js and /api/<any>/map is limited', async () => {
    const relay = await start(plex);
    try {
      const paths = ['/x/parts', '/x/dashboard.js', '/api/x/map?path=/tv', '/api/x/queue'];
      const codes: number[] = [];
      for (let i = 0; i < 24; i++) {
        const res = await fetch(`${relay.origin}${paths[i % paths.length]!.replace('x', 'guess' + i)}`);
        codes.push(res.status);
        await res.arrayBuffer();
      }
      assert.deepEqual(codes.slice(0, 20), Array(20).fill(404));
      assert.deepEqual(codes.slice(20), Array(4).fill(429));
      // The dashboard with the right secret is not blocked.
      const page = await fetch(relay.url, { headers: { accept: 'text/html' } });
      assert.equal(page.status, 200);
    } finally {
      await relay.close();
    }
  });

  test('authenticated dashboard routes are limited too (in a bucket of their own)', async () => {
    const relay = await start(plex, { SERVER_RATE_LIMIT: 1 });
    try {
      // 10x SERVER_RATE_LIMIT, at least 600 a minute, per route.
      let status = 0;
      let n = 0;
      while (n < 700) {
        const res = await fetch(`${relay.url}/dashboard.js`);
        status = res.status;
        await res.arrayBuffer();
        n++;
        if (status === 429) break;
      }
      assert.equal(status, 429);
      assert.equal(n, 601);
    } finally {
      await relay.close();
    }
  });

  test('SERVER_TRUST_PROXY: failures count per X-Forwarded-For address; off (default), the header is ignored', async () => {
    const trusting = await start(plex, { SERVER_TRUST_PROXY: true });
    const plain = await start(plex);
    try {
      const wrong = (r: typeof trusting, ip: string) =>
        fetch(`${r.origin}/nope`, { method: 'POST', headers: { ...JSON_TYPE, 'x-forwarded-for': ip }, body: '{}' }).then((res) => res.status);
      for (let i = 0; i < 20; i++) assert.equal(await wrong(trusting, '10.0.0.1'), 404);
      assert.equal(await wrong(trusting, '10.0.0.1'), 429);
      assert.equal(await wrong(trusting, '10.0.0.2'), 404, 'another client behind the proxy is not blocked');

      for (let i = 0; i < 20; i++) assert.equal(await wrong(plain, `10.0.0.${i}`), 404);
      assert.equal(await wrong(plain, '10.9.9.9'), 429, 'without SERVER_TRUST_PROXY every forwarded address is the proxy itself');
    } finally {
      await trusting.close();
      await plain.close();
    }
  });
});

describe('browser hardening (issue 23, item 8)', () => {
  let plex: FakePlex;
  let relay: Relay & { origin: string; port: number };
  plexAndRelayForSuite(start, (p, r) => {
    plex = p;
    relay = r;
  });

  test('the dashboard is sent with CSP, frame-ancestors none, nosniff and no-referrer', async () => {
    const res = await fetch(relay.url, { headers: { accept: 'text/html' } });
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    // The JSON API and errors carry them too.
    const api = await fetch(`${relay.origin}/api/${SECRET}/queue`);
    assert.equal(api.headers.get('referrer-policy'), 'no-referrer');
  });

  test('a POST whose Origin is another site is refused 403 and queues nothing; same-site and no Origin pass', async () => {
    const before = await relay.store.countOpen();
    const form = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    const body = 'eventType=Manual&filepath=/tv/Show/Season 01/e1.mkv';
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${relay.port + 1}`]) {
      const res = await fetch(relay.url, { method: 'POST', headers: { ...form, origin }, body });
      assert.equal(res.status, 403, origin);
      assert.match((await res.json()).error, /cross-site/);
    }
    const del = await fetch(`${relay.origin}/api/${SECRET}/queue/1`, { method: 'DELETE', headers: { origin: 'http://evil.example' } });
    assert.equal(del.status, 403);
    assert.equal(relay.store.countOpen(), before, 'nothing queued');
    const same = await fetch(relay.url, { method: 'POST', headers: { ...form, origin: relay.origin }, body });
    assert.equal(same.status, 200);
    const hook = await fetch(relay.url, { method: 'POST', headers: JSON_TYPE, body: sonarr });
    assert.equal(hook.status, 200);
    assert.equal(relay.store.countOpen(), before + 2);
  });
});

describe('the secret in logs (issue 23, item 4)', () => {
  test('a 5xx logs the URL with the secret redacted', async () => {
    const plex = await new FakePlex().start();
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(s) }) as unknown as Logger;
    const relay = await start(plex, {}, log);
    try {
      relay.store.close(); // every queue write now fails: a real 500
      const res = await fetch(`${relay.url}?x=1`, { method: 'POST', headers: JSON_TYPE, body: sonarr });
      assert.equal(res.status, 500);
      const errors = lines.map((l) => JSON.parse(l)).filter((e) => e.level >= 50);
      assert.ok(errors.length > 0);
      for (const e of errors) assert.ok(!JSON.stringify(e).includes(SECRET), JSON.stringify(e));
      assert.equal(errors.find((e) => /internal error/.test(e.msg))?.url, '/<secret>?x=1');
      // The start line shows the scan URL shortened, never the secret (the starter-file case is in the e2e test).
      const startLine = lines.map((l) => JSON.parse(l)).find((e) => /^scan URL/.test(e.msg));
      assert.ok(startLine);
      assert.ok(!JSON.stringify(startLine).includes(SECRET));
      assert.match(startLine.msg, /\/hard… \(the full secret is SERVER_PASS in /);
    } finally {
      await relay.close().catch(() => {});
      await plex.stop();
    }
  });
});

describe("the relay's own disk is no oracle (issue 23, item 5)", () => {
  test('/api/<secret>/map answers alike for an existing and a missing file outside every mapping; inside a mapping the disk decides', async () => {
    const plex = await new FakePlex().start();
    const local = tempDir();
    mkdirSync(join(local, 'Movies', 'Odd.mkv'), { recursive: true }); // a folder whose name looks like a file
    const relay = await start(plex, { SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${local}/`]: ['/data/'] } });
    try {
      const map = async (path: string) => (await (await fetch(`${relay.origin}/api/${SECRET}/map?path=${encodeURIComponent(path)}`)).json()).folder;
      // /etc/passwd exists on every Linux host; /etc/no-such-file does not. Neither is looked at.
      assert.equal(await map('/etc/passwd'), '/etc/passwd');
      assert.equal(await map('/etc/no-such-file-here'), '/etc/no-such-file-here');
      assert.equal(await map('/etc/hostname.txt'), '/etc');
      // Inside a SERVER_FILE_EXIST_PATH_MAPPINGS key the file system still decides.
      assert.equal(await map('/data/Movies/Odd.mkv'), '/data/Movies/Odd.mkv');
    } finally {
      await relay.close();
      await plex.stop();
    }
  });
});

describe('unbounded fan-out (issue 23, item 6)', () => {
  const sonarrWith = (files: number, folders: number) => {
    const payload = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'arr', 'sonarr', 'download-v4-multi.json'), 'utf8'));
    payload.episodeFiles = Array.from({ length: files }, (_, i) => ({ path: `/tv/W/S${i % folders}/${i}.mkv` }));
    return JSON.stringify(payload);
  };

  test('25,000 episodeFiles in 25,000 folders (an 850 KB payload) is refused 400 and queues nothing', async () => {
    const t = await buildTestApp({ SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'] } });
    try {
      const res = await t.app.inject({ method: 'POST', url: `/${TEST_SECRET}`, payload: sonarrWith(25_000, 25_000), headers: JSON_TYPE });
      assert.equal(res.statusCode, 400);
      assert.match(res.json().error, /more than 1000 folders/);
      assert.equal(t.store.countOpen(), 0);
    } finally {
      await t.close();
    }
  });

  test('25,000 episodeFiles in 20 folders queue 20 scans, each listing its files', async () => {
    const t = await buildTestApp({ SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'] } });
    try {
      const res = await t.app.inject({ method: 'POST', url: `/${TEST_SECRET}`, payload: sonarrWith(25_000, 20), headers: JSON_TYPE });
      assert.equal(res.statusCode, 200);
      assert.equal(t.store.countOpen(), 20);
      const s0 = t.store.view.listOpen(1000).find((e) => e.folder === '/data/TV/W/S0')!;
      // Every file counted; the scan keeps a sample of 1,000 of them (issue 35, item 11).
      assert.equal(s0.fileCount, 1250);
      assert.equal(t.store.view.get(s0.id)!.files.length, 1000);
      assert.equal(s0.requests, 1, 'one request per folder, not one per file');
    } finally {
      await t.close();
    }
  });

  test('exactly 1,000 folders is accepted', async () => {
    const t = await buildTestApp({ SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'] } });
    try {
      const res = await t.app.inject({ method: 'POST', url: `/${TEST_SECRET}`, payload: sonarrWith(2000, 1000), headers: JSON_TYPE });
      assert.equal(res.statusCode, 200);
      assert.equal(t.store.countOpen(), 1000);
    } finally {
      await t.close();
    }
  });
});

describe('small truths (issue 23, item 10)', () => {
  test('/api/<secret>/queue gives the real count and pages the list', async () => {
    const plex = await new FakePlex().start();
    const relay = await start(plex);
    try {
      const paths = Array.from({ length: 620 }, (_, i) => `/tv/Show ${i}/e.mkv`);
      for (const filepath of paths) {
        const res = await fetch(relay.url, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ eventType: 'Manual', filepath }) });
        assert.equal(res.status, 200);
      }
      const first = await (await fetch(`${relay.origin}/api/${SECRET}/queue`)).json();
      assert.equal(first.count, 620);
      assert.equal(first.items.length, 500);
      const rest = await (await fetch(`${relay.origin}/api/${SECRET}/queue?offset=500&limit=500`)).json();
      assert.equal(rest.count, 620);
      assert.equal(rest.items.length, 120);
      const ids = new Set([...first.items, ...rest.items].map((i: { id: number }) => i.id));
      assert.equal(ids.size, 620, 'the pages do not overlap');
      const bad = await fetch(`${relay.origin}/api/${SECRET}/queue?limit=0`);
      assert.equal(bad.status, 400);
    } finally {
      await relay.close();
      await plex.stop();
    }
  });

  test('/api/<secret>/map asks Plex once for a folder in no section, not on every request', async () => {
    const plex = await new FakePlex().start();
    const relay = await start(plex);
    try {
      const sectionCalls = () => plex.callsTo('GET', /^\/library\/sections(\/all)?$/).length;
      const ask = async () => (await (await fetch(`${relay.origin}/api/${SECRET}/map?path=${encodeURIComponent('/nowhere/x/a.mkv')}`)).json()).sectionError;
      assert.match(await ask(), /no Plex section/);
      const after1 = sectionCalls();
      for (let i = 0; i < 5; i++) assert.match(await ask(), /no Plex section/);
      assert.equal(sectionCalls(), after1);
    } finally {
      await relay.close();
      await plex.stop();
    }
  });
});

describe('cross-site refusal with Fetch Metadata (issue 23, item 8)', () => {
  test('Sec-Fetch-Site cross-site or same-site is refused; same-origin passes even with Origin: null (no-referrer forms)', async () => {
    const plex = await new FakePlex().start();
    const relay = await start(plex);
    try {
      const form = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
      const body = 'eventType=Manual&filepath=/tv/Other/e1.mkv';
      for (const site of ['cross-site', 'same-site']) {
        const res = await fetch(relay.url, { method: 'POST', headers: { ...form, 'sec-fetch-site': site }, body });
        assert.equal(res.status, 403, site);
      }
      assert.equal(relay.store.countOpen(), 0);
      const own = await fetch(relay.url, { method: 'POST', headers: { ...form, 'sec-fetch-site': 'same-origin', origin: 'null' }, body });
      assert.equal(own.status, 200);
    } finally {
      await relay.close();
      await plex.stop();
    }
  });
});

describe('connection cap and redaction helpers (issue 23, items 1 and 4)', () => {
  test('the cap is read from the soft open-file limit and stays below it', () => {
    const limits = 'Limit                     Soft Limit           Hard Limit           Units     \nMax open files            1024                 524288               files     \n';
    assert.equal(softFileLimit(limits), 1024);
    assert.equal(softFileLimit('Max open files            unlimited            unlimited            files\n'), undefined);
    assert.equal(connectionCap(1024), 896);
    assert.ok(connectionCap(65536) < 65536);
    assert.ok(connectionCap(100) < 100 && connectionCap(100) >= 16);
  });

  test('the secret is redacted from URLs, plain or percent-encoded; the short form shows four characters', () => {
    assert.equal(redactSecret('/s3cret/parts?x=1', 's3cret'), '/<secret>/parts?x=1');
    assert.equal(redactSecret('/a%20b/parts', 'a b'), '/<secret>/parts');
    assert.equal(shortSecretUrl('http://localhost:3468', 'ab12cd34'), 'http://localhost:3468/ab12…');
  });
});
