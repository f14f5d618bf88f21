import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { RcloneRc } from '../../../src/targets/plex/rclone-rc.ts';
import { FakePlex } from '../../fakes/plex.ts';
import { FakeRcloneRc } from '../../fakes/rclone-rc.ts';
import { makePlexTarget, mediaTree, runQueue, testConfig } from '../../helpers/plex-target.ts';
import { waitFor } from '../../helpers/relay.ts';

const silent = pino({ level: 'silent' });
const settings = (url: string) => ({ ENABLED: true, RC_URL: url, FILE_EXISTS_TO_REMOTE_MAPPINGS: { 'Media/': ['/mnt/rclone/Media/'] } });

describe('rclone RC cache refresh (RCLONE.RC_CACHE_REFRESH)', () => {
  let rc: FakeRcloneRc;
  before(async () => {
    rc = await new FakeRcloneRc(['Media/Movies']).start();
  });
  after(async () => rc.stop());

  test('maps the local path to the remote, refreshes its folder and walks up while rclone says it does not exist', async () => {
    rc.calls.length = 0;
    const client = new RcloneRc(settings(rc.url), silent);
    const refreshed = await client.refreshFor('/mnt/rclone/Media/Movies/New (2020)/New (2020).mkv');
    assert.equal(refreshed, 'Media/Movies');
    // Without a cache remote, cache/expire is unknown and vfs/refresh is used (plex_autoscan's order).
    assert.deepEqual(rc.calls.map((c) => [c.command, c.params.remote ?? c.params.dir, c.status]), [
      ['cache/expire', 'Media/Movies/New (2020)', 404],
      ['vfs/refresh', 'Media/Movies/New (2020)', 200],
      ['cache/expire', 'Media/Movies', 404],
      ['vfs/refresh', 'Media/Movies', 200],
    ]);
  });

  test('a cache remote answers cache/expire and vfs/refresh is not needed', async () => {
    rc.calls.length = 0;
    rc.cacheRemote = true;
    try {
      const refreshed = await new RcloneRc(settings(rc.url), silent).refreshFor('/mnt/rclone/Media/Movies/X.mkv');
      assert.equal(refreshed, 'Media/Movies');
      assert.deepEqual(rc.calls.map((c) => c.command), ['cache/expire']);
    } finally {
      rc.cacheRemote = false;
    }
  });

  test('safety: the walk stops at the top and an unreachable rclone never throws', async () => {
    rc.calls.length = 0;
    assert.equal(await new RcloneRc(settings(rc.url), silent).refreshFor('/elsewhere/a/b.mkv'), undefined);
    assert.deepEqual(rc.refreshes(), ['elsewhere/a', 'elsewhere']);
    assert.equal(await new RcloneRc({ ...settings('http://127.0.0.1:9'), ENABLED: true }, silent).refreshFor('/mnt/rclone/Media/Movies/X.mkv'), undefined);
  });

  test('credentials in RC_URL are sent as basic auth', async () => {
    let auth: string | undefined;
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      auth = req.headers.authorization;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","message":"cached directory cleared: Media"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (server.address() as { port: number }).port;
      await new RcloneRc(settings(`http://user:p%40ss@127.0.0.1:${port}`), silent).refreshFor('/mnt/rclone/Media/X.mkv');
      assert.equal(auth, `Basic ${Buffer.from('user:p@ss').toString('base64')}`);
    } finally {
      server.close();
    }
  });

  test('each failed file check asks rclone before the next check; nothing is asked when the file is there', async () => {
    const plex = await new FakePlex().start();
    const tree = mediaTree();
    const local = `${tree.local}/`;
    const rcloneSettings = { ENABLED: true, RC_URL: rc.url, FILE_EXISTS_TO_REMOTE_MAPPINGS: { 'Media/': [local] } };
    const config = testConfig({
      PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_MAX_FILE_CHECKS: 20, SERVER_FILE_CHECK_DELAY: 0.05,
      SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings, RCLONE: { RC_CACHE_REFRESH: rcloneSettings }, PLEX_ANALYZE_TYPE: 'off',
    });
    const q = runQueue([makePlexTarget(plex, config)]);
    try {
      rc.calls.length = 0;
      tree.put('/data/Movies/Here (2000)/Here (2000).mkv');
      const here = q.enqueue('/data/Movies/Here (2000)', ['/data/Movies/Here (2000)/Here (2000).mkv']);
      await waitFor(() => q.store.view.get(here)!.status === 'done', 10_000, 'present file');
      assert.equal(rc.calls.length, 0);
      const late = q.enqueue('/data/Movies/Late (2000)', ['/data/Movies/Late (2000)/Late (2000).mkv']);
      await waitFor(() => rc.refreshes().includes('Media/Movies/Late (2000)'), 10_000, 'an rclone refresh');
      tree.put('/data/Movies/Late (2000)/Late (2000).mkv');
      await waitFor(() => q.store.view.get(late)!.status === 'done', 10_000, 'late file');
      const checks = q.store.view.get(late)!.deliveries[0]!.file_checks;
      // One refresh walk per failed check (the first check has none before it).
      assert.ok(rc.refreshes().filter((d) => d === 'Media/Movies/Late (2000)').length <= checks);
    } finally {
      await q.close();
      await plex.stop();
    }
  });
});
