import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { buildTestApp } from '../helpers/app.ts';
import { spawnRelay } from '../helpers/relay.ts';

const run = promisify(execFile);

/*
 * plex_autoscan's Flask routes are "/<SERVER_PASS>" and "/api/<SERVER_PASS>" (scan.py:242,279,313),
 * matched against the decoded path: a secret "a b/c" answers at /a%20b/c and /a%20b%2Fc, and a long
 * secret is just a long path. Checked with Flask's test client: "/a/b" and "/a%2Fb" both reach the
 * rule "/a/b"; "/my%20pass" reaches "/my pass".
 */
const manual = (url: string) => ({ method: 'POST' as const, url, payload: { eventType: 'Manual', filepath: '/data/Movies/M (2000)/m.mkv' } });

describe('any SERVER_PASS plex_autoscan served', () => {
  test('a secret with a space and "/" answers typed as it is and percent-encoded, for scans, the page and the API', async () => {
    const t = await buildTestApp({ SERVER_PASS: 'my pass/part2', SERVER_ALLOW_MANUAL_SCAN: true });
    try {
      for (const url of ['/my%20pass/part2', '/my%20pass%2Fpart2', '/my%20pass%2fpart2']) {
        const res = await t.app.inject(manual(url));
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      }
      assert.equal((await t.app.inject({ url: '/my%20pass/part2', headers: { accept: 'text/html' } })).statusCode, 200);
      const api = await t.app.inject({ url: '/api/my%20pass/part2?cmd=queue_count' });
      assert.equal(api.statusCode, 200, api.body);
      assert.equal(api.json().queue_count, 1);
      // Wrong secrets stay 404, and other routes are untouched.
      for (const url of ['/my%20pass', '/my%20pass/part3', '/my%20pass/part2x', '/my%20pass/part2/extra', '/other']) {
        assert.equal((await t.app.inject(manual(url))).statusCode, 404, url);
      }
      assert.equal((await t.app.inject({ url: '/healthz' })).statusCode, 200);
    } finally {
      await t.close();
    }
  });

  test('a secret longer than 100 characters works (fastify answered 414 to every request)', async () => {
    const secret = 'k'.repeat(160);
    const t = await buildTestApp({ SERVER_PASS: secret });
    try {
      assert.equal((await t.app.inject(manual(`/${secret}`))).statusCode, 200);
      assert.equal((await t.app.inject({ url: `/api/${secret}?cmd=queue_count` })).json().queue_count, 1);
      assert.equal((await t.app.inject(manual(`/${'k'.repeat(159)}j`))).statusCode, 404);
    } finally {
      await t.close();
    }
  });
});

describe('a SERVER_PASS with a space and "/" on the real server', () => {
  test('the start line shows the encoded URL, and curl reaches it typed either way; a warning says so once', async () => {
    const relay = await spawnRelay({ config: { SERVER_PASS: 'my pass/2', SERVER_SCAN_DELAY: 600 } });
    try {
      assert.match(relay.url, /\/my%20pass%2F2$/);
      for (const path of ['my%20pass/2', 'my%20pass%2F2']) {
        const { stdout } = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-d', 'eventType=Manual', '-d', 'filepath=/data/Movies/M (2000)/m.mkv', `${relay.base}/${path}`]);
        assert.equal(stdout, '200', path);
      }
      assert.equal(relay.events().filter((e) => typeof e.msg === 'string' && e.msg.includes('the scan URL is /my%20pass%2F2')).length, 1);
    } finally {
      await relay.kill();
    }
  });
});
