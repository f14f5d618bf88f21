import type Database from 'better-sqlite3';
import type { NotifyEvent } from '../core/events.ts';
import { EnqueueBatch, runSync, type EnqueueIO } from './enqueue-batch.ts';
import { DUE_COLUMNS } from './file-wait.ts';
import type { DueScan, LifecycleIO } from './lifecycle.ts';
import { partRequests } from './rows.ts';
import type { PartRow, ScanRow } from './types.ts';

/**
 * The lifecycle rules' reads and writes (queue/lifecycle.ts) in SQLite's SQL, on the queue file, each call inside the
 * store's transaction. `enqueue`: the store's EnqueueIO, through which a failed scan's parts are queued again;
 * `addEvents`: its outbox's writer.
 */
export function sqliteLifecycleIO(db: Database.Database, enqueue: EnqueueIO, addEvents: (events: NotifyEvent[]) => void): LifecycleIO {
  const stmt = {
    partsOf: db.prepare<[number], PartRow>(`SELECT * FROM scan_parts WHERE scan_id = ? ORDER BY folder`),
    deleteParts: db.prepare(`DELETE FROM scan_parts WHERE scan_id = ?`),
    restoredCounts: db.prepare(`UPDATE scans SET upgrade = max(upgrade, ?), requests = requests + ? - 1, first_at = min(first_at, ?) WHERE id = ?`),
    deleteScan: db.prepare(`DELETE FROM scans WHERE id = ?`),
    deleteFiles: db.prepare(`DELETE FROM scan_files WHERE scan_id = ?`),
    deleteDeliveries: db.prepare(`DELETE FROM deliveries WHERE scan_id = ?`),
    // Scans of new files first: a removal scan due in the same pass waits for them (see activateDue).
    duePending: db.prepare<[number, number], DueScan>(
      `SELECT ${DUE_COLUMNS} FROM scans WHERE status = 'pending' AND due_at <= ? ORDER BY removal, priority, due_at, id LIMIT ?`,
    ),
    waitForFiles: db.prepare(`UPDATE scans SET due_at = ?, files_wait_since = coalesce(files_wait_since, ?) WHERE id = ?`),
    openFilesScansAt: db.prepare<[string, string, string], { n: number; pendingDue: number | null }>(
      `SELECT count(*) AS n, max(CASE WHEN status = 'pending' THEN due_at END) AS pendingDue FROM scans
       WHERE status IN ('pending', 'active') AND removal = 0 AND (folder = ? OR (folder >= ? AND folder < ?))`,
    ),
    activate: db.prepare(`UPDATE scans SET status = 'active' WHERE id = ?`),
    addDelivery: db.prepare(
      `INSERT OR IGNORE INTO deliveries (scan_id, target, status, attempts, next_at, priority)
       SELECT ?, ?, 'waiting', 0, ?, priority FROM scans WHERE id = ?`,
    ),
    addFailedDelivery: db.prepare(
      `INSERT OR IGNORE INTO deliveries (scan_id, target, status, attempts, next_at, priority, last_error, finished_at)
       SELECT ?, ?, 'failed', 0, ?, priority, ?, ? FROM scans WHERE id = ?`,
    ),
    setDue: db.prepare(`UPDATE scans SET due_at = ?, hold_until = CASE WHEN ? THEN NULL ELSE hold_until END WHERE id = ?`),
    reopenScan: db.prepare(`UPDATE scans SET status = 'active', finished_at = NULL WHERE id = ?`),
    reopenDeliveries: db.prepare(`UPDATE deliveries SET status = 'waiting', next_at = ?, finished_at = NULL WHERE scan_id = ? AND status IN ('waiting', 'failed')`),
    openCount: db.prepare<[number], { n: number }>(`SELECT count(*) AS n FROM deliveries WHERE scan_id = ? AND status IN ('waiting', 'sending')`),
    sending: db.prepare<[number], { n: number }>(`SELECT count(*) AS n FROM deliveries WHERE scan_id = ? AND status = 'sending'`),
    openDeliveryRows: db.prepare<[], { scan_id: number; target: string }>(`SELECT scan_id, target FROM deliveries WHERE status IN ('waiting', 'sending') ORDER BY scan_id, target`),
    orphans: db.prepare<[], Pick<ScanRow, 'id' | 'targets'>>(
      `SELECT id, targets FROM scans s WHERE status = 'active' AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.scan_id = s.id) ORDER BY id`,
    ),
    finishDelivery: db.prepare(
      `UPDATE deliveries SET status = @status, last_error = @error, detail = @detail, finished_at = @now WHERE scan_id = @scanId AND target = @target`,
    ),
    retryDelivery: db.prepare(
      `UPDATE deliveries SET status = 'waiting', last_error = @error, next_at = @nextAt, attempts = attempts - @refund,
         file_checks = coalesce(@fileChecks, file_checks)
       WHERE scan_id = @scanId AND target = @target`,
    ),
    openDeliveries: db.prepare<[number], { open: number; failed: number }>(
      `SELECT sum(status IN ('waiting', 'sending')) AS open, sum(status = 'failed') AS failed FROM deliveries WHERE scan_id = ?`,
    ),
    finishScan: db.prepare(`UPDATE scans SET status = ?, finished_at = ? WHERE id = ?`),
    scan: db.prepare<[number], ScanRow>(`SELECT * FROM scans WHERE id = ?`),
    files: db.prepare<[number], { path: string }>(`SELECT path FROM scan_files WHERE scan_id = ? ORDER BY path`),
    pruneHistory: db.prepare<[number], { id: number }>(
      `SELECT id FROM scans WHERE status IN ('done', 'failed') ORDER BY id DESC LIMIT -1 OFFSET ?`,
    ),
  };

  /** Queues the parts of a failed scan again, due now, with the files of theirs it held. Returns their folders. */
  const requeueParts = (scanId: number, now: number): string[] => {
    const parts = stmt.partsOf.all(scanId);
    if (parts.length === 0) return [];
    const scan = stmt.scan.get(scanId);
    const removal = scan?.removal === 1;
    // A scan that kept only a sample of its files cannot say which belong to a part: each part goes as its folder.
    const files = scan?.files_more ? [] : stmt.files.all(scanId).map((f) => f.path);
    const results = runSync(new EnqueueBatch({ delayMs: 0, maxMs: 0 }, now).addAll(partRequests(parts, files, removal, scan?.targets ?? null, scan?.action ?? null)), enqueue);
    parts.forEach((p, i) => stmt.restoredCounts.run(p.upgrade, p.requests, p.first_at, results[i]!.id));
    return parts.map((p) => p.folder);
  };

  return {
    scan: (id) => stmt.scan.get(id),
    duePending: (now, limit) => stmt.duePending.all(now, limit),
    openFilesScansAt: (folder, low, high) => stmt.openFilesScansAt.get(folder, low, high)!,
    setDue: (id, at, clearHold) => void stmt.setDue.run(at, clearHold ? 1 : 0, id),
    waitForFiles: (id, at, since) => void stmt.waitForFiles.run(at, since, id),
    activate: (scans, now) => {
      for (const { id, deliveries } of scans) {
        stmt.activate.run(id);
        for (const d of deliveries) {
          if (d.error === undefined) stmt.addDelivery.run(id, d.target, d.at, id);
          else stmt.addFailedDelivery.run(id, d.target, d.at, d.error, now, id);
        }
      }
    },
    finishDelivery: (scanId, target, o, now) => {
      stmt.finishDelivery.run({ scanId, target, status: o.status, error: o.error ?? null, detail: o.detail ?? null, now });
      const { open, failed } = stmt.openDeliveries.get(scanId)!;
      if (!open && !failed) {
        stmt.finishScan.run('done', now, scanId);
        stmt.deleteParts.run(scanId);
      }
      return { open: open ?? 0, failed: failed ?? 0 };
    },
    retryDelivery: (scanId, target, r) => void stmt.retryDelivery.run({ scanId, target, error: r.error, nextAt: r.nextAt, refund: r.refund, fileChecks: r.fileChecks ?? null }),
    openDeliveries: (scanId) => stmt.openCount.get(scanId)!.n,
    endScan: (scanId, status, now) => {
      stmt.finishScan.run(status, now, scanId);
      stmt.deleteParts.run(scanId);
    },
    requeueParts,
    addEvents: (events) => addEvents([...events]),
    openDeliveryRows: () => stmt.openDeliveryRows.all(),
    orphans: () => stmt.orphans.all(),
    sending: (scanId) => stmt.sending.get(scanId)!.n > 0,
    deleteScans: (ids) => {
      for (const id of ids) {
        stmt.deleteParts.run(id);
        stmt.deleteFiles.run(id);
        stmt.deleteDeliveries.run(id);
        stmt.deleteScan.run(id);
      }
    },
    reopen: (scanId, now) => {
      stmt.reopenScan.run(scanId);
      stmt.reopenDeliveries.run(now, scanId);
    },
    finishedBeyond: (keep) => stmt.pruneHistory.all(keep).map((r) => r.id),
    unrouted: () =>
      db
        .prepare<[], { id: number; folder: string }>(`SELECT id, folder FROM scans WHERE targets IS NULL AND status IN ('pending', 'active') ORDER BY id`)
        .all()
        .map((r) => ({ ...r, files: stmt.files.all(r.id).map((f) => f.path) })),
    setRoute: (id, key) => void db.prepare(`UPDATE scans SET targets = ? WHERE id = ?`).run(key, id),
  };
}
