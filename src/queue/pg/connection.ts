import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { UserError } from '../../config/errors.ts';
import { QueueUnavailableError } from '../backend.ts';
import type { Logger } from '../../log.ts';
import { migrationFiles, newerSchemaError } from '../rows.ts';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Advisory lock keys (one 64-bit space per database): migrations, and the enqueue/activate section. */
export const MIGRATE_LOCK = 0x5c4e_0001;
export const QUEUE_LOCK = 0x5c4e_0002;

/** BIGINT (times in ms, ids, counts) as numbers: every value the queue keeps fits in 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === pg.types.builtins.INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** The URL as it may be shown: the password replaced by ***. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
  }
}

/** Connection settings: short timeouts, so that a lost database turns into a quick 503, not a hung request. */
export function clientConfig(url: string, application: string): pg.ClientConfig {
  return {
    connectionString: url,
    connectionTimeoutMillis: 3000,
    query_timeout: 10_000,
    keepAlive: true,
    application_name: application,
    types,
  };
}

/** SQLSTATE classes that mean the server went away, not that a statement was wrong. */
const LOST_CLASSES = ['08', '57', '53'];

/** Whether an error means the database cannot be reached (as opposed to a bad statement). */
export function isConnectionError(err: unknown): boolean {
  if (err instanceof QueueUnavailableError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return LOST_CLASSES.includes(code.slice(0, 2));
  // Node socket errors (ECONNREFUSED, ECONNRESET, ...), pg's own "Connection terminated", timeouts.
  const message = (err as Error | null)?.message ?? '';
  return typeof code === 'string' || /connection|timeout|terminated|not queryable/i.test(message);
}

/** Rethrows a lost connection as QueueUnavailableError naming the URL (without password). */
export function unavailable(err: unknown, url: string): unknown {
  if (!isConnectionError(err) || err instanceof QueueUnavailableError) return err;
  return new QueueUnavailableError(`the queue database ${redactUrl(url)} cannot be reached: ${(err as Error).message}`, { cause: err });
}

type Db = Pick<pg.ClientBase, 'query'>;

/** One statement on any pooled connection; a lost database becomes QueueUnavailableError naming `url`. */
export async function poolQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(pool: pg.Pool, url: string, sql: string, params?: unknown[]): Promise<pg.QueryResult<R>> {
  try {
    return await pool.query<R>(sql, params);
  } catch (err) {
    throw unavailable(err, url);
  }
}

/**
 * A transaction on one pooled connection, opened with `begin` (BEGIN, and what must be locked in the same round
 * trip). A lost database becomes QueueUnavailableError naming `url`; a connection that broke is not reused.
 */
export async function inTransaction<T>(pool: pg.Pool, url: string, body: (db: Db) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw unavailable(err, url);
  }
  let broken = false;
  // A checked-out connection has no listener of the pool's: a connection lost between two statements
  // would otherwise be an unhandled 'error' event (a crash). The next statement fails and says so.
  const onError = () => (broken = true);
  client.on('error', onError);
  try {
    await client.query(begin);
    const out = await body(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw unavailable(err, url);
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}

/**
 * Connects once (a clear error when PostgreSQL is unreachable at start) and runs the migrations in
 * ./migrations in order, each once, under an advisory lock so that relays starting together do not race.
 */
export async function connectAndMigrate(url: string, application: string, log?: Logger): Promise<void> {
  const client = new pg.Client(clientConfig(url, application));
  // A connection lost between statements fails the next one; without a listener it would be a crash.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw new UserError(`cannot reach the queue database at ${redactUrl(url)} (SERVER_QUEUE_URL): ${(err as Error).message || String(err)}`);
  }
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`);
    const applied = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const known = migrationFiles(MIGRATIONS_DIR);
    // The database is named by its name alone: the URL can hold a password in more places than one.
    const database = (await client.query<{ name: string }>('SELECT current_database() AS name')).rows[0]!.name;
    const newer = newerSchemaError(`the queue database "${database}" (SERVER_QUEUE_URL)`, applied, known);
    if (newer) throw newer;
    for (const { version, name, sql } of known) {
      if (applied.has(version)) continue;
      log?.info({ database, migration: name, schema: version }, `queue: migrating database "${database}" to schema ${version} (${name})`);
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [version, Date.now()]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    }
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATE_LOCK]);
  } finally {
    await client.end().catch(() => undefined);
  }
}
