/**
 * The queue on SQLite and on PostgreSQL (SERVER_QUEUE_URL), side by side on the real `scanrelay server` process:
 * - intake: requests/s and p99 with every request committed before its answer (a new folder per request, and
 *   1,000 folders round-robin, which merge into scans already queued); both relays run at once and each load
 *   goes to one, then the other, in turns, so a machine that gets busier weighs on both;
 * - drain: N scans, all due at the same moment, delivered to a fake Jellyfin (which takes scans concurrently,
 *   unlike Plex's one at a time, so the queue's claim and finish are what is timed); on PostgreSQL by one
 *   relay and by two relays sharing the queue.
 * On PostgreSQL it also counts the statements the relays sent (pg_stat_statements) and the round trips they
 * took, per accepted request and per delivered scan: figures that the machine's load does not change.
 * PostgreSQL is a throwaway local cluster with fsync on, as durable as SQLite's synchronous=FULL. Without
 * PostgreSQL's programs the PostgreSQL rows are skipped, and a line says so.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { scanRequestSchema } from '../src/core/scan.ts';
import type { QueueBackend } from '../src/queue/backend.ts';
import { PgQueueStore } from '../src/queue/pg/store.ts';
import { QueueStore } from '../src/queue/store.ts';
import { FakeMediaServer } from '../test/fakes/jellyfin.ts';
import { postgresBinDir, startPgCluster, type PgCluster } from '../test/helpers/postgres.ts';
import { spawnRelay, tempDir, waitFor, type RelayProcess } from '../test/helpers/relay.ts';
import { load, relayNodeArgs, report } from './lib.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,50').split(',').map(Number);
const DRAIN = Number(process.env.BENCH_DRAIN_SCANS ?? 500);

/** `url`: the PostgreSQL database; `fresh`: makes a new one for each try. */
type Store = { name: string; relays: number; url?: string; fresh?: () => Promise<string> };

/** The machine's 1-minute load average, printed beside each figure (other work on the same cores shows there). */
const loadNow = () => Math.round(loadavg()[0]! * 10) / 10;

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

interface Counted {
  statements: number;
  /** A query without parameters may carry several statements in one round trip: BEGIN and the queue lock do. */
  roundTrips: number;
  /** The most frequent statements, for reading where the round trips go. */
  top: Array<{ calls: number; query: string }>;
}

/** Counts what the relays send to one database, through pg_stat_statements (the cluster loads it). */
class StatementCounter {
  private constructor(private readonly admin: pg.Client) {}

  static async open(cluster: PgCluster): Promise<StatementCounter> {
    const admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    return new StatementCounter(admin);
  }

  async reset(): Promise<void> {
    await this.admin.query('SELECT pg_stat_statements_reset()');
  }

  async read(url: string): Promise<Counted> {
    const { rows } = await this.admin.query<{ calls: number; query: string }>(
      `SELECT s.calls::int AS calls, left(regexp_replace(s.query, '\\s+', ' ', 'g'), 90) AS query
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 ORDER BY s.calls DESC`,
      [new URL(url).pathname.slice(1)],
    );
    const statements = rows.reduce((n, r) => n + r.calls, 0);
    // What PgQueueStore sends in one query with BEGIN: the queue's lock, a scan's row lock.
    const riders = rows.filter((r) => /^SELECT (pg_advisory_xact_lock|\$1 FROM scans WHERE id = \$2 FOR UPDATE)/.test(r.query)).reduce((n, r) => n + r.calls, 0);
    return { statements, roundTrips: statements - riders, top: rows.slice(0, 8) };
  }

  /** Scans still open in one database (the last finish is committed just after its scan reaches the target). */
  async open(url: string): Promise<number> {
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      return Number((await db.query(`SELECT count(*) AS n FROM scans WHERE status IN ('pending', 'active')`)).rows[0].n);
    } finally {
      await db.end();
    }
  }

  async close(): Promise<void> {
    await this.admin.end();
  }
}

const per = (n: number, of: number) => (of ? Math.round((n / of) * 100) / 100 : '');

async function intake(cluster: PgCluster | undefined, counter: StatementCounter | undefined): Promise<Array<Record<string, unknown>>> {
  const rows: Array<Record<string, unknown>> = [];
  const manual = (folder: string) => `eventType=Manual&filepath=${encodeURIComponent(`/movies/${folder}/f.mkv`)}`;
  const loads = [
    { name: 'new folder', body: (i: number) => manual(`New ${process.pid}-${Date.now()}-${i} (2000)`) },
    { name: 'round-robin', body: (i: number) => manual(`Film ${i % 1000} (2000)`) },
  ];
  const stores: Store[] = [{ name: 'SQLite', relays: 1 }, ...(cluster ? [{ name: 'PostgreSQL', relays: 1, url: await cluster.createDatabase() }] : [])];
  const jellyfin = await new FakeMediaServer({ name: 'jellyfin' }).start();
  const relays = await Promise.all(stores.map(async (s) => (await startRelays(jellyfin, s))[0]!));
  try {
    let turn = 0;
    for (const l of loads) {
      for (const c of CONCURRENCY) {
        // One store, then the other; the next load starts with the other one.
        const order = stores.map((_, i) => i);
        if (turn++ % 2) order.reverse();
        for (const i of order) {
          const store = stores[i]!;
          await counter?.reset();
          const r = await load({ label: `${store.name} ${l.name}`, url: relays[i]!.url, connections: c, durationSec: DURATION, body: l.body, contentType: 'application/x-www-form-urlencoded' });
          const n = store.url ? await counter!.read(store.url) : undefined;
          rows.push({
            store: store.name, load: l.name, c, 'req/s': r.requestsPerSec, 'p50 ms': r.p50, 'p99 ms': r.p99, errors: r.errors, non2xx: r.non2xx,
            'statements/req': n ? per(n.statements, r.total) : '-', 'round trips/req': n ? per(n.roundTrips, r.total) : '-', 'load avg': loadNow(),
            ...(n ? { top: n.top } : {}),
          });
        }
      }
    }
  } finally {
    for (const r of relays) await r.kill();
    await jellyfin.stop();
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

/** One drain of DRAIN scans due `lead` ms after they are queued; undefined when the relays were up too late (unless `last`). */
async function drainOnce(store: Store, lead: number, counter: StatementCounter | undefined, last: boolean): Promise<Record<string, unknown> | undefined> {
  const jellyfin = await new FakeMediaServer({ name: 'jellyfin' }).start();
  const dir = tempDir('scanrelay-bench-');
  const url = store.fresh ? await store.fresh() : undefined;
  const open = url ? PgQueueStore.open({ url, relayId: 'seed' }) : Promise.resolve(new QueueStore(join(dir, 'queue.db')));
  const dueAt = await seed(await open, DRAIN, lead);
  const relays = await startRelays(jellyfin, { ...store, url }, dir);
  const ready = Date.now();
  await counter?.reset();
  try {
    if (ready > dueAt && !last) return undefined;
    await waitFor(() => jellyfin.updates.length >= DRAIN, 600_000, 'the drain');
    const ms = Math.max(...jellyfin.updates.map((u) => u.at)) - Math.max(dueAt, ready);
    const distinct = new Set(jellyfin.updates.map((u) => u.path)).size;
    if (url) await waitFor(async () => (await counter!.open(url)) === 0, 30_000, 'the last finish');
    const n = url ? await counter!.read(url) : undefined;
    return {
      store: store.name, relays: store.relays, scans: DRAIN, seconds: Math.round(ms / 100) / 10, 'scans/s': Math.round(DRAIN / (ms / 1000)), 'sent twice': jellyfin.updates.length - distinct,
      'statements/scan': n ? per(n.statements, DRAIN) : '-', 'round trips/scan': n ? per(n.roundTrips, DRAIN) : '-', 'load avg': loadNow(),
      ...(ready > dueAt ? { note: `relays up ${Math.round((ready - dueAt) / 100) / 10} s after the due time: timed from then, and the first relay had started` } : {}),
      ...(n ? { top: n.top } : {}),
    };
  } finally {
    for (const r of relays) await r.kill();
    await jellyfin.stop();
  }
}

async function drain(cluster: PgCluster | undefined, counter: StatementCounter | undefined): Promise<Array<Record<string, unknown>>> {
  const rows: Array<Record<string, unknown>> = [];
  const stores: Store[] = [
    { name: 'SQLite', relays: 1 },
    ...(cluster
      ? [
          { name: 'PostgreSQL', relays: 1, fresh: () => cluster.createDatabase() },
          { name: 'PostgreSQL', relays: 2, fresh: () => cluster.createDatabase() },
        ]
      : []),
  ];
  for (const store of stores) {
    // Due a few seconds from now, so that the relays are up and idle when the drain starts and start-up is not
    // timed; on a machine too busy to start them in time, again with twice the lead (three tries at most).
    for (let lead = 8000, tries = 1; ; lead *= 2, tries++) {
      const row = await drainOnce(store, lead, counter, tries === 3);
      if (row) {
        rows.push(row);
        break;
      }
    }
  }
  return rows;
}

/** The tables without the statement lists and notes (the lists go in the JSON line, the notes below the table). */
const shown = (rows: Array<Record<string, unknown>>) => rows.map(({ top: _top, note: _note, ...r }) => r);
const statementLists = (rows: Array<Record<string, unknown>>) =>
  rows.filter((r) => r.top).map(({ store, load, c, relays, top }) => ({ store, ...(load ? { load, c } : { relays }), top }));
const notes = (rows: Array<Record<string, unknown>>) => {
  for (const r of rows) if (r.note) process.stdout.write(`note: ${r.store} ${r.relays} relay(s): ${r.note}\n`);
};

export async function benchSharedQueue(): Promise<Record<string, unknown>> {
  const bin = postgresBinDir();
  if (!bin) process.stdout.write('\nqueue store: PostgreSQL skipped: no /usr/lib/postgresql/<version>/bin/initdb (Debian package postgresql); SQLite only\n');
  const cluster = bin ? await startPgCluster({ durable: true, statementStats: true }) : undefined;
  const counter = cluster ? await StatementCounter.open(cluster) : undefined;
  try {
    const intakeRows = await intake(cluster, counter);
    report('queue store: intake', shown(intakeRows), { statements: statementLists(intakeRows) });
    const drainRows = await drain(cluster, counter);
    report('queue store: drain', shown(drainRows), { statements: statementLists(drainRows) });
    notes(drainRows);
    return { intake: shown(intakeRows), drain: shown(drainRows) };
  } finally {
    await counter?.close();
    cluster?.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSharedQueue();
