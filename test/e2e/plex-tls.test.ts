import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FakePlex } from '../fakes/plex.ts';
import { postForm, spawnRelay, waitFor } from '../helpers/relay.ts';
import { plexLikeCertificate } from '../helpers/tls.ts';

/*
 * The relay as a user starts it, against an https Plex on 127.0.0.1 whose certificate is self-signed for
 * *.plex.direct. plex_autoscan's Plex check never verified (plex.py:615-617, verify=False).
 */
let plex: FakePlex;
before(async () => {
  plex = await new FakePlex().useTls(plexLikeCertificate()).start();
});
after(async () => plex.stop());

const base = () => ({ PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_SCAN_DELAY: 0, PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false });

test('no PLEX_VERIFY_SSL key: one start-up line says the loopback address is not checked, and scans reach Plex', async () => {
  const relay = await spawnRelay({ config: base() });
  try {
    const notice = await relay.waitForLog((e) => e.key === 'PLEX_VERIFY_SSL');
    assert.match(notice.msg, /is a loopback address: Plex's TLS certificate is not checked/);
    const answer = await postForm(relay.url, { eventType: 'Manual', filepath: '/data/Movies/Heat (1995)/Heat.mkv' });
    assert.equal(answer.status, 200, answer.text);
    await waitFor(() => plex.refreshes().some((r) => r.path === '/data/Movies/Heat (1995)'), 10_000, 'the scan');
    assert.equal(relay.events().filter((e) => e.key === 'PLEX_VERIFY_SSL').length, 1, 'logged once');
    assert.equal(relay.events().filter((e) => e.level === 40 && e.key === 'PLEX_TOKEN').length, 0, 'the token is not blamed');
  } finally {
    await relay.kill();
  }
});

test('PLEX_VERIFY_SSL true: the start-up check and the queued scan both report a certificate error naming PLEX_VERIFY_SSL', async () => {
  const relay = await spawnRelay({ config: { ...base(), PLEX_VERIFY_SSL: true } });
  try {
    const start = await relay.waitForLog((e) => e.level === 40 && e.target === 'plex' && typeof e.key === 'string');
    assert.equal(start.key, 'PLEX_VERIFY_SSL');
    assert.match(start.msg, /TLS certificate was refused \(DEPTH_ZERO_SELF_SIGNED_CERT\).*set PLEX_VERIFY_SSL to false/);
    const before = plex.refreshes().length;
    await postForm(relay.url, { eventType: 'Manual', filepath: '/data/Movies/Ronin (1998)/Ronin.mkv' });
    const retry = await relay.waitForLog((e) => e.msg === 'scan not delivered yet; will retry');
    assert.match(retry.error, /TLS certificate was refused.*PLEX_VERIFY_SSL/);
    assert.doesNotMatch(retry.error, /token/i);
    assert.equal(plex.refreshes().length, before);
  } finally {
    await relay.kill();
  }
});
