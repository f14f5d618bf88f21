import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { redactSecrets } from '../../src/targets/http.ts';
import { targetSecrets } from '../../src/targets/redact.ts';
import { runCli, spawnRelay, waitFor, type RelayProcess } from '../helpers/relay.ts';

/*
 * Issue 47 item 6: a server that echoes its request (a debugging proxy in front of Plex, an error page quoting
 * the request) answered 500 with the token in its text, and classifyStatus quoted 200 characters of it into
 * the delivery's error: the log, the queue API, the dashboard and `scanrelay queue` showed X-Plex-Token, the
 * Jellyfin key and the Basic-auth header. Each kind's errors now pass through one redaction of its secrets.
 */

const PLEX_TOKEN = 'plexTok-8Qz1rW';
const JF_KEY = 'jfKey-77aa93c1';
const SONARR_KEY = 'sonKey-4e4e4e';
const HEADER_SECRET = 'Bearer hdr-Secret-991';
const PEER_PASS = 'peer-Pass-3141';
const BASIC = Buffer.from(`relayuser:${PEER_PASS}`).toString('base64');
const FORMS = [PLEX_TOKEN, JF_KEY, SONARR_KEY, 'hdr-Secret-991', PEER_PASS, BASIC, encodeURIComponent(`"${JF_KEY}"`), Buffer.from(PLEX_TOKEN).toString('base64')];

/** Answers every request 500 with the request itself first: its URL, every header, and the token in base64 and URL-encoded. */
function echoServer(): Promise<{ url: string; calls: number; close(): Promise<void> }> {
  const state = { calls: 0 };
  const server = http.createServer((req, res) => {
    state.calls++;
    const token = String(req.headers['x-plex-token'] ?? req.headers['x-api-key'] ?? req.headers.authorization ?? '');
    const lines = [
      `echo ${req.method} ${req.url}`,
      ...Object.entries(req.headers).map(([k, v]) => `${k}: ${String(v)}`),
      `b64 ${Buffer.from(token).toString('base64')}`,
      `enc ${encodeURIComponent(token)}`,
    ];
    res.writeHead(500, { 'content-type': 'text/plain' }).end(lines.join(' | '));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        get calls() {
          return state.calls;
        },
        close: () => new Promise<void>((r) => server.close(() => r())),
      }),
    ),
  );
}

const leaks = (text: string) => FORMS.filter((f) => text.includes(f));

test('redactSecrets takes a secret out raw, URL-encoded and in base64; targetSecrets finds the credential keys, headers, URL password and Basic pair', () => {
  const secrets = targetSecrets({ TYPE: 'relay', URL: 'http://u:url%40pw@h/x?token=qtok123', USERNAME: 'relayuser', PASSWORD: PEER_PASS, SECRET: 'relaySecret', REQUEST: { HEADERS: { Authorization: HEADER_SECRET } } });
  for (const s of [PEER_PASS, 'relaySecret', HEADER_SECRET, 'hdr-Secret-991', 'url@pw', 'qtok123', `relayuser:${PEER_PASS}`]) assert.ok(secrets.includes(s), s);
  const text = `raw ${PEER_PASS} enc ${encodeURIComponent('url@pw')} basic ${BASIC} b64 ${Buffer.from('relaySecret').toString('base64')}`;
  const out = redactSecrets(text, secrets);
  assert.equal(out, 'raw *** enc *** basic *** b64 ***');
});

describe('an echoing server never gets a secret into the log, the queue API, the dashboard or `scanrelay queue`', () => {
  let echo: Awaited<ReturnType<typeof echoServer>>;
  let relay: RelayProcess;
  before(async () => {
    echo = await echoServer();
    relay = await spawnRelay({
      config: {
        SERVER_SCAN_DELAY: 0,
        PLEX_LOCAL_URL: echo.url,
        PLEX_TOKEN,
        TARGETS: {
          jf: { TYPE: 'jellyfin', URL: echo.url, API_KEY: JF_KEY },
          son: { TYPE: 'sonarr', URL: echo.url, API_KEY: SONARR_KEY, REQUEST: { HEADERS: { 'X-Extra-Auth': HEADER_SECRET } } },
          peer: { TYPE: 'relay', URL: echo.url, PEER: 'autoscan', USERNAME: 'relayuser', PASSWORD: PEER_PASS },
        },
      },
    });
  });
  after(async () => {
    await relay?.kill();
    await echo?.close();
  });

  test('each target failed against the echo, and no text anywhere holds a secret in any form', async () => {
    const res = await fetch(relay.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ eventType: 'Manual', filepath: '/data/TV/Show/e01.mkv' }) });
    assert.equal(res.status, 200, await res.text());
    // Every target tried once and recorded its error (the echo's text, quoted).
    const api = `${relay.base}/api/${encodeURIComponent(relay.secret)}/queue`;
    const queue = (await waitFor(
      async () => {
        const body = await (await fetch(api)).text();
        const errors = (body.match(/HTTP 500/g) ?? []).length;
        return errors >= 4 ? body : undefined;
      },
      60_000,
      'four deliveries with an error',
    )) as string;
    assert.ok(echo.calls >= 4);
    assert.match(queue, /echo (GET|POST)/, 'the echoed text is quoted, only without its secrets');
    assert.deepEqual(leaks(queue), [], queue);
    const page = await (await fetch(relay.url)).text();
    assert.deepEqual(leaks(page), [], 'dashboard');
    const cli = await runCli(['--config', relay.configPath, '--queuefile', relay.queuefile, 'queue']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /HTTP 500/);
    assert.deepEqual(leaks(cli.stdout + cli.stderr), [], cli.stdout);
    const log = relay.logs.join('\n');
    assert.match(log, /HTTP 500/);
    assert.deepEqual(leaks(log), [], log.split('\n').filter((l) => leaks(l).length).join('\n'));
  });
});
