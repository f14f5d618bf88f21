/**
 * autopulse's /list over a full history: BENCH_LIST_DONE (10,000, the history the relay keeps) finished scans
 * and BENCH_LIST_OPEN (1,000) open ones, each with 3 files, on SQLite and (when PostgreSQL's programs are
 * installed) PostgreSQL. The median time of one page (peers/autopulse/event-list.ts's SQL and the rows' files and
 * deliveries) for: the default page, page 500, sort by process_status (a CASE with a subquery per row), a search
 * that only a file name matches (the EXISTS over scan_files), and status=retry; then /stats's count of every scan
 * by process status (the same CASE over the whole table, eventCounts), beside the plain count by status it replaced.
 */
import { join } from 'node:path';
import { scanRequestSchema } from '../src/core/scan.ts';
import type { QueueBackend } from '../src/queue/backend.ts';
import type { EventQuery } from '../src/peers/autopulse/event-list.ts';
import { tempDir } from '../test/helpers/relay.ts';
import { benchStores, report } from './lib.ts';

const DONE = Number(process.env.BENCH_LIST_DONE ?? 10_000);
const OPEN = Number(process.env.BENCH_LIST_OPEN ?? 1_000);
const RUNS = 15;

async function seed(store: QueueBackend): Promise<void> {
  const timing = { delayMs: 0, maxMs: 0 };
  const req = (i: number) => scanRequestSchema.parse({ folder: `/media/tv/Show ${i}/Season 1`, source: 'Manual', files: [1, 2, 3].map((e) => `/media/tv/Show ${i}/Season 1/Show ${i} S01E0${e}.mkv`) });
  for (let i = 0; i < DONE; i += 500) {
    await store.enqueueMany(Array.from({ length: Math.min(500, DONE - i) }, (_, k) => req(i + k)), timing, 1000 + i);
    await store.activateDue(['plex'], 10_000_000, 1000);
    for (const c of await store.claimDeliveries(1000, 10_000_000, 'plex')) await store.completeDelivery(c.item.id, 'plex', { status: 'done' }, 10_000_001);
  }
  for (let i = 0; i < OPEN; i += 500) await store.enqueueMany(Array.from({ length: Math.min(500, OPEN - i) }, (_, k) => req(DONE + i + k)), { delayMs: 3_600_000, maxMs: 3_600_000 }, Date.now());
}

async function median(run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  return Math.round(times.sort((a, b) => a - b)[Math.floor(RUNS / 2)]! * 100) / 100;
}

const QUERIES: Array<[string, EventQuery]> = [
  ['default page (10, newest)', { sort: 'created_at', asc: false, limit: 10, offset: 0 }],
  ['page 500 of 10', { sort: 'created_at', asc: false, limit: 10, offset: 4990 }],
  ['sort=process_status, 100', { sort: 'process_status', asc: false, limit: 100, offset: 0 }],
  ['search a file name', { sort: 'created_at', asc: false, limit: 10, offset: 0, search: 's01e03.mkv' }],
  ['status=retry', { sort: 'created_at', asc: false, limit: 10, offset: 0, status: 'retry' }],
];

export async function benchAutopulseList(): Promise<Record<string, unknown>> {
  const rows: Array<Record<string, unknown>> = [];
  const stores = benchStores(join(tempDir('bench-list-'), 'queue.db'));
  for (const [name, open] of stores) {
    const { store, stop } = await open();
    const seeded = performance.now();
    await seed(store);
    const seedS = Math.round((performance.now() - seeded) / 100) / 10;
    for (const [label, q] of QUERIES) rows.push({ store: name, query: label, rows: (await store.view.listEvents(q)).length, medianMs: await median(async () => store.view.listEvents(q)), seedS });
    rows.push({ store: name, query: '/stats: eventCounts', rows: 4, medianMs: await median(async () => store.view.eventCounts()), seedS });
    rows.push({ store: name, query: 'counts by status (before)', rows: 4, medianMs: await median(async () => store.view.counts()), seedS });
    await store.close();
    stop();
  }
  report('autopulse-list', rows, { done: DONE, open: OPEN, runs: RUNS });
  return { rows };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchAutopulseList();
