import type Database from 'better-sqlite3';
import type { DeliveryRow, HistoryFilter, QueueEntry, ScanRow } from './types.ts';

/**
 * The queue as people look at it: counts, one scan, the open scans and the history, for the dashboard, the
 * JSON API and the metrics. Reads only; the queue's own work (enqueue, claim, deliver) is QueueStore's.
 */
export class QueueView {
  private readonly stmt;

  constructor(private readonly db: Database.Database) {
    this.stmt = {
      countByStatus: db.prepare<[], { status: string; n: number }>(`SELECT status, count(*) AS n FROM scans GROUP BY status`),
      scan: db.prepare<[number], ScanRow>(`SELECT * FROM scans WHERE id = ?`),
      open: db.prepare<[number, number], ScanRow>(
        `SELECT * FROM scans WHERE status IN ('pending', 'active') ORDER BY status = 'active' DESC, priority, due_at, id LIMIT ? OFFSET ?`,
      ),
      files: db.prepare<[number], { path: string }>(`SELECT path FROM scan_files WHERE scan_id = ? ORDER BY path`),
      deliveriesOf: db.prepare<[number], DeliveryRow>(`SELECT * FROM deliveries WHERE scan_id = ? ORDER BY target`),
    };
  }

  counts(): Record<string, number> {
    const out: Record<string, number> = { pending: 0, active: 0, done: 0, failed: 0 };
    for (const r of this.stmt.countByStatus.all()) out[r.status] = r.n;
    return out;
  }

  get(id: number): QueueEntry | undefined {
    const row = this.stmt.scan.get(id);
    return row ? this.toEntry(row) : undefined;
  }

  listOpen(limit = 500, offset = 0): QueueEntry[] {
    return this.stmt.open.all(limit, offset).map((r) => this.toEntry(r));
  }

  listHistory(filter: HistoryFilter = {}): QueueEntry[] {
    const where = [`status IN ('done', 'failed')`];
    const params: Array<string | number> = [];
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.source) {
      where.push('source = ?');
      params.push(filter.source);
    }
    if (filter.text) {
      where.push(`instr(lower(folder), lower(?)) > 0`);
      params.push(filter.text);
    }
    params.push(Math.min(Math.max(filter.limit ?? 100, 1), 1000));
    return this.db
      .prepare<Array<string | number>, ScanRow>(`SELECT * FROM scans WHERE ${where.join(' AND ')} ORDER BY finished_at DESC, id DESC LIMIT ?`)
      .all(...params)
      .map((r) => this.toEntry(r));
  }

  private toEntry(row: ScanRow): QueueEntry {
    return {
      id: row.id,
      folder: row.folder,
      status: row.status,
      priority: row.priority,
      source: row.source,
      event: row.event,
      title: row.title,
      ids: row.ids ? JSON.parse(row.ids) : {},
      updateType: row.update_type,
      requests: row.requests,
      upgrade: row.upgrade === 1,
      removal: row.removal === 1,
      firstAt: row.first_at,
      lastAt: row.last_at,
      dueAt: row.due_at,
      finishedAt: row.finished_at,
      files: this.stmt.files.all(row.id).map((f) => f.path),
      deliveries: this.stmt.deliveriesOf.all(row.id),
    };
  }
}
