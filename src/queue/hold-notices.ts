import type { HoldKind, NotifyEvent } from '../core/events.ts';
import type { Logger } from '../core/logger.ts';
import type { FullDisk } from '../paths/disk-space.ts';
import type { QueueBackend } from './backend.ts';
import { HoldTracker } from './events.ts';
import { RetryLog, type RetrySummary } from './retry-log.ts';

const MAX_TIMER_MS = 2 ** 31 - 1;
/** The mount guard's hold, among the per-target ones. */
const MOUNT_HOLD = '\0mount guard';
/** A full disk's hold: this and its folder. */
const DISK_HOLD = '\0disk ';

/**
 * The scheduler's hold notices: a target that does not answer, the mount guard and full disks are told to the
 * outbox as `waiting` once their hold is due and `recovered` once it ends (HoldTracker's bookkeeping, written here),
 * and a target that does not answer is logged once a minute (RetryLog), not once an attempt.
 */
export class HoldNotices {
  private readonly holds: HoldTracker;
  /** Lines about targets that do not answer: one per target per minute, with counts. */
  private readonly retryLog = new RetryLog();
  /** A target's `waiting`, told when its hold is due even when no attempt lands then (one timer per held target). */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Full disks told as `waiting`, by folder: `recovered` once they have room. */
  private readonly disksHeld = new Set<string>();

  constructor(
    private readonly store: Pick<QueueBackend, 'outbox' | 'retryWaitingNow'>,
    private readonly log: Logger,
    private readonly clock: () => number,
    /** Whether the scheduler runs: a stopped one starts no timer. */
    private readonly running: () => boolean,
    waitingAfterMs: number,
  ) {
    this.holds = new HoldTracker(waitingAfterMs);
  }

  /** How long a target goes unanswered before its `waiting` is told. */
  get afterMs(): number {
    return this.holds.afterMs;
  }

  /** The mount guard holds every delivery (`held`), or no longer does. */
  mount(held: boolean, now: number): void {
    if (held) this.note(this.holds.held(MOUNT_HOLD, 'a mount is down (SERVER_ANCHOR_FILES): scans wait until it is back', now, undefined, 0), 'mount-guard');
    else this.note(this.holds.clear(MOUNT_HOLD, now), 'mount-guard');
  }

  /** Full disks begin (`waiting`, with the folder and bytes free) and end (`recovered`) once each, for every target. */
  disks(disks: readonly FullDisk[], now: number): void {
    const full = new Set(disks.map((d) => d.path));
    for (const d of disks) {
      this.disksHeld.add(d.path);
      const event = this.holds.held(DISK_HOLD + d.path, d.reason, now, undefined, 0);
      if (event) this.note({ ...event, path: d.path, freeBytes: d.freeBytes }, 'disk-full');
    }
    for (const path of this.disksHeld) {
      if (full.has(path)) continue;
      this.disksHeld.delete(path);
      const event = this.holds.clear(DISK_HOLD + path, now);
      if (event) this.note({ ...event, path }, 'disk-full');
    }
  }

  /** `target` does not answer: its hold begins (or goes on), and its `waiting` is told once the hold is due. */
  unreachable(target: string, reason: string, now: number): void {
    this.note(this.holds.held(target, reason, now, target), 'unreachable');
    const since = this.holds.heldSince(target);
    if (since === undefined || this.timers.has(target) || !this.running()) return;
    const timer = setTimeout(() => {
      this.timers.delete(target);
      this.note(this.holds.due(target, this.clock()), 'unreachable');
    }, Math.min(MAX_TIMER_MS, Math.max(0, since + this.holds.afterMs - now)));
    timer.unref?.();
    this.timers.set(target, timer);
  }

  /** An attempt of `scan` to a target that does not answer: a summary to log now, or undefined (counted for the next line). */
  failedAttempt(target: string, scan: number, now: number): RetrySummary | undefined {
    return this.retryLog.failed(target, scan, now);
  }

  /**
   * `target` answered (a delivery done or failed for good): its hold ends (`recovered` when `waiting` was told), what
   * the retry log counted is told, and when it had been held, its scans waiting out a back-off are due at once.
   */
  async answered(target: string, now: number): Promise<void> {
    const wasHeld = this.holds.heldSince(target) !== undefined;
    this.note(this.holds.clear(target, now, target), 'unreachable');
    clearTimeout(this.timers.get(target));
    this.timers.delete(target);
    const summary = this.retryLog.answered(target, now);
    if (summary) this.log.warn({ target, ...summary }, `${target} answers again; ${summary.failedAttempts} attempts for ${summary.scans} scans had failed since the last line`);
    if (!wasHeld) return;
    try {
      const due = await this.store.retryWaitingNow([target], this.clock());
      if (due) this.log.info({ target, deliveries: due }, `${target} answers again: its scans waiting to retry are due now`);
    } catch (err) {
      // They go when their back-off ends, as before.
      this.log.warn({ target, err: (err as Error).message }, 'could not make the scans waiting to retry due now');
    }
  }

  /** On stop: no `waiting` is told any more. */
  stop(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  /** Writes a hold's event to the outbox, with what is held back (`hold`); a failure costs the event, never a delivery. */
  private note(event: NotifyEvent | undefined, hold: HoldKind): void {
    if (!event) return;
    void (async () => this.store.outbox.append([{ ...event, hold }]))().catch((err: unknown) => this.log.warn({ err: (err as Error).message, event: event.kind }, 'could not record a notification event'));
  }
}
