import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FakeMediaServer } from '../fakes/jellyfin.ts';
import type { FakePlex } from '../fakes/plex.ts';
import { spawnRelay, waitFor, waitForQueueDrained, type RelayProcess } from '../helpers/relay.ts';
import { assertEachPlexGotItsOwn, AUTH, deliveryRows, ISSUE39_SERVER_DELIVERIES, issue39Requests, jellyfinTvTarget, mainPlexKeys, plex4kTarget, RELAY_BASE, startJellyfin, startTwoPlex, triggers } from '../helpers/targets-e2e.ts';

/*
 * Issue 39, end to end through the real server process: two Plex servers (the top-level PLEX_* keys, and one in
 * TARGETS) and a Jellyfin in TARGETS, each with its own rewrite, and triggers that name some of them. Each server
 * gets exactly the scans routed to it, in its own path form, once each; each Plex one scan at a time.
 * autopulse keeps targets and triggers as maps of names (crates/service/src/settings/mod.rs:125-126) and a trigger
 * may exclude targets by name (settings/triggers/mod.rs:24); it filters each event per target when it sends
 * (runner.rs:254-263), where scanrelay decides once, at queue time. autoscan rewrites per target (targets/plex/plex.go:79).
 */

describe('named targets: two Plex servers and a Jellyfin, triggers naming some of them', () => {
  let plex: FakePlex;
  let plex4k: FakePlex;
  let jellyfin: FakeMediaServer;
  let relay: RelayProcess;

  before(async () => {
    ({ plex, plex4k } = await startTwoPlex());
    jellyfin = await startJellyfin({ TV: ['/media/TV'] });
    relay = await spawnRelay({
      config: {
        ...RELAY_BASE,
        ...mainPlexKeys(plex),
        TARGETS: {
          plex4k: plex4kTarget(plex4k),
          // Only its TV library: INCLUDE on its own path, after its rewrite.
          jf: jellyfinTvTarget(jellyfin),
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
    const answers = await Promise.all(issue39Requests(base));
    for (const a of answers) assert.equal(a.status, 200, a.text);

    await waitFor(() => plex.refreshes().length >= 3 && plex4k.refreshes().length >= 5 && jellyfin.updates.length >= 2, 60_000, 'every delivery');
    await waitForQueueDrained(relay.queuefile, 60_000);

    // Each Plex: exactly its own scans, its own token, one at a time.
    await assertEachPlexGotItsOwn(plex, plex4k);
    // Jellyfin: its TV only (INCLUDE), and never the manual or Radarr requests (the triggers leave it out).
    assert.deepEqual(jellyfin.updates.map((u) => u.path).sort(), ['/media/TV/Dark/Season 1', '/media/TV/Severance/Season 2/Severance.S02E01.mkv']);

    // The queue records each delivery under its target's name.
    const rows = deliveryRows(relay.queuefile);
    assert.ok(rows.every((r) => r.status === 'done'), JSON.stringify(rows));
    assert.deepEqual(
      rows.map((r) => `${r.target} ${r.folder}`).sort(),
      [...ISSUE39_SERVER_DELIVERIES].sort(),
    );
    // /metrics counts each target by its name.
    const metrics = await (await fetch(`${base}/metrics`, { headers: AUTH })).text();
    assert.match(metrics, /scanrelay_scans_total\{[^}]*target="plex4k"[^}]*outcome="done"[^}]*\} 5/);
    assert.match(metrics, /scanrelay_scans_total\{[^}]*target="jf"[^}]*outcome="done"[^}]*\} 2/);
  });
});
