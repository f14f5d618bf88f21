import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakeArrTarget } from '../fakes/arr-target.ts';
import { FakeAudiobookshelf } from '../fakes/audiobookshelf.ts';
import type { FakeMediaServer } from '../fakes/jellyfin.ts';
import type { FakePlex } from '../fakes/plex.ts';
import { FakeTdarr } from '../fakes/tdarr.ts';
import { spawnRelay, tempDir, waitFor, waitForQueueDrained, type RelayProcess } from '../helpers/relay.ts';
import { assertEachPlexGotItsOwn, AUTH, deliveryRows, ISSUE39_SERVER_DELIVERIES, issue39Requests, jellyfinTvTarget, mainPlexKeys, plex4kTarget, RELAY_BASE, startJellyfin, startTwoPlex, triggers } from '../helpers/targets-e2e.ts';

/*
 * Issue 39's held-out check, as our own: the real relay process with two Plex servers (the top-level PLEX_* keys
 * and one in TARGETS), Jellyfin, Audiobookshelf with INCLUDE, Tdarr, a Sonarr target and a command, each with its
 * own rewrite; Sonarr, Radarr, manual and A-Train requests through triggers that name some of them. Each target
 * gets exactly its own scans, in its own path form, once each; each Plex one at a time.
 * autopulse routes per target by name (crates/service/src/settings/mod.rs:125-126, triggers/mod.rs:24) and sends
 * the same requests as these fakes take (audiobookshelf.rs:75-121, tdarr.rs:58-81, sonarr.rs:56-98); see each fake
 * for the service's own API it follows.
 */

describe('every kind of target at once, triggers naming some of them', { skip: process.platform === 'win32' }, () => {
  let plex: FakePlex;
  let plex4k: FakePlex;
  let jellyfin: FakeMediaServer;
  let abs: FakeAudiobookshelf;
  let tdarr: FakeTdarr;
  let sonarr: FakeArrTarget;
  let relay: RelayProcess;
  const dir = tempDir('scanrelay-all-targets-');
  const hookLog = join(dir, 'hook.log');
  const hookLines = (): string[] => (existsSync(hookLog) ? readFileSync(hookLog, 'utf8').split('\n').filter(Boolean) : []);

  before(async () => {
    ({ plex, plex4k } = await startTwoPlex());
    jellyfin = await startJellyfin({ TV: ['/media/TV'] });
    abs = new FakeAudiobookshelf();
    abs.libraries = [{ id: 'lib-books', name: 'Audiobooks', folders: ['/audiobooks'] }];
    await abs.start();
    tdarr = new FakeTdarr('tdarr-key');
    await tdarr.start();
    sonarr = new FakeArrTarget('sonarr', 'sonarr2-key');
    sonarr.items = [
      { id: 11, title: 'Severance', path: '/tv/Severance' },
      { id: 12, title: 'Dark', path: '/tv/Dark' },
    ];
    await sonarr.start();
    relay = await spawnRelay({
      config: {
        ...RELAY_BASE,
        ...mainPlexKeys(plex),
        TARGETS: {
          // Never the audiobooks (EXCLUDE, on its own path).
          plex4k: plex4kTarget(plex4k, { EXCLUDE: ['^/4k/Audiobooks/'] }),
          jf: jellyfinTvTarget(jellyfin),
          books: { TYPE: 'audiobookshelf', URL: abs.url, TOKEN: abs.adminToken, REWRITE: [{ from: '^/data/Audiobooks/', to: '/audiobooks/' }], INCLUDE: ['^/audiobooks/'] },
          transcode: { TYPE: 'tdarr', URL: tdarr.url, API_KEY: 'tdarr-key', DB_ID: 'db-1', REWRITE: [{ from: '^/data/', to: '/tdarr/' }] },
          sonarr2: { TYPE: 'sonarr', URL: sonarr.url, API_KEY: 'sonarr2-key', REWRITE: [{ from: '^/data/TV/', to: '/tv/' }], INCLUDE: ['^/tv/'] },
          hook: { TYPE: 'command', COMMAND: ['/bin/sh', '-c', 'for p in "$@"; do printf "%s %s\\n" "$SCANRELAY_TARGET" "$p" >> "$0"; done', hookLog], REWRITE: [{ from: '^/data/', to: '/hook/' }] },
        },
        SERVER_AUTOSCAN_TRIGGERS: {
          sonarr: { TARGETS: ['plex', 'jf', 'sonarr2', 'hook'] },
          radarr: { EXCLUDE_TARGETS: ['jf', 'sonarr2'] },
          manual: { TARGETS: ['plex4k', 'books'] },
        },
        A_TRAIN: { TARGETS: ['jf', 'plex4k', 'transcode'] },
      },
    });
  });
  after(async () => {
    await relay?.kill();
    await Promise.all([plex?.stop(), plex4k?.stop(), jellyfin?.stop(), abs?.stop(), tdarr?.stop(), sonarr?.stop()]);
  });

  test('each target gets exactly its own scans, in its own path form, once each; each Plex one at a time', async () => {
    const base = relay.base;
    const answers = await Promise.all([
      ...issue39Requests(base),
      triggers(base).manual('/data/Audiobooks/Dune'),
    ]);
    for (const a of answers) assert.equal(a.status, 200, a.text);

    await waitForQueueDrained(relay.queuefile, 120_000);
    const rows = deliveryRows(relay.queuefile);
    assert.ok(rows.every((r) => r.status === 'done'), JSON.stringify(rows));

    // Each Plex: exactly its own scans, its own token, one at a time.
    await assertEachPlexGotItsOwn(plex, plex4k);
    // Jellyfin: its TV only (INCLUDE); never the manual or Radarr requests.
    assert.deepEqual(jellyfin.updates.map((u) => u.path).sort(), ['/media/TV/Dark/Season 1', '/media/TV/Severance/Season 2/Severance.S02E01.mkv']);
    // Audiobookshelf: the manual audiobook only (INCLUDE keeps the movie out), in its own form.
    assert.deepEqual(abs.updates, [{ libraryId: 'lib-books', path: '/audiobooks/Dune', type: 'add' }]);
    // Tdarr: Radarr's files and A-Train's folders (not on this disk to list: the folder itself), always in
    // scanFolderWatcher's list (a scanFindNew of a subfolder would move the library there: HaveAGitGat/Tdarr #577);
    // never Sonarr's or manual's.
    assert.deepEqual(
      tdarr.scans.map((s) => `${s.mode} ${JSON.stringify(s.arrayOrPath)}`).sort(),
      [
        'scanFolderWatcher ["/tdarr/Movies/Alien (1979)"]',
        'scanFolderWatcher ["/tdarr/TV/Dark/Season 1"]',
        'scanFolderWatcher ["/tdarr/Movies/Box (2001)/Box (2001).mkv"]',
        'scanFolderWatcher ["/tdarr/Movies/Up (2009)/Up (2009).mkv"]',
      ].sort(),
    );
    assert.ok(tdarr.scans.every((s) => s.dbID === 'db-1'));
    // Sonarr as a target: Severance refreshed once (the Sonarr trigger); Dark came by A-Train, which leaves it out.
    assert.deepEqual(sonarr.refreshes, [{ name: 'RefreshSeries', ids: [11] }]);
    // The command: Sonarr's and Radarr's files, in its own form; never manual's or A-Train's.
    assert.deepEqual(hookLines().sort(), [
      'hook /hook/Movies/Box (2001)/Box (2001).mkv',
      'hook /hook/Movies/Up (2009)/Up (2009).mkv',
      'hook /hook/TV/Severance/Season 2/Severance.S02E01.mkv',
    ]);

    // The queue records each delivery under its target's name, once.
    assert.deepEqual(
      rows.map((r) => `${r.target} ${r.folder}`).sort(),
      [
        ...ISSUE39_SERVER_DELIVERIES,
        'books /data/Audiobooks/Dune',
        'hook /data/Movies/Box (2001)',
        'hook /data/Movies/Up (2009)',
        'hook /data/TV/Severance/Season 2',
        'sonarr2 /data/TV/Severance/Season 2',
        'transcode /data/Movies/Alien (1979)',
        'transcode /data/Movies/Box (2001)',
        'transcode /data/Movies/Up (2009)',
        'transcode /data/TV/Dark/Season 1',
      ].sort(),
    );

    // /metrics: every per-target series carries the target's name, and counts exactly its deliveries.
    const metrics = await (await fetch(`${base}/metrics`, { headers: AUTH })).text();
    const series = (name: string, labels: string) => new RegExp(`^${name}\\{[^}]*${labels}[^}]*\\} (\\d+)$`, 'm').exec(metrics)?.[1];
    for (const target of ['plex', 'plex4k', 'jf', 'books', 'transcode', 'sonarr2', 'hook']) {
      const n = String(rows.filter((r) => r.target === target).length);
      assert.equal(series('scanrelay_scans_total', `target="${target}",outcome="done"`), n, `scanrelay_scans_total for ${target}`);
      assert.equal(series('scanrelay_request_to_scan_seconds_count', `target="${target}"`), n, `scanrelay_request_to_scan_seconds_count for ${target}`);
    }
    // The logs: each delivery's line names its target, once per delivery the queue recorded.
    const delivered = relay.events().filter((e) => e.msg === 'scan delivered');
    assert.deepEqual(delivered.map((e) => `${e.target} ${e.folder}`).sort(), rows.map((r) => `${r.target} ${r.folder}`).sort());
  });
});
