import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { UserError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { clientConfig } from '../../db/pg/connection.ts';
import { redactUrl } from '../../db/pg/redact.ts';
import { migrationFiles, newerSchemaError } from '../rows.ts';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Advisory lock keys (one 64-bit space per database): migrations, and the enqueue/activate section. */
export const MIGRATE_LOCK = 0x5c4e_0001;
export const QUEUE_LOCK = 0x5c4e_0002;

/**
 * A missing right as the operator fixes it: the statement that grants it (docs/postgres.md), or undefined when
 * `err` is not PostgreSQL's "permission denied" (42501) or "must be owner".
 */
export function missingGrant(err: unknown, url: string, user: string): UserError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== '42501') return undefined;
  const message = (err as Error).message;
  const database = (/permission denied for database "?([^"\s]+)/.exec(message) ?? [])[1];
  const schema = (/permission denied for schema "?([^"\s]+)/.exec(message) ?? [])[1];
  const who = /^[a-z_][a-z0-9_]*$/.test(user) ? user : JSON.stringify(user);
  const grant = database
    ? `GRANT CONNECT ON DATABASE ${database} TO ${who}`
    : schema
      ? `GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${who}`
      : /permission denied for (table|relation)/.test(message)
        ? `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${who}; GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${who}`
        : /permission denied for sequence/.test(message)
          ? `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${who}`
          : /must be owner/.test(message)
            ? `ALTER TABLE ... OWNER TO ${who} for each scanrelay table (the relay upgrades tables it owns), or start one relay as their owner`
            : undefined;
  return new UserError(
    `the queue database ${redactUrl(url)} refused user ${who}: ${message}. ${grant ? `As the database's owner or a superuser, run: ${grant}` : 'See "Setting up the database" in docs/postgres.md'}`,
  );
}

/**
 * Connects once (a clear error when PostgreSQL is unreachable at start) and runs the migrations in
 * ./migrations in order, each once, under an advisory lock so that relays starting together do not race.
 * `readOnly` (a command that only reads, such as `scanrelay queue`): creates and changes nothing, and says so
 * when no relay has made the tables yet or they are older than this release.
 */
export async function connectAndMigrate(url: string, application: string, opts: { readOnly?: boolean; log?: Logger } = {}): Promise<void> {
  const log = opts.log;
  let client: pg.Client;
  try {
    client = new pg.Client(clientConfig(url, application));
  } catch (err) {
    // Node's URL error carries the whole URL (its `input`): never printed.
    throw new UserError(
      `SERVER_QUEUE_URL ${redactUrl(url)} is not a URL node-postgres can read (${(err as Error).message}): percent-encode the password's special characters (@ as %40, / as %2F, # as %23, ? as %3F)`,
    );
  }
  // A connection lost between statements fails the next one; without a listener it would be a crash.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw missingGrant(err, url, client.user ?? '') ?? new UserError(`cannot reach the queue database at ${redactUrl(url)} (SERVER_QUEUE_URL): ${(err as Error).message || String(err)}`);
  }
  try {
    if (opts.readOnly) return await checkSchema(client, url);
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK]);
    // Only when missing: CREATE ... IF NOT EXISTS needs the CREATE right even when the table is there, and a
    // relay whose user was granted the tables (not the schema) must start once their owner made them.
    const { rows: made } = await client.query<{ ok: boolean }>(`SELECT to_regclass('schema_migrations') IS NOT NULL AS ok`);
    if (!made[0]?.ok) await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`);
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
  } catch (err) {
    throw missingGrant(err, url, client.user ?? '') ?? err;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** For a reader: the tables are there, at this release's version (it creates nothing: that is a relay's start). */
async function checkSchema(client: pg.Client, url: string): Promise<void> {
  const { rows: made } = await client.query<{ ok: boolean }>(`SELECT to_regclass('schema_migrations') IS NOT NULL AS ok`);
  if (!made[0]?.ok) {
    throw new UserError(`the queue database ${redactUrl(url)} has no scanrelay queue yet: start a relay with this SERVER_QUEUE_URL first (this command only reads, it creates no tables)`);
  }
  const versions = (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version);
  const known = migrationFiles(MIGRATIONS_DIR);
  const database = (await client.query<{ name: string }>('SELECT current_database() AS name')).rows[0]!.name;
  const newer = newerSchemaError(`the queue database "${database}" (SERVER_QUEUE_URL)`, new Set(versions), known);
  if (newer) throw newer;
  const missing = known.filter((m) => !versions.includes(m.version));
  if (missing.length) {
    throw new UserError(`the queue in ${redactUrl(url)} is from an older release (schema ${Math.max(0, ...versions)}): start a relay of this release first, which upgrades it (this command only reads)`);
  }
}
