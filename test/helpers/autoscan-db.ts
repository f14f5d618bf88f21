import Database from 'better-sqlite3';

/**
 * An autoscan.db as autoscan leaves it: the `scan` table of its processor/migrations/1_init.sql (folder,
 * priority, time), times as Go's SQLite driver writes a time.Time (text, date and time first).
 */
export function autoscanDb(file: string, rows: Array<[string, number, string]>): void {
  const db = new Database(file);
  db.exec(`CREATE TABLE IF NOT EXISTS scan ("folder" TEXT NOT NULL, "priority" INTEGER NOT NULL, "time" DATETIME NOT NULL, PRIMARY KEY(folder))`);
  const insert = db.prepare('INSERT INTO scan (folder, priority, time) VALUES (?, ?, ?)');
  for (const r of rows) insert.run(...r);
  db.close();
}
