import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Opens (creating its folder) one of scanrelay's own SQLite files in WAL mode with a busy timeout.
 * `durable` adds synchronous=FULL: a commit survives power loss, not only a crash. The busy timeout
 * blocks the event loop while it waits, so callers on the request path keep it short (`busyTimeoutMs`)
 * and retry without blocking instead. `private` makes the file and its -wal and -shm files 0600.
 */
export function openSqlite(file: string, opts: { durable?: boolean; busyTimeoutMs?: number; private?: boolean } = {}): Database.Database {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  if (opts.private && file !== ':memory:') closeSync(openSync(file, 'a', 0o600));
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  if (opts.durable) db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
  if (opts.private && file !== ':memory:') {
    // The -wal and -shm files exist once WAL mode is on; SQLite creates them with the main file's mode
    // bits, but an older file (or umask) may have left them readable.
    for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
  }
  return db;
}

/** Another connection (another process) holds the lock SQLite needs: try again later, nothing is lost. */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}
