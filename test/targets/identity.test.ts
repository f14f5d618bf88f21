import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { buildTargets } from '../../src/targets/index.ts';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakePlex } from '../fakes/plex.ts';
import { testConfig } from '../helpers/plex-target.ts';

// Who a target's server is (Target.identity): what relays sharing a queue tell servers apart by.

const silent = pino({ level: 'silent' });

describe('target identity', () => {
  let plex: FakePlex;
  let media: FakeMediaServer;
  before(async () => {
    plex = await new FakePlex({ friendlyName: 'Living Room' }).start();
    media = await new FakeMediaServer({ apiKey: 'key-1', name: 'Den' }).start();
  });
  after(async () => {
    await plex.stop();
    await media.stop();
  });

  test('Plex: machineIdentifier from GET /identity and friendlyName from GET /; the same id through another URL of the same server', async () => {
    const [target] = await buildTargets(testConfig({ PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token }), silent);
    assert.deepEqual(await target!.identity!(), { id: plex.machineIdentifier, name: 'Living Room' });
    const [viaLocalhost] = await buildTargets(testConfig({ PLEX_LOCAL_URL: plex.url.replace('127.0.0.1', 'localhost'), PLEX_TOKEN: plex.token }), silent);
    assert.equal((await viaLocalhost!.identity!())?.id, plex.machineIdentifier);
    assert.match(plex.machineIdentifier, /^[0-9a-f]{40}$/);
    assert.notEqual(new FakePlex().machineIdentifier, plex.machineIdentifier, 'another Plex, another id');
  });

  test('Plex without a token (the scanner method): /identity needs none, so the id is known; no name', async () => {
    const [target] = await buildTargets(testConfig({ PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: '', PLEX_SCAN_METHOD: 'scanner' }), silent);
    assert.deepEqual(await target!.identity!(), { id: plex.machineIdentifier });
    const asked = plex.calls.filter((c) => c.path === '/identity').at(-1)!;
    assert.equal(asked.tokenIn, 'none');
    assert.equal(asked.status, 200);
  });

  test('Plex down: identity() throws, saying what failed', async () => {
    const down = await new FakePlex().start();
    await down.stop();
    const [target] = await buildTargets(testConfig({ PLEX_LOCAL_URL: down.url, PLEX_TOKEN: 'x' }), silent);
    await assert.rejects(target!.identity!(), /identity/);
  });

  test('something that answers HTTP but not /identity (a 404, a page that is not the JSON asked for): no id, never; a 503 or no answer: not yet (throws)', async () => {
    const answers: Array<[number, string, string]> = [];
    const standIn: Server = createServer((req, res) => {
      const [status, type, body] = answers[0]!;
      res.writeHead(status, { 'content-type': type }).end(body);
    });
    await new Promise<void>((r) => standIn.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
      const [target] = await buildTargets(testConfig({ PLEX_LOCAL_URL: url, PLEX_TOKEN: 'x' }), silent);
      answers[0] = [404, 'text/html', '<html><body>404 Not Found</body></html>'];
      assert.equal(await target!.identity!(), undefined);
      answers[0] = [200, 'text/html', '<html><body>Welcome to nginx!</body></html>'];
      assert.equal(await target!.identity!(), undefined);
      answers[0] = [200, 'application/json', '{"MediaContainer":{"size":0}}'];
      assert.equal(await target!.identity!(), undefined, 'an identity answer without machineIdentifier');
      answers[0] = [503, 'text/html', '<html><body>503 Service Unavailable</body></html>'];
      await assert.rejects(target!.identity!(), /503/);
      const [jellyfin] = await buildTargets(testConfig({ PLEX_ENABLED: false, JELLYFIN: { ENABLED: true, URL: url, API_KEY: 'k' } }), silent);
      answers[0] = [404, 'text/plain', 'not here'];
      assert.equal(await jellyfin!.identity!(), undefined);
    } finally {
      await new Promise((r) => standIn.close(r));
    }
  });

  test('Jellyfin and Emby: Id and ServerName from GET /System/Info/Public (Emby under /emby), which needs no key', async () => {
    const targets = await buildTargets(
      testConfig({ PLEX_ENABLED: false, JELLYFIN: { ENABLED: true, URL: media.url, API_KEY: 'wrong-key' }, EMBY: { ENABLED: true, URL: media.url, API_KEY: 'wrong-key' } }),
      silent,
    );
    assert.deepEqual(targets.map((t) => t.name), ['jellyfin', 'emby']);
    for (const t of targets) assert.deepEqual(await t.identity!(), { id: media.id, name: 'Den' });
    assert.deepEqual(
      media.calls.filter((c) => /info\/public/i.test(c.path)).map((c) => [c.path, c.status]),
      [['/System/Info/Public', 200], ['/emby/System/Info/Public', 200]],
    );
    // The rest of the API still wants the key.
    assert.equal((await targets[0]!.available()).ok, false);
  });
});
