import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildTargets } from '../../../src/targets/index.ts';
import { mediaBrowserTarget } from '../../../src/targets/media-browser/target.ts';
import { FakeMediaServer } from '../../fakes/jellyfin.ts';
import { scanItem, testConfig } from '../../helpers/plex-target.ts';

const silent = pino({ level: 'silent' });

describe('Jellyfin and Emby targets', () => {
  let server: FakeMediaServer;
  before(async () => {
    server = await new FakeMediaServer({ apiKey: 'key-1' }).start();
  });
  after(async () => server.stop());

  test('Jellyfin: POST /Library/Media/Updated with Authorization: MediaBrowser Token (a default Jellyfin 12 ignores X-Emby-Token), the files and the trigger\'s update type', async () => {
    server.updates.length = 0;
    const target = mediaBrowserTarget('jellyfin', server.url, 'key-1', silent);
    const result = await target.deliver(scanItem({ folder: '/data/TV/Dark/Season 01', files: ['/data/TV/Dark/Season 01/e1.mkv', '/data/TV/Dark/Season 01/e2.mkv'], updateType: 'Created' }));
    assert.deepEqual(result, { outcome: 'done', detail: '2 path(s) reported as Created' });
    assert.deepEqual(server.updates.map((u) => [u.prefix, u.path, u.updateType]), [
      ['', '/data/TV/Dark/Season 01/e1.mkv', 'Created'],
      ['', '/data/TV/Dark/Season 01/e2.mkv', 'Created'],
    ]);
    assert.equal(server.calls.at(-1)!.status, 204);
    assert.equal(server.calls.at(-1)!.authorization, 'MediaBrowser Token="key-1"');
    assert.equal(server.calls.at(-1)!.embyToken, undefined);
  });

  test('a scan whose file list was cut (files beyond the kept sample) is reported as its folder (issue 35, item 11)', async () => {
    server.updates.length = 0;
    const target = mediaBrowserTarget('jellyfin', server.url, 'key-1', silent);
    const result = await target.deliver(scanItem({ folder: '/data/TV/Big/Season 01', files: ['/data/TV/Big/Season 01/e1.mkv'], moreFiles: 99_999, updateType: 'Created' }));
    assert.deepEqual(result, { outcome: 'done', detail: '1 path(s) reported as Created' });
    assert.deepEqual(server.updates.map((u) => u.path), ['/data/TV/Big/Season 01']);
  });

  test('Jellyfin 10.x (legacy authorization on) takes the same header', async () => {
    const old = await new FakeMediaServer({ apiKey: 'key-10', legacyAuth: true }).start();
    try {
      const result = await mediaBrowserTarget('jellyfin', old.url, 'key-10', silent).deliver(scanItem({ folder: '/data/TV/Dark' }));
      assert.equal(result.outcome, 'done');
      assert.deepEqual(old.updates.map((u) => u.path), ['/data/TV/Dark']);
      assert.deepEqual(await mediaBrowserTarget('jellyfin', old.url, 'key-10', silent).available(), {
        ok: true,
        note: 'scan mode media-updated: Jellyfin 10.9.11, no TargetedScan plugin: Media/Updated scans only the path there',
      });
    } finally {
      await old.stop();
    }
  });

  test('the fake is a default Jellyfin 12: X-Emby-Token, X-Emby-Authorization and api_key are ignored (401) on Jellyfin\'s paths', async () => {
    const body = JSON.stringify({ Updates: [{ Path: '/data/a', UpdateType: 'Modified' }] });
    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }).then((r) => r.status);
    assert.equal(await post('/Library/Media/Updated', { 'x-emby-token': 'key-1' }), 401);
    assert.equal(await post('/Library/Media/Updated', { 'x-emby-authorization': 'MediaBrowser Client="x", Token="key-1"' }), 401);
    assert.equal(await post('/Library/Media/Updated?api_key=key-1', {}), 401);
    assert.equal(await post('/Library/Media/Updated', { authorization: 'MediaBrowser Token="key-1"' }), 204);
    assert.equal(await post('/emby/Library/Media/Updated', { 'x-emby-token': 'key-1' }), 204);
  });

  test('Emby: the same call under /emby (a URL already ending in /emby gets no second prefix); deletes send "Deleted"', async () => {
    server.updates.length = 0;
    await mediaBrowserTarget('emby', server.url, 'key-1', silent).deliver(scanItem({ folder: '/data/Movies/Gone (2000)', updateType: 'Deleted' }));
    await mediaBrowserTarget('emby', `${server.url}/emby/`, 'key-1', silent).deliver(scanItem({ folder: '/data/Movies/Other (2000)', updateType: 'Modified' }));
    assert.deepEqual(server.updates.map((u) => [u.prefix, u.path, u.updateType]), [
      ['/emby', '/data/Movies/Gone (2000)', 'Deleted'],
      ['/emby', '/data/Movies/Other (2000)', 'Modified'],
    ]);
    // Emby keeps X-Emby-Token.
    assert.equal(server.calls.at(-1)!.embyToken, 'key-1');
    assert.deepEqual(await mediaBrowserTarget('emby', server.url, 'key-1', silent).available(), {
      ok: true,
      note: 'scan mode media-updated: Emby 10.9.11, no TargetedScan plugin: Media/Updated scans only the path there',
    });
  });

  test('safety: a wrong key is an auth error (retried slowly, never a crash); a server that is down is retried', async () => {
    const wrong = await mediaBrowserTarget('jellyfin', server.url, 'nope', silent).deliver(scanItem({ folder: '/data/X' }));
    assert.equal(wrong.outcome, 'retry');
    assert.ok(wrong.outcome === 'retry' && wrong.slow && /401/.test(wrong.error));
    const down = await mediaBrowserTarget('jellyfin', 'http://127.0.0.1:9', 'key-1', silent).deliver(scanItem({ folder: '/data/X' }));
    assert.ok(down.outcome === 'retry' && /unreachable/.test(down.error));
    assert.equal((await mediaBrowserTarget('jellyfin', 'http://127.0.0.1:9', 'key-1', silent).available()).ok, false);
  });

  test('the fake binds JSON names case-insensitively, like ASP.NET (autoscan sends path/updateType)', async () => {
    server.updates.length = 0;
    const res = await fetch(`${server.url}/Library/Media/Updated`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'MediaBrowser Token="key-1"' },
      body: JSON.stringify({ Updates: [{ path: '/data/a', updateType: 'Modified' }] }),
    });
    assert.equal(res.status, 204);
    assert.deepEqual(server.updates.map((u) => u.path), ['/data/a']);
  });

  test('buildTargets: PLEX_ENABLED false with only Jellyfin needs no Plex; each enabled server is its own target', async () => {
    const only = await buildTargets(testConfig({ PLEX_ENABLED: false, JELLYFIN: { ENABLED: true, URL: server.url, API_KEY: 'k' } }), silent);
    assert.deepEqual(only.map((t) => t.name), ['jellyfin']);
    const all = await buildTargets(testConfig({ PLEX_TOKEN: 't', JELLYFIN: { ENABLED: true, URL: server.url, API_KEY: 'k' }, EMBY: { ENABLED: true, URL: server.url, API_KEY: 'k' } }), silent);
    assert.deepEqual(all.map((t) => t.name), ['plex', 'jellyfin', 'emby']);
  });
});
