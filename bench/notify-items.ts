/**
 * What naming the items in `scanned` events costs Plex's drain (issue 40), on the real `scanrelay server` process.
 * BENCH_ITEMS_SCANS (60) file scans are seeded into its queue, all due at once, into a fake Plex whose Movies
 * section already holds BENCH_ITEMS_LIBRARY (2,000) movies; each scan is announced 60 ms after its request and
 * lasts 150 ms, and adds its movie. Two set-ups take turns, BENCH_ITEMS_RUNS (2) pairs: no NOTIFICATIONS (no item
 * lookup), and a json destination taking `scanned` (one listing read per scan, run after Plex's turn is let go).
 * From Plex's own record: the drain (first request to the last scan's end), the idle gap between a scan's end and
 * the next request (average and longest), requests sent while Plex scanned, and the listing reads; from the json
 * receiver: the events told with their movie named.
 */
import { join } from 'node:path';
import { scanRequestSchema } from '../src/core/scan.ts';
import { QueueStore } from '../src/queue/store.ts';
import { JsonReceiverFake } from '../test/fakes/notify-services.ts';
import { FakePlex } from '../test/fakes/plex.ts';
import { spawnRelay, tempDir, waitFor } from '../test/helpers/relay.ts';
import { report } from './lib.ts';

const round = (ms: number) => Math.round(ms) / 1000;

async function drain(withItems: boolean, scans: number, library: number): Promise<Record<string, unknown>> {
  const plex = await new FakePlex().start();
  plex.scanStartDelayMs = 60;
  plex.scanActivityMs = 150;
  for (let i = 0; i < library; i++) plex.items.push({ ratingKey: String(10_000 + i), sectionId: '1', type: 'movie', title: `Old ${i}`, year: 1990, file: `/data/Movies/Old ${i} (1990)/old.mkv`, addedAt: 1_600_000_000 + i });
  const films = Array.from({ length: scans }, (_, i) => `Film ${String(i).padStart(3, '0')} (2000)`);
  plex.addedByScan.push(...films.map((f, i) => ({ ratingKey: String(i + 1), sectionId: '1', type: 'movie' as const, title: f.slice(0, -7), year: 2000, file: `/data/Movies/${f}/film.mkv`, addedAt: 0 })));
  const json = await new JsonReceiverFake().start();
  const dir = tempDir('scanrelay-bench-');
  const store = new QueueStore(join(dir, 'queue.db'));
  store.enqueueMany(films.map((f) => scanRequestSchema.parse({ folder: `/data/Movies/${f}`, files: [`/data/Movies/${f}/film.mkv`], source: 'Radarr' })), { delayMs: 0, maxMs: 0 });
  store.close();
  const relay = await spawnRelay({
    dir,
    config: {
      PLEX_LOCAL_URL: plex.url,
      PLEX_TOKEN: plex.token,
      SERVER_SCAN_DELAY: 3600,
      ...(withItems ? { NOTIFICATIONS: { hook: { TYPE: 'json', URL: `${json.url}/hook`, EVENTS: ['scanned'], BATCH_SECONDS: 1 } } } : {}),
    },
  });
  try {
    await waitFor(() => relay.logs.filter((l) => l.includes('"after-scan steps finished"')).length >= scans, 3_600_000, 'every after-step');
    const done = Date.now();
    const sent = [...plex.scans].sort((a, b) => a.requestedAt - b.requestedAt);
    const gaps = sent.slice(1).map((s, i) => s.requestedAt - (sent[i]!.endedAt ?? sent[i]!.requestedAt));
    const told = withItems ? (await waitFor(() => { const n = json.taken.flatMap((c) => c.json.events).filter((e: { items?: unknown[] }) => e.items?.length).length; return n >= scans && n; }, 120_000, 'every scan told')) : 0;
    return {
      set: withItems ? 'json destination (items)' : 'no NOTIFICATIONS',
      'drain s': round(done - sent[0]!.requestedAt),
      'idle gap avg ms': Math.round(gaps.reduce((a, b) => a + b, 0) / Math.max(1, gaps.length)),
      'idle gap max ms': Math.round(Math.max(0, ...gaps)),
      'sent while Plex scanned': sent.filter((s) => s.whileBusy).length,
      'listing reads': plex.calls.filter((c) => c.path === '/library/sections/1/all').length,
      'told with items': told,
    };
  } finally {
    await relay.kill();
    await plex.stop();
    await json.stop();
  }
}

export async function benchNotifyItems(): Promise<Record<string, unknown>> {
  const scans = Number(process.env.BENCH_ITEMS_SCANS ?? 60);
  const library = Number(process.env.BENCH_ITEMS_LIBRARY ?? 2000);
  const rows: Array<Record<string, unknown>> = [];
  for (let run = 0; run < Number(process.env.BENCH_ITEMS_RUNS ?? 2); run++) for (const withItems of [false, true]) rows.push(await drain(withItems, scans, library));
  report('items in scanned events', rows, {});
  return { notifyItems: rows };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchNotifyItems();
