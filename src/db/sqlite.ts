import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Opens (creating its folder) one of scanrelay's own SQLite files in WAL mode with a busy timeout.
 * `durable` adds synchronous=FULL: a commit survives power loss, not only a crash.
 */
export function openSqlite(file: string, opts: { durable?: boolean } = {}): Database.Database {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  if (opts.durable) db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  return db;
}
