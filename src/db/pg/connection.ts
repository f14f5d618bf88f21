import pg from 'pg';
import { QueueUnavailableError } from '../../core/errors.ts';
import { redactUrl } from './redact.ts';

/*
 * PostgreSQL as the relay connects to it: the client settings, and statements whose lost connection becomes
 * QueueUnavailableError. The queue and the drive cache share the database, so they share these.
 */

/** BIGINT (times in ms, ids, counts) as numbers: every value the relay keeps fits in 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === pg.types.builtins.INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/**
 * node-postgres (8.x) verifies the server's certificate for sslmode=prefer, require and verify-ca as for
 * verify-full, and says so in a multi-line "SECURITY WARNING" on stderr. The URL is given the mode it gets
 * anyway, so the log stays one line per event (docs/postgres.md). `uselibpqcompat=true` keeps libpq's meanings.
 */
export function sslAsRead(url: string): string {
  if (/[?&]uselibpqcompat=true(&|#|$)/i.test(url)) return url;
  return url.replace(/([?&]sslmode=)(prefer|require|verify-ca)(?=&|#|$)/, '$1verify-full');
}
/**
 * Why node-postgres would read part of the URL's password as its host, or undefined: an unencoded '#', '/' or
 * '?' in the password ends the authority there (postgres://relay:p@hunter2#x@db/q has host "hunter2"), and the
 * connection error would then name that piece of the password ("getaddrinfo ENOTFOUND hunter2").
 */
export function unencodedPassword(url: string): string | undefined {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  if (!scheme) return undefined;
  const rest = url.slice(scheme[0].length);
  const end = rest.search(/[/?#]/);
  if (end < 0 || rest.lastIndexOf('@') < end) return undefined;
  // A user and password before the delimiter, and an '@' after it: the password went on past the delimiter.
  const authority = rest.slice(0, end);
  const at = authority.lastIndexOf('@');
  if (at < 0 || !authority.slice(0, at).includes(':')) return undefined;
  return `its password holds an unencoded "${rest[end]}"`;
}

/** Connection settings: short timeouts, so that a lost database turns into a quick 503, not a hung request. */
export function clientConfig(url: string, application: string): pg.ClientConfig {
  const unencoded = unencodedPassword(url);
  if (unencoded) throw new Error(unencoded);
  return {
    connectionString: sslAsRead(url),
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
