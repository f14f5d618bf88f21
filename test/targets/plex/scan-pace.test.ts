import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { asOutcome, type ScanItem } from '../../../src/core/scan.ts';
import { PlexApi } from '../../../src/targets/plex/api.ts';
import type { PlexScanBackend } from '../../../src/targets/plex/backends/backend.ts';
import { PlexDatabase } from '../../../src/targets/plex/database.ts';
import { PlexTarget } from '../../../src/targets/plex/target.ts';
import { renderStatus } from '../../../src/server/dashboard/render.ts';
import { FakePlex } from '../../fakes/plex.ts';
import { FAST_TIMINGS, makePlexTarget, plexSettingsOf, recordingLogger, runQueue, scanItem, testConfig } from '../../helpers/plex-target.ts';
import { waitFor } from '../../helpers/relay.ts';

/*
 * Plex at its own pace (docs/scanning.md "Scan completion"): one scan at a time, each ended when Plex says so on
 * its notification stream, by polling while the stream is away, never sent while Plex shows a scan running.
 * The fake Plex runs its scans one at a time and records when each was asked for, started and ended.
 */

// A fake Plex for each test: one test's scans, pace settings and streams never reach the next.
let plex: FakePlex;
beforeEach(async () => {
  plex = await new FakePlex().start();
});
afterEach(async () => plex.stop());

function config(extra: Record<string, unknown> = {}) {
  return testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, PLEX_ANALYZE_TYPE: 'off', SERVER_FILE_CHECKS_ENABLED: false, PLEX_DATABASE_PATH: '/nonexistent/plex.db', ...extra });
}

/** A queue over one Plex target; the stream is connected (or found missing) before the first scan. */
async function drainQueue(cfg = config(), want: RegExp = /./) {
  const { log, lines } = recordingLogger();
  // The wait before a start delay is learned: long enough that a loaded test machine never mistakes a late
  // announcement for a scan that never showed (FAST_TIMINGS' 150 ms is for tests where Plex shows nothing).
  const target = makePlexTarget(plex, cfg, { log, timings: { completionAppearMs: 3000 } });
  await waitFor(async () => want.test((await target.available()).note ?? ''), 5000, `watch ${want}`);
  const q = runQueue([target], { concurrency: 8 });
  const drain = async (folders: string[]) => {
    const ids = q.store.enqueueMany(folders.map((f) => ({ folder: f, files: [], source: 'Manual' as const, event: 'Manual', updateType: 'Modified' as const, priority: 0 })), { delayMs: 0, maxMs: 0 }).map((r) => r.id);
    q.scheduler.poke();
    await waitFor(() => ids.every((id) => q.store.view.get(id)!.status === 'done'), 30_000, 'all delivered');
    await q.scheduler.afterStepsSettled();
    return ids.map((id) => q.store.view.get(id)!.deliveries[0]!.detail!);
  };
  return { target, q, lines, drain, completions: () => lines.filter((l) => /Plex scan completed|no scan activity/.test(l.msg)) };
}

const folders = (n: number, name = 'Film') => Array.from({ length: n }, (_, i) => `/data/Movies/${name} ${i} (2000)`);

/** Plex's own record: every folder scanned once, none asked for while another scan ran. */
function assertOneAtATime(expected: string[]) {
  const mine = plex.scans.filter((s) => expected.includes(s.path));
  assert.deepEqual(mine.map((s) => s.path).sort(), [...expected].sort(), 'each folder scanned exactly once');
  assert.deepEqual(mine.filter((s) => s.whileBusy).map((s) => s.path), [], 'no scan was sent while Plex was scanning');
}

describe('scan completion from the notification stream', () => {
  test('websocket: a drain of short scans, announced 60 ms after each request, one at a time', async () => {
    plex.scanStartDelayMs = 60;
    plex.scanActivityMs = 150;
    const { q, drain, completions } = await drainQueue(config(), /notification stream \(websocket\)/);
    try {
      const list = folders(8, 'Ws');
      const details = await drain(list);
      assert.ok(details.every((d) => d.endsWith('; completed')), details.join('\n'));
      assertOneAtATime(list);
      assert.deepEqual(new Set(completions().map((l) => `${l.msg.slice(0, 20)} via ${l.via}`)), new Set(['Plex scan completed: via websocket']));
    } finally {
      await q.close();
    }
  });

  test('Server-Sent Events when the websocket is refused: the same', async () => {
    plex.websocketAvailable = false;
    plex.scanStartDelayMs = 60;
    plex.scanActivityMs = 150;
    const { target, q, drain, completions } = await drainQueue(config(), /notification stream \(Server-Sent Events\)/);
    try {
      const list = folders(3, 'Sse');
      await drain(list);
      assertOneAtATime(list);
      assert.deepEqual(completions().map((l) => l.via), ['sse', 'sse', 'sse']);
      assert.match((await target.available()).note!, /Server-Sent Events/);
    } finally {
      await q.close();
    }
  });

  test('a Plex that never streams: completion by polling /activities, still one at a time, and the dashboard says so', async () => {
    plex.streaming = false;
    plex.scanStartDelayMs = 60;
    plex.scanActivityMs = 300;
    const { target, q, drain, completions, lines } = await drainQueue(config(), /polling \/activities \(notification stream unavailable/);
    try {
      const list = folders(3, 'Poll');
      const details = await drain(list);
      assert.ok(details.every((d) => d.endsWith('; completed')));
      assertOneAtATime(list);
      assert.deepEqual(completions().map((l) => [l.via, l.msg.startsWith('Plex scan completed')]), [['polling', true], ['polling', true], ['polling', true]]);
      // The stream is tried again now and then; between tries the note says why it is not used.
      let note = '';
      await waitFor(async () => /unavailable/.test((note = (await target.available()).note!)), 5000, 'a note between tries');
      assert.match(note, /^scan completion: polling \/activities \(notification stream unavailable: websocket: HTTP 404.*; next try in \d+ s\)$/);
      assert.match(renderStatus({ targets: [{ name: 'plex', ok: true, note }], queue: { pending: 0, active: 0 }, drive: { state: 'off' } }), /data-note>; scan completion: polling \/activities/);
      assert.ok(lines.some((l) => l.msg.includes('notification stream not available: polling /activities meanwhile')));
    } finally {
      await q.close();
    }
  });

  test('the stream killed in the middle of a drain: delivery goes on by polling, and the stream comes back', async () => {
    plex.scanStartDelayMs = 60;
    plex.scanActivityMs = 150;
    const { q, drain, completions, lines } = await drainQueue(config(), /notification stream \(websocket\)/);
    try {
      const list = folders(10, 'Kill');
      const connectionsBefore = plex.streamConnections;
      // After the second scan ended the stream dies, and Plex refuses it until four more scans went by polling.
      let phase = 0;
      const watcher = setInterval(() => {
        const ended = plex.scans.filter((s) => list.includes(s.path) && s.endedAt).length;
        if (phase === 0 && ended >= 2) {
          phase = 1;
          plex.streaming = false;
          plex.dropStreams();
        } else if (phase === 1 && completions().filter((l) => l.via === 'polling').length >= 4) {
          phase = 2;
          // Plex streams again once a whole reconnect try was refused (websocket, then SSE): flipped at a moment a
          // timer picks, a try could find the websocket refused and SSE open, and rightly settle on SSE.
          plex.onStreamRefused = (transport) => {
            if (transport !== 'sse') return;
            plex.onStreamRefused = undefined;
            plex.streaming = true;
          };
        }
      }, 5);
      try {
        await drain(list);
      } finally {
        clearInterval(watcher);
      }
      assertOneAtATime(list);
      const via = completions().map((l) => l.via);
      assert.equal(via.length, list.length);
      assert.ok(via.filter((v) => v === 'polling').length >= 4, via.join(','));
      assert.equal(via.at(-1), 'websocket', `the last scans ended by the stream again: ${via.join(',')}`);
      assert.ok(plex.streamConnections > connectionsBefore, 'reconnected');
      const lost = lines.find((l) => l.msg.includes('stream lost'))!;
      assert.ok(lost && lost.retryInS <= FAST_TIMINGS.streamBackoffMaxMs! / 1000, 'the next try is within the backoff');
    } finally {
      await q.close();
    }
  });

  test('a message the parser refuses during a watch: the watch turns to polling, never to a wrong "done"', async () => {
    plex.scanStartDelayMs = 0;
    plex.scanActivityMs = 600;
    const { q, drain, completions, lines } = await drainQueue(config(), /notification stream \(websocket\)/);
    try {
      const sent = setInterval(() => {
        if (plex.scans.some((s) => s.path === '/data/Movies/Refused (2000)' && s.startedAt)) {
          clearInterval(sent);
          plex.sendRaw(JSON.stringify({ NotificationContainer: { type: 'activity', size: 1, ActivityNotification: [{ event: 'done', uuid: 'x', Activity: { uuid: 'x', type: 'library.update.section', Context: { librarySectionID: '1' } } }] } }));
        }
      }, 5);
      await drain(['/data/Movies/Refused (2000)']);
      clearInterval(sent);
      const done = completions()[0]!;
      assert.equal(done.via, 'polling');
      assert.ok(done.time >= plex.scans.find((s) => s.path === '/data/Movies/Refused (2000)')!.endedAt!, 'completed only after Plex ended the scan');
      assert.ok(lines.some((l) => l.msg.includes('not understood')));
    } finally {
      await q.close();
    }
  });
});

describe('a scan that never shows up', () => {
  test('waits the wait learned from this server, not the fixed one, and the drain goes on', async () => {
    plex.scanStartDelayMs = 60;
    plex.scanActivityMs = 100;
    plex.skipsPath = (p) => p.includes('Skipped');
    const { q, drain, completions } = await drainQueue(config(), /notification stream \(websocket\)/);
    try {
      const details = await drain(['/data/Movies/Seen (2000)', '/data/Movies/Skipped (2000)', '/data/Movies/After (2000)']);
      assert.ok(details.every((d) => d.endsWith('; completed')));
      const [seen, skipped, afterIt] = completions();
      assert.match(seen!.msg, /Plex scan completed/);
      assert.match(skipped!.msg, /no scan activity for the section within \d+\.\d+ s: taking the scan as already finished/);
      // The wait before anything is learned is 3 s here; learned: 3x the slowest delay (about 60 ms), at least 250 ms.
      assert.ok(skipped!.waitedMs < 3000, `learned, not the initial wait: ${skipped!.waitedMs}`);
      assert.ok(skipped!.waitedMs >= 250 && skipped!.waitedMs <= 10_000, String(skipped!.waitedMs));
      assert.match(afterIt!.msg, /Plex scan completed/);
    } finally {
      await q.close();
    }
  });
});

describe('never while Plex scans', () => {
  // plex_autoscan waits under its scan lock while a Plex Media Scanner process runs (plex.py:138-143), looking
  // again every 60 s (utils.py:112-127); scanrelay asks Plex itself, and with the stream looks every second.
  test('a scan someone else started holds ours until Plex reports it ended', async () => {
    plex.scanMsFor = (p) => (p.includes('External') ? 500 : 50);
    const { q, drain, lines } = await drainQueue(config({ PLEX_WAIT_FOR_EXTERNAL_SCANNERS: true }), /notification stream \(websocket\)/);
    try {
      await fetch(`${plex.url}/library/sections/1/refresh?path=${encodeURIComponent('/data/Movies/External')}`, { headers: { 'X-Plex-Token': plex.token } });
      await waitFor(() => plex.scans.some((s) => s.path === '/data/Movies/External' && s.startedAt), 5000, 'external scan running');
      await drain(['/data/Movies/Mine (2000)']);
      const external = plex.scans.find((s) => s.path === '/data/Movies/External')!;
      const mine = plex.scans.find((s) => s.path === '/data/Movies/Mine (2000)')!;
      assert.equal(mine.whileBusy, false);
      assert.ok(mine.requestedAt >= external.endedAt!);
      assert.equal(lines.filter((l) => l.msg.includes('another Plex library scan is running; waiting') && l.level === 30).length, 1, 'one INFO line for the wait');
    } finally {
      await q.close();
    }
  });
});

describe('PLEX_REFRESH_METADATA', () => {
  test('on: after the scan ended, PUT /library/metadata/{ratingKey}/refresh for the items it touched', async () => {
    plex.items = [
      { ratingKey: '42', sectionId: '1', type: 'movie', file: '/data/Movies/Heat (1995)/Heat.mkv', addedAt: 1700000100 },
      { ratingKey: '43', sectionId: '1', type: 'movie', file: '/data/Movies/Heat (1995)/Heat.extended.mkv', addedAt: 1700000050 },
      { ratingKey: '44', sectionId: '1', type: 'movie', file: '/data/Movies/Other (2001)/o.mkv', addedAt: 1700000000 },
    ];
    plex.scanActivityMs = 100;
    const { q, lines } = await drainQueue(config({ PLEX_REFRESH_METADATA: true }), /notification stream/);
    try {
      const before = plex.calls.length;
      const id = q.enqueue('/data/Movies/Heat (1995)', ['/data/Movies/Heat (1995)/Heat.mkv']);
      await waitFor(() => q.store.view.get(id)!.status === 'done', 10_000, 'delivered');
      await q.scheduler.afterStepsSettled();
      assert.match(q.store.view.get(id)!.deliveries[0]!.detail!, /; completed; metadata refreshed 42$/);
      const puts = plex.calls.slice(before).filter((c) => c.method === 'PUT' && /\/refresh$/.test(c.path));
      assert.deepEqual(puts.map((c) => [c.path, c.status, c.tokenIn]), [['/library/metadata/42/refresh', 200, 'header']]);
      const scan = plex.scans.find((s) => s.path === '/data/Movies/Heat (1995)')!;
      assert.ok(puts[0]!.at >= scan.endedAt!, 'after the scan ended');
      // A folder request (no file named): every item with a file in the folder.
      const folderId = q.enqueue('/data/Movies/Heat (1995)');
      await waitFor(() => q.store.view.get(folderId)!.status === 'done', 10_000, 'delivered');
      await q.scheduler.afterStepsSettled();
      assert.match(q.store.view.get(folderId)!.deliveries[0]!.detail!, /metadata refreshed 42,43$/);
      assert.ok(lines.some((l) => l.key === 'PLEX_REFRESH_METADATA' && l.msg === 'Plex metadata refresh requested'));
    } finally {
      plex.items = [];
      await q.close();
    }
  });

  test('off by default: no metadata refresh', async () => {
    plex.items = [{ ratingKey: '42', sectionId: '1', type: 'movie', file: '/data/Movies/Heat (1995)/Heat.mkv', addedAt: 1700000100 }];
    const { q, drain } = await drainQueue(config(), /notification stream/);
    try {
      const before = plex.calls.length;
      const [detail] = await drain(['/data/Movies/Heat (1995)']);
      assert.doesNotMatch(detail!, /metadata/);
      assert.equal(plex.calls.slice(before).filter((c) => c.method === 'PUT').length, 0);
    } finally {
      plex.items = [];
      await q.close();
    }
  });
});

describe('the scanner method', () => {
  test('is unchanged: the scanner\'s exit is the scan\'s end; no notification stream is opened', async () => {
    const scanned: string[] = [];
    const backend: PlexScanBackend = {
      method: 'scanner',
      resolveSection: async () => ({ id: '1', title: 'Movies', location: '/data/Movies' }),
      knownLocations: async () => ['/data/Movies'],
      scan: async (_s, folder) => {
        scanned.push(folder);
        return {};
      },
      analyze: async () => {},
      describeScan: () => 'Plex Media Scanner --scan',
      available: async () => ({ ok: true }),
    };
    const cfg = config({ PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false });
    const target = new PlexTarget(backend, recordingLogger().log, { settings: plexSettingsOf(cfg), api: new PlexApi(plex.url, plex.token), db: new PlexDatabase(cfg.PLEX_DATABASE_PATH), timings: FAST_TIMINGS });
    const connections = plex.streamConnections;
    const upgrades = plex.calls.filter((c) => c.path.startsWith('/:/')).length;
    const result = await target.deliver(scanItem({ folder: '/data/Movies/Scanner (2000)' } as Partial<ScanItem> & { folder: string }));
    assert.equal(result.outcome, 'done');
    const detail = result.outcome === 'done' ? asOutcome(await result.after!(new AbortController().signal)).detail : '';
    assert.equal(detail, 'section 1 (Movies) via scanner; completed');
    assert.deepEqual(scanned, ['/data/Movies/Scanner (2000)']);
    assert.equal(plex.streamConnections, connections);
    assert.equal(plex.calls.filter((c) => c.path.startsWith('/:/')).length, upgrades);
    target.close();
  });
});
