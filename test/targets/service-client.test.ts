import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { z } from 'zod';
import { classifyServiceStatus, ServiceClient, TargetError, TlsError } from '../../src/targets/http.ts';
import { FakeTdarr } from '../fakes/tdarr.ts';
import { plexLikeCertificate } from '../helpers/tls.ts';

const request = (over: Partial<{ TIMEOUT: number; VERIFY_SSL: boolean; HEADERS: Record<string, string> }> = {}) => ({ TIMEOUT: 30, VERIFY_SSL: true, HEADERS: {}, ...over });

test('classifyServiceStatus: 401/403 auth, 408/429/5xx unavailable, other 4xx fatal (404 hints at the URL base), 2xx none', () => {
  const table: Array<[number, 'auth' | 'unavailable' | 'fatal' | undefined]> = [
    [200, undefined], [201, undefined], [204, undefined],
    [401, 'auth'], [403, 'auth'],
    [408, 'unavailable'], [429, 'unavailable'], [500, 'unavailable'], [502, 'unavailable'], [503, 'unavailable'],
    [400, 'fatal'], [404, 'fatal'], [405, 'fatal'], [422, 'fatal'],
  ];
  for (const [status, kind] of table) assert.equal(classifyServiceStatus(status, 'X')?.kind, kind, String(status));
  assert.match(classifyServiceStatus(404, 'Sonarr command')!.message, /^Sonarr command answered HTTP 404 \(check the URL, and its URL base/);
});

test('REQUEST.TIMEOUT: a service that never answers is given up after it, as unavailable (retried)', async () => {
  const silent: Server = createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  try {
    const client = new ServiceClient({ product: 'Sonarr', url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, request: request({ TIMEOUT: 0.2 }) });
    await assert.rejects(client.call('GET', '/api/v3/series', 'series list'), (err: unknown) => err instanceof TargetError && err.kind === 'unavailable' && /timeout/.test(err.message));
  } finally {
    silent.closeAllConnections();
    await new Promise<void>((r) => silent.close(() => r()));
  }
});

test('REQUEST.VERIFY_SSL: a self-signed certificate is refused (TlsError) unless it is false', async () => {
  const tdarr = await new FakeTdarr().useTls(plexLikeCertificate()).start();
  try {
    const strict = new ServiceClient({ product: 'Tdarr', url: tdarr.url, request: request() });
    await assert.rejects(strict.call('GET', '/api/v2/status', 'status'), (err: unknown) => err instanceof TlsError);
    const lax = new ServiceClient({ product: 'Tdarr', url: tdarr.url, request: request({ VERIFY_SSL: false }) });
    assert.deepEqual(await lax.json('GET', '/api/v2/status', 'status', z.looseObject({ status: z.string() })), { status: 'good', isProduction: true, os: 'linux', version: '2.45.01', uptime: 100 });
  } finally {
    await tdarr.stop();
  }
});

test('no secret in an error: the credential, a secret in the URL and its encoded form are replaced by ***', async () => {
  const echo: Server = createServer((req, res) => res.writeHead(400).end(`bad request ${req.url} key=${req.headers['x-api-key']}`));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  try {
    const client = new ServiceClient({ product: 'X', url: `http://127.0.0.1:${(echo.address() as AddressInfo).port}`, request: request(), headers: { 'x-api-key': 'k-123' }, secrets: ['a/b secret'] });
    await assert.rejects(client.call('POST', `/${encodeURIComponent('a/b secret')}`, 'manual scan', {}), (err: unknown) => {
      const message = (err as Error).message;
      assert.ok(err instanceof TargetError && err.kind === 'fatal', message);
      assert.doesNotMatch(message, /k-123|a%2Fb|a\/b secret/);
      assert.match(message, /bad request \/\*\*\* key=\*\*\*/);
      return true;
    });
  } finally {
    await new Promise<void>((r) => echo.close(() => r()));
  }
});

test('a header HTTP does not allow in REQUEST.HEADERS fails the delivery with the setting to fix (no endless retry)', async () => {
  const tdarr = await new FakeTdarr().start();
  try {
    const client = new ServiceClient({ product: 'Tdarr', url: tdarr.url, request: request({ HEADERS: { 'Bad Header': 'x' } }) });
    await assert.rejects(client.call('GET', '/api/v2/status', 'status'), (err: unknown) => err instanceof TargetError && err.kind === 'fatal' && /check REQUEST\.HEADERS \(ERR_INVALID_HTTP_TOKEN\)/.test(err.message));
    const value = new ServiceClient({ product: 'Tdarr', url: tdarr.url, request: request({ HEADERS: { 'X-Ok': 'line\nbreak' } }) });
    await assert.rejects(value.call('GET', '/api/v2/status', 'status'), (err: unknown) => err instanceof TargetError && err.kind === 'fatal');
    assert.equal(tdarr.calls.length, 0);
  } finally {
    await tdarr.stop();
  }
});
