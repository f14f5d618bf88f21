// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.ts';
import { buildTestApp, SECRET } from '../helpers/app.ts';

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const AUTH = { SERVER_AUTH_USER: 'u', SERVER_AUTH_PASS: 'right' };

/**
 * Sends `n` requests with a wrong Basic password from `peer` (the connection's address), each with the
 * X-Forwarded-For `xff(i)` gives, and returns the statuses and the last answer's message.
 */
async function wrongPasswords(trust: unknown, peer: string, n: number, xff: (i: number) => string) {
  const t = await buildTestApp({ ...AUTH, SERVER_TRUST_PROXY: trust });
  try {
    const statuses: number[] = [];
    let last = '';
    for (let i = 0; i < n; i++) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/${SECRET}?cmd=queue_count`,
        remoteAddress: peer,
        headers: { authorization: basic('u', `wrong${i}`), 'x-forwarded-for': xff(i) },
      });
      statuses.push(res.statusCode);
      last = res.body;
    }
    return { statuses, last, count: (s: number) => statuses.filter((x) => x === s).length };
  } finally {
    await t.close();
  }
}

// Addresses a client writes itself: a new one for every request.
const spoofed = (i: number) => `203.0.113.${i % 250}`;

describe('SERVER_TRUST_PROXY reads X-Forwarded-For through the configured hops only (issue 35, item 8)', () => {
  test('true: 100 wrong Basic passwords behind a local proxy, each with a new spoofed entry, are limited after 20', async () => {
    // The proxy appends the address it saw (198.51.100.7) to whatever the client wrote.
    const r = await wrongPasswords(true, '127.0.0.1', 100, (i) => `${spoofed(i)}, 198.51.100.7`);
    assert.equal(r.count(401), 20);
    assert.equal(r.count(429), 80);
    assert.match(r.last, /too many failed attempts from 198\.51\.100\.7/);
  });

  test('true: a client reaching the relay directly from a public address cannot pick its address with the header', async () => {
    const r = await wrongPasswords(true, '198.51.100.20', 30, (i) => spoofed(i));
    assert.equal(r.count(401), 20);
    assert.match(r.last, /too many failed attempts from 198\.51\.100\.20/);
  });

  test('true: a dual-stack socket address (::ffff:10.0.0.5) counts as a private proxy', async () => {
    const r = await wrongPasswords(true, '::ffff:10.0.0.5', 21, () => '198.51.100.8');
    assert.match(r.last, /too many failed attempts from 198\.51\.100\.8/);
  });

  test('a hop count of 2 takes the address the second proxy saw, whatever the client wrote further left', async () => {
    const r = await wrongPasswords(2, '127.0.0.1', 25, (i) => `${spoofed(i)}, 198.51.100.9, 10.0.0.2`);
    assert.equal(r.count(401), 20);
    assert.match(r.last, /too many failed attempts from 198\.51\.100\.9/);
  });

  test('an address list trusts those proxies only: the header from any other peer is ignored', async () => {
    const listed = await wrongPasswords(['10.0.0.0/8', '::1'], '10.1.2.3', 21, () => '198.51.100.10');
    assert.match(listed.last, /too many failed attempts from 198\.51\.100\.10/);
    const other = await wrongPasswords('10.0.0.0/8, ::1', '192.168.1.4', 21, (i) => spoofed(i));
    assert.match(other.last, /too many failed attempts from 192\.168\.1\.4/);
  });

  test('false (the default) ignores the header', async () => {
    const r = await wrongPasswords(false, '127.0.0.1', 21, (i) => spoofed(i));
    assert.match(r.last, /too many failed attempts from 127\.0\.0\.1/);
  });

  test('a value that is no address, range or count is a config error naming the key and the entry', () => {
    assert.throws(() => parseConfig({ SERVER_TRUST_PROXY: ['10.0.0.0/8', 'proxy.lan'] }), /SERVER_TRUST_PROXY\.1: "proxy\.lan" is not an address/);
    assert.throws(() => parseConfig({ SERVER_TRUST_PROXY: '10.0.0.0/40' }), /SERVER_TRUST_PROXY\.0: "10\.0\.0\.0\/40"/);
    assert.throws(() => parseConfig({ SERVER_TRUST_PROXY: -1 }), /SERVER_TRUST_PROXY/);
    assert.deepEqual(parseConfig({ SERVER_TRUST_PROXY: 'loopback, 172.16.0.0/12' }).config.SERVER_TRUST_PROXY, ['loopback', '172.16.0.0/12']);
  });
});
