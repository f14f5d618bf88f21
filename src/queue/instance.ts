import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { isBusy } from '../db/sqlite.ts';

/** Beside the queue file: this relay's own id, kept across restarts. */
export const instanceFile = (queuefile: string) => `${queuefile}-instance`;

/**
 * This relay's install, told apart from every other relay of a shared queue: an id made once and kept in its own
 * folder, and a lock on that file held while the process runs (the operating system drops it with the process,
 * kill -9 included). A relay restarted from the same folder has the same id, and while it holds the lock no other
 * process of that id runs: a turn row of that id with another process in it was left by a dead process of this
 * relay. Its name (SERVER_RELAY_ID, or host:port) cannot say that, as two hosts may start the same config.
 */
export class RelayInstance {
  private constructor(
    private readonly db: Database.Database,
    readonly id: string,
  ) {}

  /** Takes the lock and reads (or makes) the id; undefined when another process of this folder holds it. */
  static take(queuefile: string): RelayInstance | undefined {
    const file = instanceFile(queuefile);
    closeSync(openSync(file, 'a', 0o600));
    const db = new Database(file, { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE');
      db.exec('CREATE TABLE IF NOT EXISTS instance (id TEXT NOT NULL)');
      let id = (db.prepare('SELECT id FROM instance LIMIT 1').get() as { id: string } | undefined)?.id;
      if (!id) db.prepare('INSERT INTO instance (id) VALUES (?)').run((id = randomUUID()));
      db.exec('COMMIT');
      // Exclusive locking mode keeps the lock after a commit; a transaction left open keeps it in any case.
      db.exec('BEGIN EXCLUSIVE');
      return new RelayInstance(db, id);
    } catch (err) {
      db.close();
      if (isBusy(err)) return undefined;
      throw err;
    }
  }

  release(): void {
    if (this.db.open) this.db.close();
  }
}
