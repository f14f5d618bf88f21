import type pg from 'pg';
import type { DueScan, LifecycleIO } from '../lifecycle.ts';
import { DUE_COLUMNS } from '../file-wait.ts';
import { partRequests } from '../rows.ts';
import type { PartRow, ScanRow } from '../types.ts';
import { enqueueInTx } from './enqueue.ts';
import { addEvents } from './outbox.ts';
import { filesOf } from './view.ts';
import { WAKE_CHANNEL, wakePayload } from './session.ts';

type Db = Pick<pg.ClientBase, 'query'>;

/**
 * The lifecycle rules' reads and writes (queue/lifecycle.ts) in PostgreSQL's SQL, on one transaction's connection
 * (`db`). Every read runs on that connection too: a second pooled one, taken while the transaction holds the queue's
 * lock, could wait for ever on a pool whose other connections all wait for that lock.
 */
export function pgLifecycleIO(db: Db): LifecycleIO {
  return {
    scan: async (id) => (await db.query<ScanRow>(`SELECT * FROM scans WHERE id = $1`, [id])).rows[0],
    duePending: async (now, limit) =>
      (
        await db.query<DueScan>(
          `SELECT ${DUE_COLUMNS} FROM scans WHERE status = 'pending' AND due_at <= $1 ORDER BY removal, priority, due_at, id LIMIT $2`,
          [now, limit],
        )
      ).rows,
    openFilesScansAt: async (folder, low, high) =>
      (
        await db.query<{ n: number; pendingDue: number | null }>(
          `SELECT count(*) AS n, max(CASE WHEN status = 'pending' THEN due_at END) AS "pendingDue" FROM scans
           WHERE status IN ('pending', 'active') AND removal = 0 AND (folder = $1 OR (folder >= $2 AND folder < $3))`,
          [folder, low, high],
        )
      ).rows[0]!,
    waitForFiles: async (id, at, since) =>
      void (await db.query(`UPDATE scans SET due_at = $1, files_wait_since = coalesce(files_wait_since, $2) WHERE id = $3`, [at, since, id])),
    setDue: async (id, at, clearHold) =>
      void (await db.query(`UPDATE scans SET due_at = $1, hold_until = CASE WHEN $2 THEN NULL ELSE hold_until END WHERE id = $3`, [at, clearHold, id])),
    activate: async (scans, now) => {
      await db.query(`UPDATE scans SET status = 'active' WHERE id = ANY($1::bigint[])`, [scans.map((r) => r.id)]);
      const rows = scans.flatMap((r) => r.deliveries.map((d) => ({ id: r.id, ...d })));
      if (!rows.length) return;
      await db.query(
        `INSERT INTO deliveries (scan_id, target, status, attempts, next_at, priority, last_error, finished_at)
         SELECT s.id, r.t, CASE WHEN r.e IS NULL THEN 'waiting' ELSE 'failed' END, 0, r.at, s.priority, r.e, CASE WHEN r.e IS NULL THEN NULL ELSE $5::bigint END
         FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[]) AS r(id, at, t, e)
         JOIN scans s ON s.id = r.id
         ON CONFLICT DO NOTHING`,
        [rows.map((r) => r.id), rows.map((r) => r.at), rows.map((r) => r.target), rows.map((r) => r.error ?? null), now],
      );
    },
    finishDelivery: async (scanId, target, o, now) => {
      // One statement: this delivery's outcome, and the scan's when it is done: none of its deliveries is open
      // and none failed (the other deliveries are read as they were; this one counts with its new status).
      const { rows } = await db.query<{ open: number; failed: number }>({
        name: 'scanrelay.complete',
        text: `WITH d AS (
           UPDATE deliveries SET status = $3, last_error = $4, detail = $5, finished_at = $6, lease_until = NULL WHERE scan_id = $1 AND target = $2 RETURNING status
         ), o AS (
           SELECT count(*) FILTER (WHERE status IN ('waiting', 'sending')) AS open,
                  count(*) FILTER (WHERE status = 'failed') + (SELECT count(*) FROM d WHERE status = 'failed') AS failed
           FROM deliveries WHERE scan_id = $1 AND target <> $2
         ), s AS (
           UPDATE scans SET status = 'done', finished_at = $6 FROM o WHERE id = $1 AND o.open = 0 AND o.failed = 0 RETURNING scans.id
         ), p AS (
           DELETE FROM scan_parts WHERE scan_id = $1 AND EXISTS (SELECT 1 FROM s)
         )
         SELECT open, failed FROM o`,
        values: [scanId, target, o.status, o.error ?? null, o.detail ?? null, now],
      });
      return rows[0]!;
    },
    retryDelivery: async (scanId, target, r) =>
      void (await db.query(
        `UPDATE deliveries SET status = 'waiting', last_error = $3, next_at = $4, attempts = attempts - $5, file_checks = coalesce($6, file_checks), lease_until = NULL
         WHERE scan_id = $1 AND target = $2`,
        [scanId, target, r.error, r.nextAt, r.refund, r.fileChecks ?? null],
      )),
    openDeliveries: async (scanId) =>
      (await db.query<{ n: number }>(`SELECT count(*) AS n FROM deliveries WHERE scan_id = $1 AND status IN ('waiting', 'sending')`, [scanId])).rows[0]!.n,
    endScan: async (scanId, status, now) =>
      void (await db.query({
        name: 'scanrelay.end-scan',
        text: `WITH s AS (UPDATE scans SET status = $2, finished_at = $3 WHERE id = $1 RETURNING id) DELETE FROM scan_parts WHERE scan_id = $1`,
        values: [scanId, status, now],
      })),
    requeueParts: (scanId, now) => requeueParts(db, scanId, now),
    addEvents: (events) => addEvents(db, [...events]),
    openDeliveryRows: async () =>
      (await db.query<{ scan_id: number; target: string }>(`SELECT scan_id, target FROM deliveries WHERE status IN ('waiting', 'sending') ORDER BY scan_id, target`)).rows,
    orphans: async () =>
      (
        await db.query<Pick<ScanRow, 'id' | 'targets'>>(
          `SELECT id, targets FROM scans s WHERE status = 'active' AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.scan_id = s.id) ORDER BY id`,
        )
      ).rows,
    sending: async (scanId) => ((await db.query(`SELECT 1 FROM deliveries WHERE scan_id = $1 AND status = 'sending'`, [scanId])).rowCount ?? 0) > 0,
    deleteScans: (ids) => deleteScans(db, [...ids]),
    reopen: async (scanId, now) => {
      await db.query(`UPDATE scans SET status = 'active', finished_at = NULL WHERE id = $1`, [scanId]);
      await db.query(`UPDATE deliveries SET status = 'waiting', next_at = $1, finished_at = NULL WHERE scan_id = $2 AND status IN ('waiting', 'failed')`, [now, scanId]);
    },
    unrouted: async () => {
      const { rows } = await db.query<{ id: number; folder: string }>(`SELECT id, folder FROM scans WHERE targets IS NULL AND status IN ('pending', 'active') ORDER BY id`);
      const files = await filesOf((sql, params) => db.query(sql, params), rows.map((r) => Number(r.id)));
      return rows.map((r) => ({ id: Number(r.id), folder: r.folder, files: files.get(Number(r.id))?.files ?? [] }));
    },
    setRoute: async (id, key) => void (await db.query(`UPDATE scans SET targets = $1 WHERE id = $2`, [key, id])),
    finishedBeyond: async (keep) =>
      (await db.query<{ id: number }>(`SELECT id FROM scans WHERE status IN ('done', 'failed') ORDER BY id DESC OFFSET $1`, [keep])).rows.map((r) => Number(r.id)),
  };
}

/** Queues the parts of a failed scan again, due now, with the files of theirs it held (as the SQLite store). */
async function requeueParts(db: Db, scanId: number, now: number): Promise<string[]> {
  const parts = (await db.query<PartRow>(`SELECT * FROM scan_parts WHERE scan_id = $1 ORDER BY folder`, [scanId])).rows;
  if (parts.length === 0) return [];
  const scan = (await db.query<{ removal: number; files_more: number; targets: string | null; action: string | null }>(`SELECT removal, files_more, targets, action FROM scans WHERE id = $1`, [scanId])).rows[0];
  const removal = scan?.removal === 1;
  // A scan that kept only a sample of its files cannot say which belong to a part: each part goes as its folder.
  const files = scan?.files_more ? [] : (await db.query<{ path: string }>(`SELECT path FROM scan_files WHERE scan_id = $1`, [scanId])).rows.map((f) => f.path);
  const requests = partRequests(parts, files, removal, scan?.targets ?? null, scan?.action ?? null);
  const results = await enqueueInTx(db, requests, { delayMs: 0, maxMs: 0 }, now);
  for (const [i, p] of parts.entries()) {
    await db.query(`UPDATE scans SET upgrade = greatest(upgrade, $1), requests = requests + $2 - 1, first_at = least(first_at, $3) WHERE id = $4`, [
      p.upgrade,
      p.requests,
      p.first_at,
      results[i]!.id,
    ]);
  }
  // Only what was queued again is news for the other relays: a finished delivery leaves them nothing to do.
  await db.query(`SELECT pg_notify($1, $2)`, [WAKE_CHANNEL, wakePayload(now)]);
  return parts.map((p) => p.folder);
}

async function deleteScans(db: Db, ids: number[]): Promise<void> {
  for (const table of ['scan_parts', 'scan_files', 'deliveries']) await db.query(`DELETE FROM ${table} WHERE scan_id = ANY($1::bigint[])`, [ids]);
  await db.query(`DELETE FROM scans WHERE id = ANY($1::bigint[])`, [ids]);
}
