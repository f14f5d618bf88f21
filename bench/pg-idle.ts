/**
 * What relays at rest cost their shared PostgreSQL queue: one relay, then two, with a fake Plex (a serial target,
 * so each look takes and releases Plex's turn) and nothing queued. After `BENCH_SETTLE_S` (default 5) the bench
 * counts, over `BENCH_IDLE_S` (default 30), the statements the relays sent (pg_stat_statements, every statement
 * counted) and the transactions PostgreSQL committed in their database (pg_stat_database.xact_commit), and prints
 * both per relay per second. The relays run with the defaults (SERVER_QUEUE_LEASE 30 s, a 5 s safety poll).
 */
import pg from 'pg';
import { FakePlex } from '../test/fakes/plex.ts';
import { postgresBinDir, startPgCluster } from '../test/helpers/postgres.ts';
import { spawnRelay, type RelayProcess } from '../test/helpers/relay.ts';
import { relayNodeArgs, report } from './lib.ts';

const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 5);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 30);

const pause = (s: number) => new Promise((r) => setTimeout(r, s * 1000));

export async function benchPgIdle(): Promise<Record<string, unknown>> {
  if (!postgresBinDir()) {
    process.stdout.write('\n== idle relays on PostgreSQL ==\nPostgreSQL is not installed: skipped\n');
    return { skipped: true };
  }
  const cluster = await startPgCluster({ statementStats: true });
  const admin = new pg.Client({ connectionString: cluster.url() });
  await admin.connect();
  const plex = await new FakePlex().start();
  const rows: Array<Record<string, unknown>> = [];
  try {
    for (const count of [1, 2]) {
      const url = await cluster.createDatabase();
      const db = new URL(url).pathname.slice(1);
      const relays: RelayProcess[] = [];
      try {
        for (let i = 0; i < count; i++) {
          relays.push(
            await spawnRelay({
              config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'] }, SERVER_QUEUE_URL: url, SERVER_RELAY_ID: `idle-${i}` },
              env: { SCANRELAY_LOGLEVEL: 'info' },
              nodeArgs: relayNodeArgs(),
            }),
          );
        }
        await pause(SETTLE_S);
        // Stats reach pg_stat_database when a backend is idle or each second; the window is long enough for both.
        const read = async () => {
          const s = await admin.query<{ n: string }>(`SELECT coalesce(sum(s.calls), 0) AS n FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1`, [db]);
          const x = await admin.query<{ n: string }>(`SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1`, [db]);
          return { statements: Number(s.rows[0]!.n), commits: Number(x.rows[0]!.n) };
        };
        await admin.query('SELECT pg_stat_statements_reset()');
        const before = await read();
        await pause(IDLE_S);
        const now = await read();
        const perRelayPerS = (n: number) => Math.round((n / count / IDLE_S) * 10) / 10;
        rows.push({
          relays: count,
          seconds: IDLE_S,
          statements: now.statements - before.statements,
          'statements/relay/s': perRelayPerS(now.statements - before.statements),
          commits: now.commits - before.commits,
          'commits/relay/s': perRelayPerS(now.commits - before.commits),
          'Plex refreshes': plex.refreshes().length,
        });
      } finally {
        for (const r of relays) await r.kill();
      }
    }
  } finally {
    await plex.stop();
    await admin.end();
    cluster.destroy();
  }
  report('idle relays on PostgreSQL', rows, {});
  return { rows };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchPgIdle();
