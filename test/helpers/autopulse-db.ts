import Database from 'better-sqlite3';

/** autopulse's scan_events as its SQLite migrations leave it (crates/database/migrations/sqlite: create, add_timer). */
export interface AutopulseDbRow {
  id: string;
  file_path: string;
  /** Default sonarr. */
  event_source?: string;
  /** Default pending (the column's own default). */
  process_status?: string;
  /** Default not_found (the column's own default); a *arr row autopulse found at once says found (triggers.rs:80-96). */
  found_status?: string;
  targets_hit?: string;
  can_process?: string;
}

export function autopulseDb(file: string, rows: readonly AutopulseDbRow[]): void {
  const db = new Database(file);
  db.exec(`CREATE TABLE scan_events (
    id TEXT PRIMARY KEY NOT NULL, event_source TEXT NOT NULL, event_timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL,
    file_path TEXT NOT NULL, file_hash TEXT, process_status TEXT NOT NULL DEFAULT 'pending', found_status TEXT NOT NULL DEFAULT 'not_found',
    failed_times INTEGER DEFAULT 0 NOT NULL, next_retry_at TIMESTAMP, targets_hit TEXT DEFAULT '' NOT NULL, found_at TIMESTAMP, processed_at TIMESTAMP,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL,
    can_process TIMESTAMP NOT NULL DEFAULT "2024-10-14T12:00:00.000")`);
  const insert = db.prepare(
    'INSERT INTO scan_events (id, event_source, file_path, process_status, found_status, targets_hit, can_process) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  for (const r of rows) {
    insert.run(r.id, r.event_source ?? 'sonarr', r.file_path, r.process_status ?? 'pending', r.found_status ?? 'not_found', r.targets_hit ?? '', r.can_process ?? '2024-10-14 12:00:00.000000');
  }
  db.close();
}
