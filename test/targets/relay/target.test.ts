import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { relayTargetSchema } from '../../../src/targets/relay/schema.ts';
import { createRelayTarget, relayRequests } from '../../../src/targets/relay/target.ts';
import { FakeRelayPeer } from '../../fakes/relay-peer.ts';
import { scanItem } from '../../helpers/plex-target.ts';

const silent = pino({ level: 'silent' });
const entry = (over: Record<string, unknown>) => relayTargetSchema.parse({ TYPE: 'relay', ...over });

// autopulse's targets/autopulse.rs:43-56 (GET /triggers/<name>?path=, Basic auth); autoscan's
// triggers/manual/manual.go:49-94 (POST ?dir=; GET is its page) behind router.go:55-59's Basic auth.
describe('relay target', () => {
  test('relayRequests: the request shape for each peer', () => {
    const item = scanItem({ folder: '/tv/A b', files: ['/tv/A b/1.mkv', '/tv/A b/2.mkv'] });
    assert.deepEqual(relayRequests(entry({ URL: 'http://x', SECRET: 'p/w' }), item), [{ method: 'POST', path: '/p%2Fw', body: { eventType: 'Manual', filepath: '/tv/A b' } }]);
    assert.deepEqual(relayRequests(entry({ URL: 'http://x', PEER: 'autopulse', TRIGGER: 'hand' }), item), [
      { method: 'GET', path: '/triggers/hand?path=%2Ftv%2FA+b%2F1.mkv' },
      { method: 'GET', path: '/triggers/hand?path=%2Ftv%2FA+b%2F2.mkv' },
    ]);
    assert.deepEqual(relayRequests(entry({ URL: 'http://x', PEER: 'autoscan' }), item), [{ method: 'POST', path: '/triggers/manual?dir=%2Ftv%2FA+b' }]);
  });

  test('scanrelay peer: POST /<secret> with eventType Manual and the folder (rewritten); a wrong secret (404) is auth, the secret never shown', async () => {
    const peer = await new FakeRelayPeer('scanrelay', { secret: 'other/secret' }).start();
    try {
      const t = createRelayTarget('upstairs', entry({ URL: peer.url, SECRET: 'other/secret', REWRITE: [{ from: '^/mnt/', to: '/srv/' }] }), silent);
      assert.deepEqual(await t.deliver(scanItem({ folder: '/mnt/tv/Dark' })), { outcome: 'done', detail: 'scanrelay: queued' });
      assert.deepEqual(peer.scanned, ['/srv/tv/Dark']);
      const wrong = await createRelayTarget('upstairs', entry({ URL: peer.url, SECRET: 'guessed-wrong' }), silent).deliver(scanItem({ folder: '/tv/Dark' }));
      assert.ok(wrong.outcome === 'retry' && wrong.slow === true && /HTTP 404: check SECRET/.test(wrong.error), JSON.stringify(wrong));
      assert.doesNotMatch(wrong.error, /guessed-wrong/);
      assert.deepEqual(await t.available(), { ok: true });
    } finally {
      await peer.stop();
    }
  });

  test('autopulse peer: GET /triggers/<TRIGGER>?path= per file with Basic auth; a wrong password is 401 (auth), an unknown trigger 404 (failed)', async () => {
    const peer = await new FakeRelayPeer('autopulse', { user: 'admin', pass: 'pw-1', trigger: 'manual' }).start();
    try {
      const t = createRelayTarget('pulse', entry({ URL: peer.url, PEER: 'autopulse', USERNAME: 'admin', PASSWORD: 'pw-1' }), silent);
      assert.equal((await t.deliver(scanItem({ folder: '/tv/A', files: ['/tv/A/1.mkv', '/tv/A/2.mkv'] }))).outcome, 'done');
      assert.deepEqual(peer.scanned, ['/tv/A/1.mkv', '/tv/A/2.mkv']);
      assert.ok(peer.callsTo('GET', '/triggers/manual').every((c) => c.headers.authorization === `Basic ${Buffer.from('admin:pw-1').toString('base64')}`));
      const wrong = await createRelayTarget('pulse', entry({ URL: peer.url, PEER: 'autopulse', USERNAME: 'admin', PASSWORD: 'nope-pw' }), silent).deliver(scanItem({ folder: '/tv/A' }));
      assert.ok(wrong.outcome === 'retry' && wrong.slow === true && !wrong.error.includes('nope-pw'), JSON.stringify(wrong));
      const other = await createRelayTarget('pulse', entry({ URL: peer.url, PEER: 'autopulse', TRIGGER: 'missing', USERNAME: 'admin', PASSWORD: 'pw-1' }), silent).deliver(scanItem({ folder: '/tv/A' }));
      assert.ok(other.outcome === 'failed' && /HTTP 404: Trigger not found/.test(other.error), JSON.stringify(other));
    } finally {
      await peer.stop();
    }
  });

  test('autoscan peer: POST /triggers/manual?dir=<folder> (a GET would only fetch its page); 5xx is retried', async () => {
    const peer = await new FakeRelayPeer('autoscan', { user: 'u', pass: 'p' }).start();
    try {
      const t = createRelayTarget('as', entry({ URL: peer.url, PEER: 'autoscan', USERNAME: 'u', PASSWORD: 'p' }), silent);
      assert.equal((await t.deliver(scanItem({ folder: '/movies/Film (2000)', files: ['/movies/Film (2000)/f.mkv'] }))).outcome, 'done');
      assert.deepEqual(peer.scanned, ['/movies/Film (2000)']);
      assert.deepEqual(peer.calls.filter((c) => c.path.startsWith('/triggers')).map((c) => [c.method, c.status]), [['POST', 200]]);
      await peer.setMode('error503');
      const busy = await t.deliver(scanItem({ folder: '/movies/A' }));
      assert.ok(busy.outcome === 'retry' && !busy.slow, JSON.stringify(busy));
    } finally {
      await peer.stop();
    }
  });
});

test('against a real scanrelay (its own app, not a fake): the scan is queued there; a wrong secret is an auth problem', async () => {
  const { buildTestApp, SECRET } = await import('../../helpers/app.ts');
  const other = await buildTestApp();
  try {
    const url = await other.app.listen({ port: 0, host: '127.0.0.1' });
    const t = createRelayTarget('downstairs', entry({ URL: url, SECRET }), silent);
    const result = await t.deliver(scanItem({ folder: '/data/TV/Dark/Season 01' }));
    assert.ok(result.outcome === 'done' && /^scanrelay: (queued|merged)/.test(result.detail ?? ''), JSON.stringify(result));
    assert.deepEqual(other.store.view.listOpen().map((s) => s.folder), ['/data/TV/Dark/Season 01']);
    const wrong = await createRelayTarget('downstairs', entry({ URL: url, SECRET: 'not-it' }), silent).deliver(scanItem({ folder: '/data/TV/X' }));
    assert.ok(wrong.outcome === 'retry' && wrong.slow === true, JSON.stringify(wrong));
    assert.deepEqual(await t.available(), { ok: true });
  } finally {
    await other.close();
  }
});
