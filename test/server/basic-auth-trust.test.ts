import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { buildTestApp, SECRET, type TestApp } from '../helpers/app.ts';
import { spawnRelay } from '../helpers/relay.ts';

/*
 * Issue 47 items 4 and 9, at the credential check (server/guard.ts):
 * - autopulse's default admin/password (what import-autopulse carries over) is accepted from loopback, RFC 1918
 *   and ULA addresses (IPv4 ones in IPv6 form too), refused 401 and logged from any other address; the relay
 *   warns at every start and the dashboard shows it.
 * - a failed Basic auth is logged, one line a minute per client, never with the password; it still counts toward
 *   the credential-failure limit; behind SERVER_TRUST_PROXY the client is the address the proxy appended.
 */

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

async function appWith(config: Record<string, unknown>): Promise<{ t: TestApp; lines: Array<Record<string, any>> }> {
  const lines: Array<Record<string, any>> = [];
  const log = pino({ level: 'debug', base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  const t = await buildTestApp({ SERVER_FILE_CHECKS_ENABLED: false, ...config }, { log });
  return { t, lines };
}

const HOME = ['127.0.0.1', '::1', '10.1.2.3', '172.16.0.9', '172.31.255.1', '192.168.1.2', 'fd12:3456::1', 'fc00::5', '::ffff:192.168.1.2', '::ffff:127.0.0.1'];
const OUTSIDE = ['203.0.113.5', '8.8.8.8', '172.32.0.1', '2001:db8::1', '::ffff:203.0.113.5', '100.64.0.1'];

describe("issue 47 item 4: autopulse's default admin/password", () => {
  test('accepted from loopback, RFC 1918 and ULA addresses; refused 401 and logged from any other, on the triggers and the secret URL alike', async () => {
    const { t, lines } = await appWith({ SERVER_AUTH_USER: 'admin', SERVER_AUTH_PASS: 'password', SERVER_AUTOPULSE_TRIGGERS: { manual: { TYPE: 'manual' } } });
    try {
      const ask = (remoteAddress: string, url: string) => t.app.inject({ method: 'GET', url, remoteAddress, headers: { authorization: basic('admin', 'password') } });
      for (const addr of HOME) {
        assert.equal((await ask(addr, `/triggers/manual?path=/data/TV/${encodeURIComponent(addr)}/e.mkv`)).statusCode, 200, addr);
        assert.equal((await ask(addr, `/api/${SECRET}?cmd=queue_count`)).statusCode, 200, addr);
      }
      const queued = t.store.view.listOpen().length;
      for (const addr of OUTSIDE) {
        const res = await ask(addr, `/triggers/manual?path=/data/TV/Out/e.mkv`);
        assert.equal(res.statusCode, 401, `${addr}: ${res.body}`);
        assert.equal((await ask(addr, `/api/${SECRET}?cmd=queue_count`)).statusCode, 401, addr);
        assert.ok(lines.some((l) => l.client === addr && /default admin\/password, from an address that is neither loopback nor a private network/.test(l.msg)), `${addr} logged`);
      }
      assert.equal(t.store.view.listOpen().length, queued, 'nothing queued from outside');
      assert.ok(!lines.some((l) => JSON.stringify(l).includes(basic('admin', 'password').slice(6))), 'the header is never logged');
    } finally {
      await t.close();
    }
  });

  test('another pair is accepted from anywhere, as before', async () => {
    const { t } = await appWith({ SERVER_AUTH_USER: 'admin', SERVER_AUTH_PASS: 'a-strong-one-83kq' });
    try {
      const res = await t.app.inject({ method: 'GET', url: `/api/${SECRET}?cmd=queue_count`, remoteAddress: '203.0.113.5', headers: { authorization: basic('admin', 'a-strong-one-83kq') } });
      assert.equal(res.statusCode, 200);
    } finally {
      await t.close();
    }
  });

  test('the relay warns at start, and the dashboard shows it', async () => {
    const relay = await spawnRelay({ config: { SERVER_AUTH_USER: 'admin', SERVER_AUTH_PASS: 'password', SERVER_ALLOW_MANUAL_SCAN: true } });
    try {
      assert.ok(relay.events().some((e) => e.level === 40 && /SERVER_AUTH_USER and SERVER_AUTH_PASS are autopulse's default admin\/password/.test(e.msg)), relay.logs.join('\n'));
      const page = await fetch(relay.url, { headers: { authorization: basic('admin', 'password') } });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /data-setup-key="SERVER_AUTH_PASS"[^]*autopulse&#39;s default admin\/password|data-setup-key="SERVER_AUTH_PASS"[^]*autopulse's default admin\/password/);
    } finally {
      await relay.kill();
    }
  });
});

describe('issue 47 item 9: a failed Basic auth', () => {
  test('300 failures from one client: one log line, no password; still limited (429 after 20); a second client gets its own line', async () => {
    const { t, lines } = await appWith({ SERVER_AUTH_USER: 'u', SERVER_AUTH_PASS: 'right-pass' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 300; i++) {
        const res = await t.app.inject({ method: 'GET', url: `/api/${SECRET}?cmd=queue_count`, remoteAddress: '198.51.100.4', headers: { authorization: basic('u', `guess-${i}-pw`) } });
        statuses.push(res.statusCode);
      }
      assert.equal(statuses.filter((s) => s === 401).length, 20);
      assert.equal(statuses.filter((s) => s === 429).length, 280);
      const failed = lines.filter((l) => /Basic auth failed/.test(l.msg ?? ''));
      assert.equal(failed.length, 1, JSON.stringify(failed));
      assert.equal(failed[0]!.client, '198.51.100.4');
      assert.match(failed[0]!.msg, /wrong user name or password/);
      const all = JSON.stringify(lines);
      assert.ok(!/guess-\d+-pw/.test(all) && !all.includes('right-pass') && !all.includes(Buffer.from('u:guess-0-pw').toString('base64')), 'no password in the log');
      await t.app.inject({ method: 'GET', url: `/api/${SECRET}?cmd=queue_count`, remoteAddress: '198.51.100.5' });
      assert.equal(lines.filter((l) => /Basic auth failed/.test(l.msg ?? '')).length, 2);
    } finally {
      await t.close();
    }
  });

  test('behind SERVER_TRUST_PROXY true, rotating X-Forwarded-For on autopulse\'s trigger does not escape the limit: the client is the address the proxy appended', async () => {
    const { t, lines } = await appWith({ SERVER_AUTH_USER: 'u', SERVER_AUTH_PASS: 'right-pass', SERVER_TRUST_PROXY: true, SERVER_AUTOPULSE_TRIGGERS: { manual: { TYPE: 'manual' } } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 60; i++) {
        const res = await t.app.inject({
          method: 'GET',
          url: '/triggers/manual?path=/data/TV/A/e.mkv',
          remoteAddress: '172.17.0.1',
          headers: { authorization: basic('u', 'wrong'), 'x-forwarded-for': `203.0.113.${i}, 10.9.${i}.1, 198.51.100.77` },
        });
        statuses.push(res.statusCode);
      }
      assert.equal(statuses.filter((s) => s === 401).length, 20);
      assert.equal(statuses.filter((s) => s === 429).length, 40);
      const failed = lines.filter((l) => /Basic auth failed/.test(l.msg ?? ''));
      assert.deepEqual(failed.map((l) => l.client), ['198.51.100.77']);
    } finally {
      await t.close();
    }
  });
});
