/**
 * autopulse's unauthenticated /stats (issue 47 item 7) with BENCH_STATS_SCANS (20,000) scans queued, on SQLite and
 * (when PostgreSQL's programs are installed) PostgreSQL: BENCH_STATS_CALLS (3,000) calls through the real app
 * (app.inject, one after another, as fast as answered), the relay process's CPU time for them, the calls a second,
 * and how many times the counts were read (at most one read a second since the cache). Beside it, one read of the
 * counts (the median of 15), what each call cost before. The PostgreSQL server's own CPU is not in the figure.
 */
import { configSchema, type FileConfig } from '../src/config/schema.ts';
import { relayConfig } from '../src/config/named-targets.ts';
import { scanRequestSchema } from '../src/core/scan.ts';
import { silentLogger } from '../src/core/logger.ts';
import type { QueueBackend } from '../src/queue/backend.ts';
import { QueueIntake } from '../src/queue/door.ts';
import { buildApp } from '../src/server/app.ts';
import { DEFAULT_RECOGNIZERS } from '../src/server/run.ts';
import { benchStores, report } from './lib.ts';

const SCANS = Number(process.env.BENCH_STATS_SCANS ?? 20_000);
const CALLS = Number(process.env.BENCH_STATS_CALLS ?? 3_000);

async function seed(store: QueueBackend): Promise<void> {
  const req = (i: number) => scanRequestSchema.parse({ folder: `/media/tv/Show ${i}/Season 1`, source: 'Manual', files: [`/media/tv/Show ${i}/Season 1/e01.mkv`] });
  for (let i = 0; i < SCANS; i += 1000) await store.enqueueMany(Array.from({ length: Math.min(1000, SCANS - i) }, (_, k) => req(i + k)), { delayMs: 3_600_000, maxMs: 3_600_000 }, Date.now());
}

export async function benchStats(): Promise<Record<string, unknown>> {
  const rows: Array<Record<string, unknown>> = [];
  const stores = benchStores();
  for (const [name, open] of stores) {
    const { store, stop } = await open();
    await seed(store);
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      const t = performance.now();
      await store.view.eventCounts();
      times.push(performance.now() - t);
    }
    const oneReadMs = Math.round(times.sort((a, b) => a - b)[7]! * 100) / 100;
    let reads = 0;
    const counts = store.view.eventCounts.bind(store.view);
    store.view.eventCounts = () => {
      reads++;
      return counts();
    };
    const config = relayConfig(configSchema.parse({ SERVER_PASS: 'bench-stats-secret', SERVER_AUTH_USER: 'u', SERVER_AUTH_PASS: 'p', SERVER_AUTOPULSE_TRIGGERS: { manual: { TYPE: 'manual' } } }) as FileConfig);
    const app = await buildApp({ config, log: silentLogger(), intake: new QueueIntake(store, [], () => ({ delayMs: 0, maxMs: 0 })), store, recognizers: DEFAULT_RECOGNIZERS });
    await app.ready();
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < CALLS; i++) await app.inject({ method: 'GET', url: '/stats' });
    const wallS = (performance.now() - start) / 1000;
    const used = process.cpuUsage(cpu);
    rows.push({
      store: name,
      scans: SCANS,
      calls: CALLS,
      callsPerS: Math.round(CALLS / wallS),
      cpuS: Math.round(((used.user + used.system) / 1e6) * 100) / 100,
      reads,
      oneReadMs,
      cpuSBeforeEst: Math.round(((oneReadMs * CALLS) / 1000) * 10) / 10,
    });
    await app.close();
    await store.close();
    stop();
  }
  report('stats', rows, { scans: SCANS, calls: CALLS });
  return { rows };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStats();
