/**
 * Memory and queue drain, on the real `scanrelay server` process:
 * - RSS 2 s after start, idle (at rest for BENCH_SETTLE_S), with 100,000 pending scans (seeded into its queue
 *   file), at the peak of their drain, 2 s and 60 s after it;
 * - time to deliver 10,000 pending scans to a fake Plex answering instantly, and with 50 ms latency.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scanRequestSchema } from '../src/core/scan.ts';
import { QueueStore } from '../src/queue/store.ts';
import { FakePlex } from '../test/fakes/plex.ts';
import { spawnRelay, tempDir, waitFor, type RelayProcess } from '../test/helpers/relay.ts';
import { report } from './lib.ts';

/** How long a relay rests before "idle" and "settled" are read (BENCH_SETTLE_S, default 20). */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_S ?? 20) * 1000;
/** After a drain, V8's memory reducer returns the heap about half a minute after the work stops. */
const DRAIN_SETTLE_MS = 60_000;
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
    logFile: join(tempDir('scanrelay-bench-log-'), 'relay.log'),
  });
}

async function queueCount(relay: RelayProcess): Promise<number> {
  const res = await fetch(`${relay.base}/api/${relay.secret}?cmd=queue_count`);
  return ((await res.json()) as { queue_count: number }).queue_count;
}

async function memory(): Promise<Record<string, unknown>> {
  const plex = await new FakePlex().start();
  const idleDir = tempDir('scanrelay-bench-');
  let relay = await relayWith(plex, idleDir);
  await sleep(2000);
  const started = rssOf(relay.proc.pid!);
  // A relay at rest: V8 returns startup garbage to the system a few seconds after the work stops.
  await sleep(SETTLE_MS);
  const idle = rssOf(relay.proc.pid!);
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
  let peak = 0;
  const drainStarted = Date.now();
  await waitFor(async () => {
    peak = Math.max(peak, rssOf(relay.proc.pid!));
    return (await queueCount(relay)) === 0;
  }, 600_000, 'backlog drain');
  const drainMs = Date.now() - drainStarted;
  await sleep(2000);
  const justAfter = rssOf(relay.proc.pid!);
  await sleep(DRAIN_SETTLE_MS);
  const after = rssOf(relay.proc.pid!);
  await relay.kill();
  await plex.stop();
  return {
    'started MB': started,
    'idle MB': idle,
    [`${n} pending MB`]: backlog,
    'peak while draining MB': peak,
    '2 s after drain MB': justAfter,
    '60 s after drain MB': after,
    [`drain ${n} s`]: Math.round(drainMs / 100) / 10,
  };
}

async function drain(latencyMs: number, n: number): Promise<Record<string, unknown>> {
  const plex = await new FakePlex().start();
  plex.latencyMs = latencyMs;
  const dir = tempDir('scanrelay-bench-');
  seed(join(dir, 'queue.db'), n, 0);
  const started = Date.now();
  const relay = await relayWith(plex, dir);
  await waitFor(() => plex.refreshes().length >= n, 900_000, 'drain');
  const ms = Date.now() - started;
  await relay.kill();
  await plex.stop();
  return { 'plex latency ms': latencyMs, scans: n, seconds: Math.round(ms / 100) / 10, 'scans/s': Math.round(n / (ms / 1000)) };
}

export async function benchMemoryDrain(): Promise<Record<string, unknown>> {
  const mem = await memory();
  report('memory', [mem], {});
  const rows = [await drain(0, 10_000), await drain(50, 10_000)];
  report('drain', rows, {});
  return { memory: mem, drain: rows };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchMemoryDrain();
