import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakePlex } from '../fakes/plex.ts';
import { mediaTree } from '../helpers/plex-target.ts';
import { postForm, spawnRelay, waitFor, waitForQueueDrained, type RelayProcess } from '../helpers/relay.ts';

/** Each target's delivery rows for the scans of a folder, read from the relay's queue file. */
function deliveriesOf(queuefile: string, folder: string): Array<{ target: string; status: string; detail: string | null; attempts: number }> {
  const db = new Database(queuefile, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(`SELECT d.target, d.status, d.detail, d.attempts FROM deliveries d JOIN scans s ON s.id = d.scan_id WHERE s.folder = ? ORDER BY d.target`)
      .all(folder) as any;
  } finally {
    db.close();
  }
}

describe('Plex, Jellyfin and Emby together, end to end through the real server process', () => {
  let plex: FakePlex;
  let jellyfin: FakeMediaServer;
  let emby: FakeMediaServer;
  let relay: RelayProcess;
  const tree = mediaTree();

  before(async () => {
    plex = await new FakePlex().start();
    jellyfin = await new FakeMediaServer({ apiKey: 'jf-key', name: 'jellyfin' }).start();
    emby = await new FakeMediaServer({ apiKey: 'emby-key', name: 'emby' }).start();
    relay = await spawnRelay({
      config: {
        PLEX_LOCAL_URL: plex.url,
        PLEX_TOKEN: plex.token,
        SERVER_SCAN_DELAY: 0,
        SERVER_ALLOW_MANUAL_SCAN: true,
        SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'] },
        SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings,
        PLEX_ANALYZE_TYPE: 'off',
        JELLYFIN: { ENABLED: true, URL: jellyfin.url, API_KEY: 'jf-key' },
        EMBY: { ENABLED: true, URL: emby.url, API_KEY: 'emby-key' },
      },
    });
  });
  after(async () => {
    await relay?.kill();
    await Promise.all([plex?.stop(), jellyfin?.stop(), emby?.stop()]);
  });

  test('every enabled server gets the scan once, and the history shows each outcome', async () => {
    tree.put('/data/Movies/Both (2000)/Both (2000).mkv');
    const res = await postForm(relay.url, { eventType: 'Manual', filepath: '/movies/Both (2000)/Both (2000).mkv' });
    assert.equal(res.status, 200, res.text);
    await waitFor(() => deliveriesOf(relay.queuefile, '/data/Movies/Both (2000)').filter((d) => d.status === 'done').length === 3, 20_000, 'three deliveries');
    assert.equal(plex.refreshes().filter((r) => r.path === '/data/Movies/Both (2000)').length, 1);
    assert.deepEqual(jellyfin.updates.map((u) => [u.prefix, u.path]), [['', '/data/Movies/Both (2000)/Both (2000).mkv']]);
    assert.deepEqual(emby.updates.map((u) => [u.prefix, u.path]), [['/emby', '/data/Movies/Both (2000)/Both (2000).mkv']]);
    const plexRow = await waitFor(() => deliveriesOf(relay.queuefile, '/data/Movies/Both (2000)').find((d) => d.target === 'plex' && /completed/.test(d.detail ?? '')), 20_000, 'completion recorded');
    assert.match(plexRow!.detail!, /^section 1 \(Movies\) via api; completed$/);
  });

  test('Jellyfin down while Plex is up: Plex delivered once, Jellyfin delivered after it returns, nothing duplicated', async () => {
    await jellyfin.setMode('down');
    tree.put('/data/Movies/Down (2001)/Down (2001).mkv');
    const before = { jf: jellyfin.updates.length, emby: emby.updates.length };
    const res = await postForm(relay.url, { eventType: 'Manual', filepath: '/movies/Down (2001)/Down (2001).mkv' });
    assert.equal(res.status, 200, res.text);
    await waitFor(() => plex.refreshes().some((r) => r.path === '/data/Movies/Down (2001)'), 20_000, 'Plex scan');
    await waitFor(() => emby.updates.length > before.emby, 20_000, 'Emby update');
    const waiting = deliveriesOf(relay.queuefile, '/data/Movies/Down (2001)');
    // Not delivered: waiting for its next try, or in the middle of one (the retry to the down server may be under way).
    assert.ok(['waiting', 'sending'].includes(waiting.find((d) => d.target === 'jellyfin')!.status));
    await jellyfin.setMode('up');
    await waitFor(() => deliveriesOf(relay.queuefile, '/data/Movies/Down (2001)').every((d) => d.status === 'done'), 30_000, 'Jellyfin delivered');
    await waitForQueueDrained(relay.queuefile);
    assert.equal(plex.refreshes().filter((r) => r.path === '/data/Movies/Down (2001)').length, 1);
    assert.equal(jellyfin.updates.length, before.jf + 1);
    assert.equal(emby.updates.length, before.emby + 1);
  });
});

describe('Jellyfin only (PLEX_ENABLED false), end to end', () => {
  test('needs no Plex: the scan goes to Jellyfin alone', async () => {
    const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
    const relay = await spawnRelay({
      config: {
        PLEX_ENABLED: false,
        PLEX_LOCAL_URL: 'http://127.0.0.1:9',
        SERVER_SCAN_DELAY: 0,
        SERVER_ALLOW_MANUAL_SCAN: true,
        JELLYFIN: { ENABLED: true, URL: jellyfin.url, API_KEY: 'jf-key' },
      },
    });
    try {
      const res = await postForm(relay.url, { eventType: 'Manual', filepath: '/data/Movies/Solo (2018)/Solo (2018).mkv' });
      assert.equal(res.status, 200, res.text);
      await waitFor(() => jellyfin.updates.length === 1, 20_000, 'Jellyfin update');
      assert.deepEqual(jellyfin.updates.map((u) => [u.path, u.updateType]), [['/data/Movies/Solo (2018)/Solo (2018).mkv', 'Modified']]);
      const rows = await waitFor(() => {
        const r = deliveriesOf(relay.queuefile, '/data/Movies/Solo (2018)');
        return r.length === 1 && r[0]!.status === 'done' ? r : undefined;
      }, 20_000, 'one delivery row');
      assert.equal(rows![0]!.target, 'jellyfin');
    } finally {
      await relay.kill();
      await jellyfin.stop();
    }
  });
});
