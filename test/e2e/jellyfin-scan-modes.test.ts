import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { NotifyEvent } from '../../src/core/events.ts';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { episodeName, showName, writeMediaTree } from '../fakes/jellyfin-library.ts';
import { JsonReceiverFake } from '../fakes/notify-services.ts';
import { postForm, spawnRelay, tempDir, waitFor, type RelayProcess } from '../helpers/relay.ts';

// Issue 50 through a real relay: a Jellyfin 10.11 without the plugin gets item refreshes, its `scanned` event names
// the episode once Jellyfin has it, and the dashboard and /metrics say which mode auto chose.

describe('Jellyfin 10.11 through the relay (SCAN_MODE auto)', () => {
  let jellyfin: FakeMediaServer;
  let json: JsonReceiverFake;
  let relay: RelayProcess;
  let tv: string;

  before(async () => {
    ({ tv } = writeMediaTree(tempDir('jf-e2e-'), { shows: 4, seasons: 2, episodes: 6, movies: 5 }));
    // Jellyfin's refresh queue takes a moment: the event must wait for the item, not for the answer to the refresh.
    jellyfin = await new FakeMediaServer({ apiKey: 'jf-key', version: '10.11.3', refreshDelayMs: 400 }).start();
    jellyfin.model.addLibrary('Shows', 'tvshows', [tv]);
    json = await new JsonReceiverFake('json-token').start();
    relay = await spawnRelay({
      config: {
        PLEX_ENABLED: false,
        SERVER_ALLOW_MANUAL_SCAN: true,
        SERVER_SCAN_DELAY: 0,
        JELLYFIN: { ENABLED: true, URL: jellyfin.url, API_KEY: 'jf-key' },
        NOTIFICATIONS: { hook: { TYPE: 'json', URL: `${json.url}/hook`, TOKEN: 'json-token', BATCH_SECONDS: 1 } },
      },
    });
  });
  after(async () => {
    await relay?.kill();
    await jellyfin?.stop();
    await json?.stop();
  });

  test('a new episode: its season refreshed, the scanned event names it after Jellyfin made it; mode on the dashboard and in /metrics', async () => {
    const season = join(tv, showName(2), 'Season 01');
    const ep = join(season, episodeName(2, 1, 7, 'Late Arrival'));
    writeFileSync(ep, '');
    const answer = await postForm(relay.url, { eventType: 'Manual', filepath: ep });
    assert.ok(answer.status < 300, answer.body);
    const events = () => json.calls.filter((c) => c.status === 200).flatMap((c) => c.json.events as NotifyEvent[]);
    const scanned = (await waitFor(() => events().find((e) => e.kind === 'scanned' && e.target === 'jellyfin'), 60_000, 'the scanned event'))!;
    const item = jellyfin.model.byPath(ep);
    assert.ok(item, 'Jellyfin has the episode');
    assert.deepEqual(scanned.items, [{ key: item.Id, type: 'episode', title: 'Late Arrival', show: showName(2), season: 1, episode: 7 }]);
    assert.ok(scanned.at >= item.createdAt, 'told once the item existed');
    // Only the season was refreshed, and neither Media/Updated nor /Library/Refresh was sent.
    assert.deepEqual(jellyfin.itemRefreshes.map((r) => r.id), [jellyfin.model.byPath(season)!.Id]);
    assert.ok(!jellyfin.calls.some((c) => /media\/updated|library\/refresh$/i.test(c.path)));
    assert.ok(jellyfin.model.touched <= 8, `${jellyfin.model.touched} items touched`);

    const parts = await (await fetch(`${relay.url}/parts`)).text();
    assert.match(parts, /scan mode item: Jellyfin 10\.11\.3, no TargetedScan plugin/);
    const metrics = await (await fetch(`${relay.base}/metrics`)).text();
    assert.match(metrics, /^scanrelay_target_scan_mode\{target="jellyfin",mode="item"\} 1$/m);
    assert.equal(relay.events().filter((e) => e.scanMode === 'item').length, 1, 'the choice is logged once');
  });
});
