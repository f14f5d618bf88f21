import type Database from 'better-sqlite3';

/**
 * Small named values kept in the queue file (the `meta` table): the drive monitor's page tokens, what was
 * imported from plex_autoscan. In the queue's file so that a trigger can save its position in the same
 * transaction as the scans it produced (QueueStore.enqueueMany with `meta`).
 */
export class QueueMeta {
  private readonly getStmt;
  private readonly setStmt;
  private readonly allStmt;
  private readonly prefixStmt;

  constructor(db: Database.Database) {
    this.getStmt = db.prepare<[string], { value: string | null }>(`SELECT value FROM meta WHERE key = ?`);
    this.allStmt = db.prepare<[], { key: string; value: string }>(`SELECT key, value FROM meta WHERE value IS NOT NULL ORDER BY key`);
    this.prefixStmt = db.prepare<[number, string], { key: string; value: string }>(
      `SELECT key, value FROM meta WHERE substr(key, 1, ?) = ? AND value IS NOT NULL ORDER BY key`,
    );
    this.setStmt = db.prepare<[string, string | null]>(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
  }

  /** Every key with a value. */
  entries(): Array<[string, string]> {
    return this.allStmt.all().map((r) => [r.key, r.value]);
  }

  list(prefix: string): Array<[string, string]> {
    return this.prefixStmt.all(prefix.length, prefix).map((r) => [r.key, r.value]);
  }

  get(key: string): string | undefined {
    return this.getStmt.get(key)?.value ?? undefined;
  }

  /** Sets a value; null clears it. */
  set(key: string, value: string | null): void {
    this.setStmt.run(key, value);
  }
}
