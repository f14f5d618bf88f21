import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakePlex } from '../../fakes/plex.ts';
import { makePlexTarget, recordingLogger, scanItem, testConfig } from '../../helpers/plex-target.ts';
import { tempDir } from '../../helpers/relay.ts';

/*
 * An https PLEX_LOCAL_URL such as https://172.18.0.2:32400: Plex's certificate names *.plex.direct, not
 * the LAN address, so a client that checks it refuses the connection. plex_autoscan checked certificates
 * on its Plex calls (requests' default, plex.py:24, plex.py:589) except /myplex/account (plex.py:615-617,
 * verify=False). Here a real HTTPS fake Plex with a self-signed certificate made for the test.
 */
describe('TLS to Plex: PLEX_VERIFY_SSL', () => {
  let plex: FakePlex;
  before(async () => {
    const dir = tempDir();
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=plex.test'], { stdio: 'ignore' });
    plex = await new FakePlex({ token: 'tok' }).useTls({ key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') }).start();
  });
  after(async () => plex?.stop());

  const config = (extra: Record<string, unknown>) =>
    testConfig({ PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: 'tok', SERVER_FILE_CHECKS_ENABLED: false, PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, PLEX_ANALYZE_TYPE: 'off', ...extra });

  test('by default a self-signed certificate is refused: a slow retry whose one-line error names PLEX_VERIFY_SSL and http://', async () => {
    assert.match(plex.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const { log } = recordingLogger();
    const before = plex.calls.length;
    const result = await makePlexTarget(plex, config({}), { log }).deliver(scanItem({ folder: '/data/Movies/Heat (1995)' }));
    assert.equal(result.outcome, 'retry');
    assert.ok(result.outcome === 'retry' && result.slow, 'a setting to change: retried slowly, not hammered');
    assert.ok(result.outcome === 'retry');
    assert.match(result.error, /TLS certificate was refused \(DEPTH_ZERO_SELF_SIGNED_CERT\)/);
    assert.match(result.error, /PLEX_VERIFY_SSL/);
    assert.match(result.error, /use http:\/\/ for PLEX_LOCAL_URL on a LAN/);
    assert.ok(!result.error.includes('\n'), 'one line');
    assert.equal(plex.calls.length, before, 'the handshake failed: Plex saw no request');
  });

  test('PLEX_VERIFY_SSL false: the same server is scanned over TLS', async () => {
    const result = await makePlexTarget(plex, config({ PLEX_VERIFY_SSL: false })).deliver(scanItem({ folder: '/data/Movies/Heat (1995)' }));
    assert.equal(result.outcome, 'done', JSON.stringify(result));
    assert.deepEqual(plex.refreshes().map((r) => [r.section, r.path, r.token]), [['1', '/data/Movies/Heat (1995)', 'tok']]);
  });

  test('PLEX_VERIFY_SSL is true unless set', () => {
    assert.equal(testConfig({}).PLEX_VERIFY_SSL, true);
  });
});
