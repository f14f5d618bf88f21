import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakePlex } from '../fakes/plex.ts';
import { post, postJson, spawnRelay, waitFor, waitForQueueDrained, type RelayProcess } from '../helpers/relay.ts';

/*
 * Issue 39, end to end through the real server process: two Plex servers (the top-level PLEX_* keys, and one in
 * TARGETS) and a Jellyfin in TARGETS, each with its own rewrite, and triggers that name some of them. Each server
 * gets exactly the scans routed to it, in its own path form, once each; each Plex one scan at a time.
 * autopulse keeps targets and triggers as maps of names (crates/service/src/settings/mod.rs:125-126) and a trigger
 * may exclude targets by name (settings/triggers/mod.rs:24); it filters each event per target when it sends
 * (runner.rs:254-263), where scanrelay decides once, at queue time. autoscan rewrites per target (targets/plex/plex.go:79).
 */

const AUTH = { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` };

function deliveries(queuefile: string): Array<{ folder: string; target: string; status: string }> {
  const db = new Database(queuefile, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT s.folder, d.target, d.status FROM deliveries d JOIN scans s ON s.id = d.scan_id ORDER BY s.folder, d.target`).all() as any;
  } finally {
    db.close();
  }
}

describe('named targets: two Plex servers and a Jellyfin, triggers naming some of them', () => {
  let plex: FakePlex;
  let plex4k: FakePlex;
  let jellyfin: FakeMediaServer;
  let relay: RelayProcess;

  before(async () => {
    plex = await new FakePlex({
      sections: [
        { id: '1', title: 'Movies', type: 'movie', locations: ['/plexA/Movies'] },
        { id: '2', title: 'TV Shows', type: 'show', locations: ['/plexA/TV'] },
      ],
    }).start();
    plex4k = await new FakePlex({
      token: 'plex-4k-token',
      sections: [
        { id: '7', title: 'Movies 4K', type: 'movie', locations: ['/4k/Movies'] },
        { id: '8', title: 'TV 4K', type: 'show', locations: ['/4k/TV'] },
      ],
    }).start();
    // Each Plex scan shows as running for a while: a second scan sent meanwhile would be seen (whileBusy).
    plex.scanActivityMs = 150;
    plex4k.scanActivityMs = 150;
    jellyfin = await new FakeMediaServer({ apiKey: 'jf-key', name: 'jellyfin' }).start();
    jellyfin.virtualFolders = [{ Name: 'TV', Locations: ['/media/TV'] }];
    relay = await spawnRelay({
      config: {
        SERVER_AUTH_USER: 'user',
        SERVER_AUTH_PASS: 'pass',
        SERVER_SCAN_DELAY: 0,
        PLEX_LOCAL_URL: plex.url,
        PLEX_TOKEN: plex.token,
        PLEX_REWRITE: [{ from: '^/data/', to: '/plexA/' }],
        TARGETS: {
          plex4k: { TYPE: 'plex', URL: plex4k.url, TOKEN: plex4k.token, ANALYZE_TYPE: 'off', REWRITE: [{ from: '^/data/', to: '/4k/' }] },
          // Only its TV library: INCLUDE on its own path, after its rewrite.
          jf: { TYPE: 'jellyfin', URL: jellyfin.url, API_KEY: 'jf-key', REWRITE: [{ from: '^/data/', to: '/media/' }], INCLUDE: ['^/media/TV/'] },
        },
        SERVER_AUTOSCAN_TRIGGERS: {
          sonarr: { TARGETS: ['plex', 'jf'] },
          radarr: { EXCLUDE_TARGETS: ['jf'] },
          manual: { TARGETS: ['plex4k'] },
        },
        A_TRAIN: { TARGETS: ['jf', 'plex4k'] },
      },
    });
  });
  after(async () => {
    await relay?.kill();
    await Promise.all([plex?.stop(), plex4k?.stop(), jellyfin?.stop()]);
  });

  test('each target gets exactly its own scans, in its own path form, once each; each Plex one at a time', async () => {
    const base = relay.base;
    const answers = await Promise.all([
      postJson(`${base}/triggers/sonarr`, { eventType: 'Download', series: { path: '/data/TV/Severance' }, episodeFile: { relativePath: 'Season 2/Severance.S02E01.mkv' } }, AUTH),
      postJson(`${base}/triggers/radarr`, { eventType: 'Download', movie: { folderPath: '/data/Movies/Box (2001)' }, movieFile: { relativePath: 'Box (2001).mkv' } }, AUTH),
      postJson(`${base}/triggers/radarr`, { eventType: 'Download', movie: { folderPath: '/data/Movies/Up (2009)' }, movieFile: { relativePath: 'Up (2009).mkv' } }, AUTH),
      post(`${base}/triggers/manual?dir=${encodeURIComponent('/data/Movies/Heat (1995)')}`, '', 'application/x-www-form-urlencoded', AUTH),
      postJson(`${base}/triggers/a-train/drive1`, { Created: ['/data/TV/Dark/Season 1', '/data/Movies/Alien (1979)'] }, AUTH),
    ]);
    for (const a of answers) assert.equal(a.status, 200, a.text);

    await waitFor(() => plex.refreshes().length >= 3 && plex4k.refreshes().length >= 5 && jellyfin.updates.length >= 2, 60_000, 'every delivery');
    await waitForQueueDrained(relay.queuefile, 60_000);

    assert.deepEqual(plex.refreshes().map((r) => `${r.section} ${r.path}`).sort(), [
      '1 /plexA/Movies/Box (2001)',
      '1 /plexA/Movies/Up (2009)',
      '2 /plexA/TV/Severance/Season 2',
    ]);
    assert.deepEqual(plex4k.refreshes().map((r) => `${r.section} ${r.path}`).sort(), [
      '7 /4k/Movies/Alien (1979)',
      '7 /4k/Movies/Box (2001)',
      '7 /4k/Movies/Heat (1995)',
      '7 /4k/Movies/Up (2009)',
      '8 /4k/TV/Dark/Season 1',
    ]);
    // Each Plex with its own token, never the other's.
    assert.ok(plex4k.refreshes().every((r) => r.token === plex4k.token));
    assert.ok(plex.refreshes().every((r) => r.token === plex.token));
    // Jellyfin: its TV only (INCLUDE), and never the manual or Radarr requests (the triggers leave it out).
    assert.deepEqual(jellyfin.updates.map((u) => u.path).sort(), ['/media/TV/Dark/Season 1', '/media/TV/Severance/Season 2/Severance.S02E01.mkv']);

    // One at a time on each Plex: no scan was sent while that server was still scanning.
    await waitFor(() => [...plex.scans, ...plex4k.scans].every((s) => s.endedAt !== undefined), 30_000, 'Plex scans ended');
    assert.deepEqual(plex.scans.filter((s) => s.whileBusy), []);
    assert.deepEqual(plex4k.scans.filter((s) => s.whileBusy), []);

    // The queue records each delivery under its target's name.
    const rows = deliveries(relay.queuefile);
    assert.ok(rows.every((r) => r.status === 'done'), JSON.stringify(rows));
    assert.deepEqual(
      rows.map((r) => `${r.target} ${r.folder}`).sort(),
      [
        'jf /data/TV/Dark/Season 1',
        'jf /data/TV/Severance/Season 2',
        'plex /data/Movies/Box (2001)',
        'plex /data/Movies/Up (2009)',
        'plex /data/TV/Severance/Season 2',
        'plex4k /data/Movies/Alien (1979)',
        'plex4k /data/Movies/Box (2001)',
        'plex4k /data/Movies/Heat (1995)',
        'plex4k /data/Movies/Up (2009)',
        'plex4k /data/TV/Dark/Season 1',
      ].sort(),
    );
    // /metrics counts each target by its name.
    const metrics = await (await fetch(`${base}/metrics`, { headers: AUTH })).text();
    assert.match(metrics, /scanrelay_scans_total\{[^}]*target="plex4k"[^}]*outcome="done"[^}]*\} 5/);
    assert.match(metrics, /scanrelay_scans_total\{[^}]*target="jf"[^}]*outcome="done"[^}]*\} 2/);
  });
});
