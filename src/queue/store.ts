import { RelayLock } from './file-lock.ts';
import type Database from 'better-sqlite3';
import { isBusy } from '../db/sqlite.ts';
import type { NormalizedScanRequest, ScanItem } from '../core/scan.ts';
import { EnqueueBatch, runSync, type EnqueueIO } from './enqueue-batch.ts';
import { freeSpace, openQueueDb } from './db.ts';
import { QueueMeta } from './meta.ts';
import type { DeliveryRow, EnqueueResult, ScanRow, Timing } from './types.ts';
import { QueueView } from './view.ts';
import { toItem } from './rows.ts';
import { activateSteps, cancelSteps, completeSteps, failUnknownSteps, localReach, pruneSteps, retryNowSteps, retrySteps, routeUnroutedSteps, type LifecycleIO } from './lifecycle.ts';
import { FILE_WAIT_DUE_SQL, type FileWaitCheck, type FileWaitScan } from './file-wait.ts';
import { runSync as run } from './steps.ts';
import { checkExpected, type CompleteResult, type Completion, type MetaExpect, type OnceMarker, type OnceResult, type QueueBackend } from './backend.ts';
import type { NotifyEvent } from '../core/events.ts';
import { SqliteOutbox } from './outbox.ts';
import { sqliteLifecycleIO } from './sqlite-lifecycle.ts';
import type { Logger } from '../core/logger.ts';

export { QUEUE_BUSY_TIMEOUT_MS } from './db.ts';
export type { DeliveryRow, EnqueueResult, EnqueueStatus, HistoryFilter, QueueEntry, ScanRow, Timing } from './types.ts';

/** Prepared statements for `IN (?, ?, ...)` lists, one per list length, compiled once. */
function memoByCount<T>(make: (n: number) => T): (n: number) => T {
  const cache = new Map<number, T>();
  return (n) => {
    let hit = cache.get(n);
    if (!hit) cache.set(n, (hit = make(n)));
    return hit;
  };
}

/**
 * Durable queue state in one SQLite file (WAL). All methods are synchronous and atomic. Write transactions
 * are IMMEDIATE: if another connection writes the file too, a transaction that reads before it writes
 * holds the write lock from its start (waiting on the busy timeout) instead of failing to upgrade.
 */
export class QueueStore implements QueueBackend {
  readonly db: Database.Database;
  private readonly stmt;

  /** The dashboard's reads: counts, one scan, the open ones, the history. */
  readonly view: QueueView;
  /** Named values kept beside the queue (page tokens, imports). */
  readonly meta: QueueMeta;
  /** Events written with the delivery changes they tell of (notifications, the dashboard's stream). */
  readonly outbox: SqliteOutbox;

  readonly location: string;
  /** One process owns the file: nothing is shared with other relays. */
  readonly shared = undefined;

  private relayLock: RelayLock | undefined;

  constructor(file: string, log?: Logger) {
    this.location = file;
    this.db = openQueueDb(file, log);
    this.view = new QueueView(this.db);
    this.meta = new QueueMeta(this.db);
    this.outbox = new SqliteOutbox(this.db);
    const db = this.db;
    this.stmt = {
      pendingIn: memoByCount((n) =>
        db.prepare<Array<string | number | null>, ScanRow>(
          `SELECT * FROM scans WHERE status = 'pending' AND removal = ? AND targets IS ? AND action IS ? AND folder IN (${Array(n).fill('?').join(',')})`,
        ),
      ),
      pendingBelow: db.prepare<[number, string | null, string | null, string, string], ScanRow>(
        `SELECT * FROM scans WHERE status = 'pending' AND removal = ? AND targets IS ? AND action IS ? AND folder >= ? AND folder < ?`,
      ),
      insert: db.prepare(
        `INSERT INTO scans (folder, status, priority, source, event, title, ids, update_type, requests, upgrade, first_at, last_at, due_at, removal, hold_until, targets, action)
         VALUES (@folder, 'pending', @priority, @source, @event, @title, @ids, @updateType, @requests, @upgrade, @firstAt, @lastAt, @dueAt, @removal, @holdUntil, @targets, @action)`,
      ),
      merge: db.prepare(
        `UPDATE scans SET requests = @requests, priority = @priority, last_at = @lastAt, first_at = @firstAt, due_at = @dueAt,
           update_type = @updateType, upgrade = @upgrade, title = coalesce(@title, title), ids = coalesce(@ids, ids), event = @event, source = @source
         WHERE id = @id`,
      ),
      addFile: db.prepare(`INSERT OR IGNORE INTO scan_files (scan_id, path) VALUES (?, ?)`),
      addFiles: db.prepare(`INSERT OR IGNORE INTO scan_files (scan_id, path) SELECT ?, value FROM json_each(?)`),
      moveFiles: db.prepare(`INSERT OR IGNORE INTO scan_files (scan_id, path) SELECT @to, path FROM scan_files WHERE scan_id = @from ORDER BY path LIMIT @room`),
      // Before moveFiles' source rows go: what did not fit (all past `room`), and what the absorbed scan had not kept.
      carryMoreFiles: db.prepare(
        `UPDATE scans SET files_more = files_more +
           (SELECT f.files_more + max(0, (SELECT count(*) FROM scan_files WHERE scan_id = f.id) - @room) FROM scans f WHERE f.id = @from)
         WHERE id = @to`,
      ),
      addMoreFiles: db.prepare(`UPDATE scans SET files_more = files_more + ? WHERE id = ?`),
      sampleSize: db.prepare<[number], { n: number }>(`SELECT count(*) AS n FROM scan_files WHERE scan_id = ?`),
      addPart: db.prepare(
        `INSERT INTO scan_parts (scan_id, folder, priority, source, event, title, ids, update_type, upgrade, requests, first_at)
         VALUES (@scanId, @folder, @priority, @source, @event, @title, @ids, @updateType, @upgrade, @requests, @firstAt)
         ON CONFLICT (scan_id, folder) DO UPDATE SET requests = requests + excluded.requests, priority = min(priority, excluded.priority),
           upgrade = max(upgrade, excluded.upgrade), first_at = min(first_at, excluded.first_at), source = excluded.source, event = excluded.event,
           update_type = CASE WHEN update_type = excluded.update_type THEN update_type ELSE 'Modified' END,
           title = coalesce(excluded.title, title), ids = coalesce(excluded.ids, ids)`,
      ),
      moveParts: db.prepare(`UPDATE OR REPLACE scan_parts SET scan_id = ? WHERE scan_id = ?`),
      deleteScan: db.prepare(`DELETE FROM scans WHERE id = ?`),
      deleteFiles: db.prepare(`DELETE FROM scan_files WHERE scan_id = ?`),
      dueDeliveries: db.prepare<[string, number, number], DeliveryRow>(
        // INDEXED BY: walk the claim order and stop at LIMIT; the planner would otherwise sort every due row.
        `SELECT * FROM deliveries INDEXED BY deliveries_claim_order
         WHERE target = ? AND status = 'waiting' AND next_at <= ? ORDER BY priority, next_at, scan_id LIMIT ?`,
      ),
      nextDelivery: db.prepare<[string], { at: number | null }>(`SELECT min(next_at) AS at FROM deliveries WHERE target = ? AND status = 'waiting'`),
      nextDue: db.prepare<[], { at: number | null }>(`SELECT min(due_at) AS at FROM scans WHERE status = 'pending'`),
      markSending: db.prepare(`UPDATE deliveries SET status = 'sending', attempts = attempts + 1 WHERE scan_id = ? AND target = ?`),
      putBack: db.prepare(
        `UPDATE deliveries SET status = 'waiting', last_error = @error, attempts = attempts - 1 WHERE scan_id = @scanId AND target = @target AND status = 'sending'`,
      ),
      setDetail: db.prepare(`UPDATE deliveries SET detail = @detail WHERE scan_id = @scanId AND target = @target`),
      resetSending: db.prepare(`UPDATE deliveries SET status = 'waiting' WHERE status = 'sending'`),
      syncNormal: db.prepare(`PRAGMA synchronous = NORMAL`),
      syncFull: db.prepare(`PRAGMA synchronous = FULL`),
      nextWake: db.prepare<[], { at: number | null }>(
        `SELECT min(at) AS at FROM (
           SELECT min(due_at) AS at FROM scans WHERE status = 'pending'
           UNION ALL SELECT min(next_at) FROM deliveries WHERE status = 'waiting')`,
      ),
      scan: db.prepare<[number], ScanRow>(`SELECT * FROM scans WHERE id = ?`),
      files: db.prepare<[number], { path: string }>(`SELECT path FROM scan_files WHERE scan_id = ? ORDER BY path`),
      countOpen: db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM scans WHERE status IN ('pending', 'active')`),
    };
    const stmt = this.stmt;
    this.io = {
      pendingIn: (folders, removal, targets, action) => stmt.pendingIn(folders.length).all(removal, targets, action, ...folders),
      pendingBelow: (low, high, removal, targets, action) => stmt.pendingBelow.all(removal, targets, action, low, high),
      insert: (scan) => Number(stmt.insert.run(scan).lastInsertRowid),
      merge: (scan) => void stmt.merge.run(scan),
      // Thousands of files (a season pack) in one statement: SQLite walks the list, not thousands of calls.
      addFiles: (id, files) => (files.length === 1 ? stmt.addFile.run(id, files[0]) : stmt.addFiles.run(id, JSON.stringify(files))).changes,
      addMoreFiles: (id, count) => void stmt.addMoreFiles.run(count, id),
      sampleSize: (id) => stmt.sampleSize.get(id)!.n,
      absorb: (to, from, room) => {
        stmt.moveParts.run(to, from);
        stmt.carryMoreFiles.run({ to, from, room });
        const moved = stmt.moveFiles.run({ to, from, room }).changes;
        stmt.deleteFiles.run(from);
        stmt.deleteScan.run(from);
        return moved;
      },
      addPart: (part) => void stmt.addPart.run(part),
    };
    this.life = sqliteLifecycleIO(db, this.io, (events) => this.outbox.add(events));
  }

  /** The lifecycle rules' reads and writes (queue/lifecycle.ts), on this file. */
  private readonly life: LifecycleIO;

  /** The enqueue rules' reads and writes (EnqueueBatch), on this file. */
  private readonly io: EnqueueIO;

  /**
   * Adds requests in one transaction (one commit for a whole batch: group commit). A request for a
   * folder that is pending, or below a pending folder, merges into it; a new folder absorbs pending
   * folders below it. The check and the insert are in the same transaction, so a burst cannot race.
   * `meta` keys (null clears one) are written in the same transaction: a trigger that remembers its
   * position (the drive page token) saves it together with the scans it produced; `expect` makes that a
   * compare and set (MetaConflictError, nothing written).
   */
  enqueueMany(
    requests: readonly NormalizedScanRequest[],
    timing: Timing,
    now = Date.now(),
    meta: Readonly<Record<string, string | null>> = {},
    expect: MetaExpect = {},
  ): EnqueueResult[] {
    return this.db
      .transaction(() => {
        checkExpected(expect, (key) => this.meta.get(key) ?? null);
        const results = this.enqueueAll(requests, timing, now);
        for (const [key, value] of Object.entries(meta)) this.meta.set(key, value);
        return results;
      })
      .immediate();
  }

  enqueueOnce(requests: readonly NormalizedScanRequest[], timing: Timing, now: number, once: OnceMarker): OnceResult {
    return this.db
      .transaction(() => {
        const prior = this.meta.get(once.key);
        if (once.done(prior)) return { prior };
        const results = this.enqueueAll(requests, timing, now);
        this.meta.set(once.key, once.value(prior));
        return { prior, results };
      })
      .immediate();
  }

  private enqueueAll(requests: readonly NormalizedScanRequest[], timing: Timing, now: number): EnqueueResult[] {
    return runSync(new EnqueueBatch(timing, now).addAll(requests), this.io);
  }

  /**
   * Moves due pending scans to 'active' and creates one waiting delivery per target. At most `limit` per
   * call, so a large backlog falling due at once never stalls the event loop (the scheduler calls again).
   */
  activateDue(targets: readonly string[], now = Date.now(), limit = 1000, files?: FileWaitCheck): number {
    return this.db.transaction(() => run(activateSteps(localReach(targets), now, limit, files), this.life)).immediate();
  }

  dueWaitingForFiles(now = Date.now(), limit = 1000): FileWaitScan[] {
    const rows = this.db.prepare<[number, number], ScanRow>(FILE_WAIT_DUE_SQL('?', '?')).all(now, limit);
    return rows.map((r) => ({ id: r.id, lastAt: r.last_at, folder: r.folder, files: this.stmt.files.all(r.id).map((f) => f.path), targets: r.targets ?? null, since: r.files_wait_since ?? null }));
  }

  /**
   * Claims up to `limit` due deliveries of one target (marks them sending, counts the attempt): lowest
   * priority number first, then the one due longest. Without a target, every target that has deliveries.
   */
  claimDeliveries(limit: number, now = Date.now(), target?: string): Array<{ item: ScanItem; target: string }> {
    if (limit <= 0) return [];
    if (target === undefined) {
      const out: Array<{ item: ScanItem; target: string }> = [];
      for (const t of this.deliveryTargets()) out.push(...this.claimDeliveries(limit - out.length, now, t));
      return out;
    }
    return this.unsynced(() =>
      this.db.transaction(() => {
        const rows = this.stmt.dueDeliveries.all(target, now, limit);
        return rows.map((d) => {
          this.stmt.markSending.run(d.scan_id, d.target);
          return { item: this.toItem(this.stmt.scan.get(d.scan_id)!, d.attempts + 1, d.file_checks), target: d.target };
        });
      }).immediate(),
    );
  }

  /**
   * Runs a commit without its own fsync (synchronous=NORMAL; WAL keeps it across a crash of the process, and the
   * next durable commit's fsync covers it). Only for a claim: lost to a power cut, its deliveries are waiting
   * again, which is what recoverInFlight makes of every claim at start anyway: they are sent again.
   */
  private unsynced<T>(commit: () => T): T {
    if (this.db.inTransaction) return commit();
    this.stmt.syncNormal.run();
    try {
      return commit();
    } finally {
      this.stmt.syncFull.run();
    }
  }

  /**
   * Several deliveries' outcomes in one commit (one fsync: group commit, as the intake's), each as
   * completeDelivery would record it alone, in the order given.
   */
  completeDeliveries(completions: readonly Completion[], now = Date.now()): CompleteResult[] {
    return this.db.transaction(() => completions.map((c) => this.completeDelivery(c.scanId, c.target, c.result, now))).immediate();
  }

  completeDelivery(scanId: number, target: string, result: Completion['result'], now = Date.now()): CompleteResult {
    return this.db.transaction(() => run(completeSteps(scanId, target, result, now), this.life) as CompleteResult).immediate();
  }

  retryDelivery(scanId: number, target: string, error: string, nextAt: number, countsAsAttempt = true, fileChecks?: number, event?: NotifyEvent): void {
    const steps = retrySteps(scanId, target, { error, nextAt, refund: countsAsAttempt ? 0 : 1, ...(fileChecks !== undefined ? { fileChecks } : {}), ...(event ? { event } : {}) });
    this.db.transaction(() => run(steps, this.life)).immediate();
  }

  putBack(scanId: number, target: string, error: string): void {
    this.stmt.putBack.run({ scanId, target, error });
  }

  /** Replaces a finished delivery's detail (what its after-scan steps found). */
  setDeliveryDetail(scanId: number, target: string, detail: string, event?: NotifyEvent): void {
    this.db.transaction(() => {
      this.stmt.setDetail.run({ scanId, target, detail });
      if (event) this.outbox.add([event]);
    }).immediate();
  }

  /** After a crash, deliveries that were in flight are sent again (a repeated scan is harmless; a lost one is not). */
  recoverInFlight(): number {
    return this.stmt.resetSending.run().changes;
  }

  /** See QueueBackend.retryWaitingNow. */
  retryWaitingNow(targets: readonly string[], now = Date.now()): number {
    if (!targets.length) return 0;
    const list = targets.map(() => '?').join(',');
    return this.db
      .prepare<Array<string | number>>(`UPDATE deliveries SET next_at = ? WHERE status = 'waiting' AND last_error IS NOT NULL AND next_at > ? AND target IN (${list})`)
      .run(now, now, ...targets).changes;
  }

  /** See queue/lifecycle.ts failUnknownSteps. */
  failUnknownTargets(targets: readonly string[], now = Date.now()): number {
    return this.db.transaction(() => run(failUnknownSteps(localReach(targets), now), this.life)).immediate();
  }

  /** See QueueBackend.routeUnrouted. */
  routeUnrouted(routeOf: (scan: { folder: string; files: string[] }) => string[], every: readonly string[]): number {
    return this.db.transaction(() => run(routeUnroutedSteps(routeOf, every), this.life)).immediate();
  }

  /**
   * When the scheduler next has something to do, or undefined when nothing is queued. With `targets`, only
   * deliveries to those count (the others are busy and wake the scheduler themselves when they are free).
   */
  nextWakeAt(targets?: readonly string[]): number | undefined {
    if (!targets) return this.stmt.nextWake.get()?.at ?? undefined;
    const times = [this.stmt.nextDue.get()?.at, ...targets.map((t) => this.stmt.nextDelivery.get(t)?.at)].filter((t): t is number => typeof t === 'number');
    return times.length ? Math.min(...times) : undefined;
  }

  private deliveryTargets(): string[] {
    return this.db.prepare<[], { target: string }>(`SELECT DISTINCT target FROM deliveries WHERE status = 'waiting'`).all().map((r) => r.target);
  }

  /** Whether a write could start now (false while another process holds the queue file's write lock). */
  writable(): boolean {
    try {
      this.db.exec('BEGIN IMMEDIATE');
      this.db.exec('ROLLBACK');
      return true;
    } catch (err) {
      if (isBusy(err)) return false;
      throw err;
    }
  }

  countOpen(): number {
    return this.stmt.countOpen.get()!.n;
  }

  /** Keeps the newest `keep` finished scans, and gives the space they held back to the file system. */
  pruneHistory(keep: number): number {
    const pruned = this.db.transaction(() => run(pruneSteps(keep), this.life)).immediate();
    if (pruned) freeSpace(this.db);
    return pruned;
  }

  /** Removes an open scan (the dashboard's delete). Returns false when it is not open. */
  cancel(id: number): boolean {
    return this.db.transaction(() => run(cancelSteps(id), this.life)).immediate();
  }

  /** Makes an open scan due now, or puts a failed one back to be delivered again. */
  retryNow(id: number, now = Date.now()): boolean {
    return this.db.transaction(() => run(retryNowSteps(id, now), this.life)).immediate();
  }

  /** A relay's own queue: held until close(), so that move-queue refuses to run under it (queue/file-lock.ts). */
  holdRelayLock(): void {
    if (this.location !== ':memory:') this.relayLock ??= RelayLock.take(this.location);
  }

  close(): void {
    this.relayLock?.release();
    if (this.db.open) this.db.close();
  }

  private toItem(row: ScanRow, attempt: number, fileChecks: number): ScanItem {
    return toItem(row, this.stmt.files.all(row.id).map((f) => f.path), attempt, fileChecks);
  }
}
