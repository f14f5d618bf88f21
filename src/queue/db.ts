import type Database from 'better-sqlite3';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isBusy, openSqlite } from '../db/sqlite.ts';
import type { Logger } from '../core/logger.ts';
import { migrationFiles, newerSchemaError } from './rows.ts';

/** How long one queue statement may block waiting for another process's lock. */
export const QUEUE_BUSY_TIMEOUT_MS = 20;

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Opens the queue file, shared by the queue, its read-side views and its key-value store. Durable: WAL with
 * synchronous=FULL, so a commit survives power loss (requests are grouped by QueueIntake, so the fsync is
 * shared). Private (0600): the queue holds every path the relay was asked about. The migrations in
 * ./migrations run once each, in order. After that, a short busy wait: a lock held by another process must
 * not freeze the event loop; QueueIntake retries without blocking, other callers answer 503.
 */
export function openQueueDb(file: string, log?: Logger): Database.Database {
  const db = openSqlite(file, { durable: true, private: true });
  try {
    // Before anything changes the file: a queue from a newer release is left as it is.
    const newer = newerSchemaError(file, appliedVersions(db), migrationFiles(MIGRATIONS_DIR));
    if (newer) throw newer;
  } catch (err) {
    db.close();
    throw err;
  }
  incrementalVacuum(db);
  migrate(db, file, log);
  db.pragma(`busy_timeout = ${QUEUE_BUSY_TIMEOUT_MS}`);
  return db;
}

/** SQLite's auto_vacuum value for INCREMENTAL. */
const INCREMENTAL = 2;

/**
 * Pages freed by pruned history go back to the file system (`freeSpace`) instead of staying in the file
 * for ever. A new file takes the setting at once; an existing one needs one VACUUM (a copy of the file,
 * once). When another process holds the file, that waits for a later start.
 */
function incrementalVacuum(db: Database.Database): void {
  if (db.pragma('auto_vacuum', { simple: true }) === INCREMENTAL) return;
  db.pragma('auto_vacuum = INCREMENTAL');
  const hasTables = db.prepare(`SELECT 1 FROM sqlite_master LIMIT 1`).get() !== undefined;
  if (!hasTables) return;
  try {
    db.exec('VACUUM');
  } catch (err) {
    if (!isBusy(err)) throw err;
  }
}

/** Hands the file's free pages back to the file system (cheap when there are none). */
export function freeSpace(db: Database.Database): void {
  db.pragma('incremental_vacuum');
}

/** The migrations this file has had (none for a new file). */
function appliedVersions(db: Database.Database): number[] {
  const table = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).get();
  return table ? db.prepare<[], { version: number }>('SELECT version FROM schema_migrations').all().map((r) => r.version) : [];
}

function migrate(db: Database.Database, file: string, log?: Logger): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`);
  const applied = new Set(appliedVersions(db));
  for (const { version, name, sql } of migrationFiles(MIGRATIONS_DIR)) {
    if (applied.has(version)) continue;
    // Each step is logged as it runs: an upgrade says what it changed, and a slow one is not a silent hang.
    log?.info({ queue: file, migration: name, schema: version }, `queue: migrating ${file} to schema ${version} (${name})`);
    db.transaction(() => {
      db.exec(sql);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(version, Date.now());
    }).immediate();
  }
}
