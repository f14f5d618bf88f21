/**
 * The queue on SQLite and on PostgreSQL (SERVER_QUEUE_URL), side by side on the real `scanrelay server` process:
 * - intake: requests/s with every request committed before its answer (a new folder per request, and 1,000
 *   folders round-robin, which merge into scans already queued);
 * - drain: N scans, all due at the same moment, delivered to a fake Jellyfin (which takes scans concurrently,
 *   unlike Plex's one at a time, so the queue's claim and finish are what is timed); on PostgreSQL by one
 *   relay and by two relays sharing the queue.
 * PostgreSQL is a throwaway local cluster with fsync on, as durable as SQLite's synchronous=FULL.
 */
import { join } from 'node:path';
import { scanRequestSchema } from '../src/core/scan.ts';
import type { QueueBackend } from '../src/queue/backend.ts';
import { PgQueueStore } from '../src/queue/pg/store.ts';
import { QueueStore } from '../src/queue/store.ts';
import { FakeMediaServer } from '../test/fakes/jellyfin.ts';
import { startPgCluster, type PgCluster } from '../test/helpers/postgres.ts';
import { spawnRelay, tempDir, waitFor, type RelayProcess } from '../test/helpers/relay.ts';
import { load, relayNodeArgs, report } from './lib.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,50').split(',').map(Number);
const DRAIN = Number(process.env.BENCH_DRAIN_SCANS ?? 2000);

type Store = { name: string; relays: number; url?: string };

function relayConfig(jellyfin: FakeMediaServer, store: Store, id: string) {
  return {
    PLEX_ENABLED: false,
    JELLYFIN: { ENABLED: true, URL: jellyfin.url, API_KEY: jellyfin.apiKey },
    SERVER_SCAN_DELAY: 3600,
    SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'] },
    ...(store.url ? { SERVER_QUEUE_URL: store.url, SERVER_RELAY_ID: id } : {}),
  };
}

async function startRelays(jellyfin: FakeMediaServer, store: Store, dir?: string): Promise<RelayProcess[]> {
  const relays: RelayProcess[] = [];
  for (let i = 0; i < store.relays; i++) {
    relays.push(
      await spawnRelay({
        ...(dir && i === 0 ? { dir } : {}),
        config: relayConfig(jellyfin, store, `bench-${i}`),
        env: { SCANRELAY_LOGLEVEL: 'info' },
        nodeArgs: relayNodeArgs(),
        logFile: join(tempDir('scanrelay-bench-log-'), 'relay.log'),
      }),
    );
  }
  return relays;
}

async function intake(cluster: PgCluster): Promise<Array<Record<string, unknown>>> {
  const rows: Array<Record<string, unknown>> = [];
  const manual = (folder: string) => `eventType=Manual&filepath=${encodeURIComponent(`/movies/${folder}/f.mkv`)}`;
  const loads = [
    { name: 'new folder', body: (i: number) => manual(`New ${process.pid}-${Date.now()}-${i} (2000)`) },
    { name: 'round-robin', body: (i: number) => manual(`Film ${i % 1000} (2000)`) },
  ];
  for (const store of [{ name: 'SQLite', relays: 1 }, { name: 'PostgreSQL', relays: 1, url: await cluster.createDatabase() }] as Store[]) {
    const jellyfin = await new FakeMediaServer({ name: 'jellyfin' }).start();
    const [relay] = await startRelays(jellyfin, store);
    try {
      for (const l of loads) {
        for (const c of CONCURRENCY) {
          const r = await load({ label: `${store.name} ${l.name}`, url: relay!.url, connections: c, durationSec: DURATION, body: l.body, contentType: 'application/x-www-form-urlencoded' });
          rows.push({ store: store.name, load: l.name, c, 'req/s': r.requestsPerSec, 'p50 ms': r.p50, 'p99 ms': r.p99, errors: r.errors, non2xx: r.non2xx });
        }
      }
    } finally {
      await relay!.kill();
      await jellyfin.stop();
    }
  }
  return rows;
}

/** Seeds `n` scans due at `dueAt` into the store the relays will use. */
async function seed(store: QueueBackend, n: number, dueInMs: number): Promise<number> {
  const batch = Array.from({ length: n }, (_, j) => scanRequestSchema.parse({ folder: `/data/Movies/Film ${j} (2000)`, source: 'Manual' }));
  const now = Date.now();
  await store.enqueueMany(batch, { delayMs: dueInMs, maxMs: 0 }, now);
  await store.close();
  return now + dueInMs;
}

async function drain(cluster: PgCluster): Promise<Array<Record<string, unknown>>> {
  const rows: Array<Record<string, unknown>> = [];
  const stores: Store[] = [
    { name: 'SQLite', relays: 1 },
    { name: 'PostgreSQL', relays: 1, url: await cluster.createDatabase() },
    { name: 'PostgreSQL', relays: 2, url: await cluster.createDatabase() },
  ];
  for (const store of stores) {
    const jellyfin = await new FakeMediaServer({ name: 'jellyfin' }).start();
    const dir = tempDir('scanrelay-bench-');
    // Due a few seconds from now: the relays are up and idle when the drain starts, so start-up is not timed.
    const open = store.url ? PgQueueStore.open({ url: store.url, relayId: 'seed' }) : Promise.resolve(new QueueStore(join(dir, 'queue.db')));
    const dueAt = await seed(await open, DRAIN, 8000);
    const relays = await startRelays(jellyfin, store, dir);
    try {
      await waitFor(() => jellyfin.updates.length >= DRAIN, 600_000, 'the drain');
      const ms = Date.now() - dueAt;
      const distinct = new Set(jellyfin.updates.map((u) => u.path)).size;
      rows.push({ store: store.name, relays: store.relays, scans: DRAIN, seconds: Math.round(ms / 100) / 10, 'scans/s': Math.round(DRAIN / (ms / 1000)), 'sent twice': jellyfin.updates.length - distinct });
    } finally {
      for (const r of relays) await r.kill();
      await jellyfin.stop();
    }
  }
  return rows;
}

export async function benchSharedQueue(): Promise<Record<string, unknown>> {
  const cluster = await startPgCluster({ durable: true });
  try {
    const intakeRows = await intake(cluster);
    report('queue store: intake', intakeRows, {});
    const drainRows = await drain(cluster);
    report('queue store: drain', drainRows, {});
    return { intake: intakeRows, drain: drainRows };
  } finally {
    cluster.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSharedQueue();
