import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { ActivityFeed, type RunningScan } from '../../../src/targets/plex/activity-feed.ts';
import { PlexApi } from '../../../src/targets/plex/api.ts';
import { ScanWatch } from '../../../src/targets/plex/completion.ts';
import { PlexNotificationStream } from '../../../src/targets/plex/notifications/stream.ts';
import { FakePlex } from '../../fakes/plex.ts';
import { recordingLogger } from '../../helpers/plex-target.ts';
import { waitFor } from '../../helpers/relay.ts';

let plex: FakePlex;
beforeEach(async () => {
  plex = await new FakePlex().start();
});
afterEach(async () => plex.stop());

const timings = { pollMs: 20, maxMs: 60_000, fallbackMs: 50 };

test('Plex readable neither by stream nor by polling: plex_autoscan\'s fixed wait, and "completion unknown"', async () => {
  const { log, lines } = recordingLogger();
  const feed = { current: async (): Promise<RunningScan[]> => Promise.reject(new Error('Plex (GET /activities) unreachable: ECONNREFUSED')) } as unknown as ActivityFeed;
  const watch = new ScanWatch({ feed, timings, log });
  const done = await watch.waitForScan('1', Date.now(), log, new AbortController().signal);
  assert.deepEqual(done, { completed: false, reason: 'Plex /activities unavailable' });
  assert.ok(lines.some((l) => l.msg.startsWith('cannot read Plex /activities; waiting a fixed time') && l.waitMs === 50));
});

test('a scan the stream shows running but whose "ended" never came does not hold scans: Plex is asked', async () => {
  const { log } = recordingLogger();
  const api = new PlexApi(plex.url, plex.token);
  const stream = new PlexNotificationStream({ baseUrl: plex.url, token: plex.token, log });
  const feed = new ActivityFeed(api, 0);
  const watch = new ScanWatch({ stream, feed, timings, log });
  const received: string[] = [];
  stream.subscribe((m) => m.kind === 'activity' && received.push(m.event.uuid));
  watch.start();
  try {
    await waitFor(() => watch.mode() === 'websocket', 5000, 'stream in use');
    plex.activities = [{ uuid: 'lost-end', type: 'library.update.section', sectionId: '1', title: 'Scanning Movies' }];
    plex.notify({ event: 'started', activity: { uuid: 'lost-end', type: 'library.update.section', sectionId: '1' } });
    plex.notify({ event: 'started', activity: { uuid: 'other-kind', type: 'media.generate.bif', sectionId: '1' } });
    await waitFor(() => received.includes('other-kind'), 5000, 'both notifications received');
    assert.deepEqual((await watch.running()).map((s) => s.sectionId), ['1'], 'running, as Plex confirms');
    // Plex ends the scan, but its "ended" notification is lost: Plex itself is asked, and nothing runs.
    plex.activities = [];
    assert.deepEqual(await watch.running(), []);
    assert.deepEqual(await watch.running(), []);
    // A scan Plex really runs is reported, from the stream and /activities alike. It runs until the test ends
    // (stopScans): a short one could end before a slow machine's next look, and the look would rightly see none.
    plex.scanActivityMs = 600_000;
    await fetch(`${plex.url}/library/sections/2/refresh?path=${encodeURIComponent('/data/TV/Show')}`, { headers: { 'X-Plex-Token': plex.token } });
    await waitFor(async () => (await watch.running()).some((s) => s.sectionId === '2'), 5000, 'running');
  } finally {
    plex.scanActivityMs = 0;
    plex.stopScans();
    watch.close();
  }
});

test('a watch aborted when scanrelay stops ends at once', async () => {
  const { log } = recordingLogger();
  const api = new PlexApi(plex.url, plex.token);
  const watch = new ScanWatch({ feed: new ActivityFeed(api, 0), timings, log });
  // Running until the test ends it: the abort, not the scan's end, must end the watch.
  plex.scanActivityMs = 600_000;
  const sentAt = Date.now();
  await fetch(`${plex.url}/library/sections/1/refresh?path=${encodeURIComponent('/data/Movies/Long')}`, { headers: { 'X-Plex-Token': plex.token } });
  const stop = new AbortController();
  const waiting = watch.waitForScan('1', sentAt, log, stop.signal);
  await waitFor(() => plex.activities.length > 0, 5000, 'scan running');
  stop.abort(new Error('scanrelay stopping'));
  await assert.rejects(waiting, /scanrelay stopping/);
  plex.scanActivityMs = 0;
  plex.stopScans();
});
