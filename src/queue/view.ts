import type Database from 'better-sqlite3';
import { EVENT_COUNTS_SQL, eventListSql, processCounts, type EventQuery, type ProcessStatus } from '../peers/autopulse/event-list.ts';
import { toEntry } from './rows.ts';
import { COUNTS_SQL, countsOf, historySql, openListSql, SQLITE_DIALECT } from './reads.ts';
import { LIST_FILES, MAX_FILES_PER_SCAN, type DeliveryRow, type HistoryFilter, type QueueEntry, type ScanRow } from './types.ts';

export { LIST_FILES } from './types.ts';

/**
 * The queue as people look at it: counts, one scan, the open scans and the history, for the dashboard, the
 * JSON API and the metrics. Reads only; the queue's own work (enqueue, claim, deliver) is QueueStore's.
 */
export class QueueView {
  private readonly stmt;

  constructor(private readonly db: Database.Database) {
    this.stmt = {
      eventCounts: db.prepare<[], { process_status: string; n: number }>(EVENT_COUNTS_SQL),
      countByStatus: db.prepare<[], { status: string; n: number }>(COUNTS_SQL),
      scan: db.prepare<[number], ScanRow>(`SELECT * FROM scans WHERE id = ?`),
      open: db.prepare<[number, number], ScanRow>(openListSql(SQLITE_DIALECT)),
      files: db.prepare<[number, number], { path: string }>(`SELECT path FROM scan_files WHERE scan_id = ? ORDER BY path LIMIT ?`),
      sampleSize: db.prepare<[number], { n: number }>(`SELECT count(*) AS n FROM scan_files WHERE scan_id = ?`),
      deliveriesOf: db.prepare<[number], DeliveryRow>(`SELECT * FROM deliveries WHERE scan_id = ? ORDER BY target`),
    };
  }

  counts(): Record<string, number> {
    return countsOf(this.stmt.countByStatus.all());
  }

  /** One scan, with its whole sample of files (at most MAX_FILES_PER_SCAN). */
  get(id: number): QueueEntry | undefined {
    const row = this.stmt.scan.get(id);
    return row ? this.toEntry(row, MAX_FILES_PER_SCAN) : undefined;
  }

  /** A page of open scans, in the order they will go; each shows its first LIST_FILES files and its count. */
  listOpen(limit = 500, offset = 0): QueueEntry[] {
    return this.stmt.open.all(limit, offset).map((r) => this.toEntry(r, LIST_FILES));
  }

  listHistory(filter: HistoryFilter = {}): QueueEntry[] {
    const { sql, params } = historySql(filter, SQLITE_DIALECT);
    return this.db
      .prepare<Array<string | number>, ScanRow>(sql)
      .all(...params)
      .map((r) => this.toEntry(r, LIST_FILES));
  }

  listEvents(query: EventQuery): QueueEntry[] {
    const { sql, params } = eventListSql(query, SQLITE_DIALECT.ph, SQLITE_DIALECT.contains);
    return this.db
      .prepare<Array<string | number>, ScanRow>(sql)
      .all(...params)
      .map((r) => this.toEntry(r, LIST_FILES));
  }

  eventCounts(): Record<ProcessStatus, number> {
    return processCounts(this.stmt.eventCounts.all());
  }

  private toEntry(row: ScanRow, files: number): QueueEntry {
    return toEntry(
      row,
      this.stmt.files.all(row.id, files).map((f) => f.path),
      this.stmt.sampleSize.get(row.id)!.n,
      this.stmt.deliveriesOf.all(row.id),
    );
  }
}
