import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { plexSetupProblems } from '../../../src/targets/plex/setup-check.ts';
import { hostKind, plexApiFor, plexTlsPolicy, unverifiedNotice } from '../../../src/targets/plex/tls-policy.ts';
import { PlexApiBackend } from '../../../src/targets/plex/backends/api.ts';
import { FakePlex } from '../../fakes/plex.ts';
import { makePlexTarget, recordingLogger, scanItem, plexSettingsOf, testConfig } from '../../helpers/plex-target.ts';
import { waitFor } from '../../helpers/relay.ts';
import { plexLikeCertificate } from '../../helpers/tls.ts';

/*
 * An https PLEX_LOCAL_URL such as https://127.0.0.1:32400 or https://172.18.0.2:32400: Plex's certificate names
 * *.<hash>.plex.direct, never the address, so a client that checks it refuses the connection. plex_autoscan never
 * checked it in its Plex check (plex.py:615-617, `verify=False`). Here a real HTTPS fake Plex on 127.0.0.1 with a
 * self-signed certificate made for the test by openssl.
 */
describe('TLS to Plex: PLEX_VERIFY_SSL', () => {
  let plex: FakePlex;
  before(async () => {
    plex = await new FakePlex({ token: 'tok' }).useTls(plexLikeCertificate()).start();
  });
  after(async () => plex?.stop());

  const config = (extra: Record<string, unknown>) =>
    testConfig({ PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: 'tok', SERVER_FILE_CHECKS_ENABLED: false, PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, PLEX_ANALYZE_TYPE: 'off', ...extra });

  test('no PLEX_VERIFY_SSL key, https://127.0.0.1: the certificate is not checked and the folder is scanned', async () => {
    assert.match(plex.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(testConfig({}).PLEX_VERIFY_SSL, undefined, 'no default: the address decides');
    assert.equal(testConfig({ PLEX_VERIFY_SSL: null }).PLEX_VERIFY_SSL, undefined, 'null is read as absent');
    const before = plex.refreshes().length;
    const target = makePlexTarget(plex, config({}));
    const result = await target.deliver(scanItem({ folder: '/data/Movies/Heat (1995)' }));
    // The notification stream connects over the same unchecked TLS; once it is in use (its first look at
    // /activities done) it is closed, so it does not talk to Plex during the next test.
    await waitFor(async () => /notification stream \(websocket\)/.test((await target.available()).note ?? ''), 5000, 'stream in use');
    target.close();
    assert.equal(result.outcome, 'done', JSON.stringify(result));
    assert.deepEqual(plex.refreshes().slice(before).map((r) => [r.section, r.path, r.token]), [['1', '/data/Movies/Heat (1995)', 'tok']]);
    assert.match(unverifiedNotice(plexSettingsOf(config({})))!, /^PLEX_LOCAL_URL https:\/\/127\.0\.0\.1:\d+ is a loopback address: Plex's TLS certificate is not checked .*PLEX_VERIFY_SSL/);
  });

  test('PLEX_VERIFY_SSL true wins: a certificate error, a slow retry, one line naming PLEX_VERIFY_SSL and never the token', async () => {
    const { log } = recordingLogger();
    const before = plex.calls.length;
    const result = await makePlexTarget(plex, config({ PLEX_VERIFY_SSL: true }), { log }).deliver(scanItem({ folder: '/data/Movies/Heat (1995)' }));
    assert.equal(result.outcome, 'retry');
    assert.ok(result.outcome === 'retry' && result.slow, 'a setting to change: retried slowly, not hammered');
    assert.match(result.error, /TLS certificate was refused \(DEPTH_ZERO_SELF_SIGNED_CERT\)/);
    assert.match(result.error, /set PLEX_VERIFY_SSL to false/);
    assert.match(result.error, /use http:\/\/ for PLEX_LOCAL_URL on a LAN/);
    assert.doesNotMatch(result.error, /token/i);
    assert.ok(!result.error.includes('\n'), 'one line');
    assert.equal(plex.calls.length, before, `the handshake failed: Plex saw no request ${JSON.stringify(plex.calls.slice(before).map((c) => c.path))}`);
    assert.equal(unverifiedNotice(plexSettingsOf(config({ PLEX_VERIFY_SSL: true }))), undefined);
  });

  test('the start-up check reports a refused certificate under PLEX_VERIFY_SSL, not as a refused PLEX_TOKEN', async () => {
    const c = plexSettingsOf(config({ PLEX_VERIFY_SSL: true }));
    const problems = await plexSetupProblems(c, new PlexApiBackend(plexApiFor(c)));
    assert.equal(problems.length, 1);
    assert.equal(problems[0]!.key, 'PLEX_VERIFY_SSL');
    assert.match(problems[0]!.message, /TLS certificate was refused .*set PLEX_VERIFY_SSL to false/);
    assert.doesNotMatch(problems[0]!.message, /PLEX_TOKEN/);
    const fine = plexSettingsOf(config({}));
    assert.deepEqual(await plexSetupProblems(fine, new PlexApiBackend(plexApiFor(fine))), []);
  });

  test('PLEX_VERIFY_SSL false: the same server is scanned over TLS', async () => {
    const before = plex.refreshes().length;
    const result = await makePlexTarget(plex, config({ PLEX_VERIFY_SSL: false })).deliver(scanItem({ folder: '/data/Movies/Heat (1995)' }));
    assert.equal(result.outcome, 'done', JSON.stringify(result));
    assert.equal(plex.refreshes().length, before + 1);
  });
});

describe('which addresses are checked without a PLEX_VERIFY_SSL key', () => {
  test('loopback and private addresses are not checked; public ones are; an explicit key always wins', () => {
    const cases: Array<[string, boolean, string]> = [
      ['https://127.0.0.1:32400', false, 'loopback'],
      ['https://[::1]:32400', false, 'loopback'],
      ['https://localhost:32400', false, 'loopback'],
      ['https://192.168.1.20:32400', false, 'private'],
      ['https://10.0.0.7:32400', false, 'private'],
      ['https://172.18.0.2:32400', false, 'private'],
      ['https://[fd00::5]:32400', false, 'private'],
      ['https://plex:32400', false, 'private'],
      ['https://nas.local:32400', false, 'private'],
      ['https://172.32.0.1:32400', true, 'public'],
      ['https://203.0.113.9:32400', true, 'public'],
      ['https://plex.example.com', true, 'public'],
      ['https://192-168-1-20.0123456789abcdef.plex.direct:32400', true, 'public'],
      ['http://192.168.1.20:32400', true, 'not-https'],
    ];
    for (const [url, verify, why] of cases) {
      assert.deepEqual(plexTlsPolicy({ URL: url, REQUEST: { VERIFY_SSL: undefined } }), { verify, why }, url);
    }
    assert.deepEqual(plexTlsPolicy({ URL: 'https://127.0.0.1:32400', REQUEST: { VERIFY_SSL: true } }), { verify: true, why: 'key' });
    assert.deepEqual(plexTlsPolicy({ URL: 'https://plex.example.com', REQUEST: { VERIFY_SSL: false } }), { verify: false, why: 'key' });
    assert.equal(hostKind('::ffff:10.1.2.3'), 'private');
  });
});
