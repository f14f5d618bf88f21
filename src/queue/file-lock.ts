import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import { isBusy } from '../db/sqlite.ts';

/** Beside the queue file: the file a running relay keeps locked while it uses the queue file. */
export const relayLockFile = (queuefile: string) => `${queuefile}-relay`;

/**
 * A running relay's claim on its queue file, for the commands that must not run under it (move-queue).
 * The queue file itself cannot carry it: its write lock is held only during a commit, and a long read would
 * stop its WAL from being checkpointed. So the relay holds an exclusive SQLite lock on a small file beside it
 * for as long as it runs; the operating system drops it with the process (kill -9 included).
 */
export class RelayLock {
  private constructor(private readonly db: Database.Database) {}

  /** Takes the lock; undefined when another process holds it (a second relay on the file keeps running). */
  static take(queuefile: string): RelayLock | undefined {
    // Private like the queue file beside it (it holds nothing, but a directory listing stays alike).
    closeSync(openSync(relayLockFile(queuefile), 'a', 0o600));
    const db = new Database(relayLockFile(queuefile), { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE');
      return new RelayLock(db);
    } catch (err) {
      db.close();
      if (isBusy(err)) return undefined;
      throw err;
    }
  }

  /** Whether a relay holds the queue file's lock now. */
  static held(queuefile: string): boolean {
    const lock = RelayLock.take(queuefile);
    lock?.release();
    return !lock;
  }

  release(): void {
    if (this.db.open) this.db.close();
  }
}
