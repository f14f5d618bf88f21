/**
 * Memory and queue drain, on the real `scanrelay server` process:
 * - RSS 2 s after start, idle (at rest for BENCH_SETTLE_S), after 5 s of manual requests at plex_autoscan's rate,
 *   right after and 30 s after 5 s of them as fast as answered, with 100,000 pending scans (seeded into its queue
 *   file), and at the peak of the first minute of their drain (one Plex scan at a time: a full drain takes hours);
 * - the drain's speed: serial-drain.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scanRequestSchema } from '../src/core/scan.ts';
import { QueueStore } from '../src/queue/store.ts';
import { FakePlex } from '../test/fakes/plex.ts';
import { spawnRelay, tempDir, type RelayProcess } from '../test/helpers/relay.ts';
import { load, relayNodeArgs, report } from './lib.ts';
import { benchSerialDrain } from './serial-drain.ts';

/** How long a relay rests before "idle" and "settled" are read (BENCH_SETTLE_S, default 20). */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_S ?? 20) * 1000;
/** How long the backlog drains while its peak memory is read (BENCH_DRAIN_WINDOW_S, default 60). */
const DRAIN_WINDOW_MS = Number(process.env.BENCH_DRAIN_WINDOW_S ?? 60) * 1000;
/** plex_autoscan's intake on this machine, requests per second (bench/README.md): the paced load's rate. */
const PLEX_AUTOSCAN_RATE = 36;
/** How long after the load the settled figure is read (BENCH_AFTER_LOAD_S, default 30). */
const SETTLE_AFTER_LOAD_MS = Number(process.env.BENCH_AFTER_LOAD_S ?? 30) * 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 102.4) / 10;
}

/** Seeds `n` pending scans due `dueInMs` from now, in distinct folders. */
function seed(queuefile: string, n: number, dueInMs: number): void {
  const store = new QueueStore(queuefile);
  const timing = { delayMs: dueInMs, maxMs: dueInMs };
  for (let i = 0; i < n; i += 5000) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 5000); j++) {
      batch.push(scanRequestSchema.parse({ folder: `/data/Movies/Film ${j} (2000)`, files: [`/data/Movies/Film ${j} (2000)/f.mkv`], source: 'Manual' }));
    }
    store.enqueueMany(batch, timing);
  }
  store.close();
}

async function relayWith(plex: FakePlex, dir: string): Promise<RelayProcess> {
  return spawnRelay({
    dir,
    config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_SCAN_DELAY: 3600 },
    env: { SCANRELAY_LOGLEVEL: 'info' },
    nodeArgs: relayNodeArgs(),
    logFile: join(tempDir('scanrelay-bench-log-'), 'relay.log'),
  });
}

/**
 * The issue's load: manual form POSTs over 1,000 distinct folders at 50 connections for 5 s (the figure
 * plex_autoscan was measured with: 79 MB right after it).
 */
async function manualLoad(relay: RelayProcess, seconds = 5, connections = 50, folders = 1000, overallRate?: number, amount?: number): Promise<number> {
  const result = await load({
    label: 'manual over distinct folders',
    overallRate,
    amount,
    url: relay.url,
    connections,
    durationSec: seconds,
    contentType: 'application/x-www-form-urlencoded',
    body: (i) => `eventType=Manual&filepath=${encodeURIComponent(`/data/Movies/Film ${i % folders} (2000)/f.mkv`)}`,
  });
  return result.total;
}

async function queueCount(relay: RelayProcess): Promise<number> {
  const res = await fetch(`${relay.base}/api/${relay.secret}?cmd=queue_count`);
  return ((await res.json()) as { queue_count: number }).queue_count;
}

export async function memory(): Promise<Record<string, unknown>> {
  const plex = await new FakePlex().start();
  const idleDir = tempDir('scanrelay-bench-');
  let relay = await relayWith(plex, idleDir);
  await sleep(2000);
  const started = rssOf(relay.proc.pid!);
  // A relay at rest: V8 returns startup garbage to the system a few seconds after the work stops.
  await sleep(SETTLE_MS);
  const idle = rssOf(relay.proc.pid!);
  // First the requests plex_autoscan answered in those 5 s (about 36 a second), then the load as fast as
  // the relay answers, which is some 200 times as many.
  const paced = await manualLoad(relay, 5, 50, 1000, PLEX_AUTOSCAN_RATE);
  const afterPaced = rssOf(relay.proc.pid!);
  const requests = await manualLoad(relay);
  const afterLoad = rssOf(relay.proc.pid!);
  // V8 gives the garbage of a burst back once the process has been quiet for a while.
  await sleep(SETTLE_AFTER_LOAD_MS);
  const settledAfterLoad = rssOf(relay.proc.pid!);
  await relay.kill();

  const dir = tempDir('scanrelay-bench-');
  const n = Number(process.env.BENCH_BACKLOG ?? 100_000);
  seed(join(dir, 'queue.db'), n, 60_000);
  await plex.setMode('down');
  relay = await relayWith(plex, dir);
  await sleep(2000);
  const backlog = rssOf(relay.proc.pid!);
  // Make everything due now and let it drain into Plex.
  await relay.kill();
  const store = new QueueStore(join(dir, 'queue.db'));
  store.db.prepare(`UPDATE scans SET due_at = 0 WHERE status = 'pending'`).run();
  store.close();
  await plex.setMode('up');
  relay = await relayWith(plex, dir);
  // Plex gets one scan at a time, so a backlog this size drains for hours: read the peak over a window.
  let peak = 0;
  const windowEnds = Date.now() + DRAIN_WINDOW_MS;
  while (Date.now() < windowEnds) {
    peak = Math.max(peak, rssOf(relay.proc.pid!));
    await sleep(500);
  }
  const sent = plex.refreshes().length;
  const left = await queueCount(relay);
  const endOfWindow = rssOf(relay.proc.pid!);
  await relay.kill();
  await plex.stop();
  return {
    'started MB': started,
    'idle MB': idle,
    [`after 5 s at ${PLEX_AUTOSCAN_RATE} requests/s MB`]: afterPaced,
    'paced requests': paced,
    'right after the 1,000-folder load MB': afterLoad,
    'load requests': requests,
    [`${SETTLE_AFTER_LOAD_MS / 1000} s after the load MB`]: settledAfterLoad,
    [`${n} pending MB`]: backlog,
    [`peak over ${DRAIN_WINDOW_MS / 1000} s of draining MB`]: peak,
    'scans sent in the window': sent,
    'still queued': left,
    // With a backlog small enough to drain within the window (BENCH_BACKLOG=100 BENCH_DRAIN_WINDOW_S=300), the
    // relay's memory after a drain.
    'at the end of the window MB': endOfWindow,
  };
}

/** RSS and its parts (/proc/<pid>/smaps_rollup): anonymous memory is V8's heap and malloc's; the rest is mostly the binary. */
function memoryOf(pid: number): { rss: number; anon: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const mb = (key: string) => Math.round(Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0) / 102.4) / 10;
  return { rss: mb('Rss'), anon: mb('Anonymous') };
}

/**
 * Memory after a burst settles (issue 35, item 15): idle, after 60 health checks, right after 5 s of manual POSTs
 * at 50 connections as fast as answered (or BENCH_BURST_REQUESTS of them), and 5, 10, 20 and 30 s after it (RSS,
 * and in brackets its anonymous part: V8's heap and malloc's).
 */
export async function burst(): Promise<Record<string, unknown>> {
  const plex = await new FakePlex().start();
  const relay = await relayWith(plex, tempDir('scanrelay-bench-'));
  const pid = relay.proc.pid!;
  const show = (m: { rss: number; anon: number }) => `${m.rss} (${m.anon})`;
  try {
    await sleep(2000 + SETTLE_MS);
    const idle = memoryOf(pid);
    // A relay at rest still answers health checks (Docker's HEALTHCHECK: one every 30 s). A few dozen make a function
    // hot enough for V8 to optimize, and its optimizing compiler's code comes into memory (bench/README.md "Memory").
    for (let i = 0; i < 60; i++) await (await fetch(`${relay.base}/healthz`)).text();
    await sleep(10_000);
    const checked = memoryOf(pid);
    // BENCH_BURST_REQUESTS: that many requests instead of 5 s' worth (comparable runs on a busy machine).
    const amount = process.env.BENCH_BURST_REQUESTS ? Number(process.env.BENCH_BURST_REQUESTS) : undefined;
    const requests = await manualLoad(relay, 5, 50, 1000, undefined, amount);
    const start = Date.now();
    const right = memoryOf(pid);
    const after: Record<string, string> = {};
    for (const s of [5, 10, 20, 30]) {
      await sleep(Math.max(0, start + s * 1000 - Date.now()));
      after[`${s} s after MB`] = show(memoryOf(pid));
    }
    return { 'idle MB': show(idle), 'after 60 health checks MB': show(checked), 'load requests': requests, 'right after MB': show(right), ...after };
  } finally {
    await relay.kill();
    await plex.stop();
  }
}

export async function benchMemoryDrain(): Promise<Record<string, unknown>> {
  const mem = await memory();
  report('memory', [mem], {});
  // The drain's speed, one Plex scan at a time: serial-drain.ts.
  const drain = await benchSerialDrain();
  return { memory: mem, drain };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchMemoryDrain();
