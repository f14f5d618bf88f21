import { EVENT_FILES, EVENT_ITEMS, type NotifyEvent, type ScannedItem } from '../core/events.ts';
import type { ScanItem } from '../core/scan.ts';

/**
 * The event a delivery's end writes to the outbox (with its state change): `scanned` (or `removed` for a
 * removal scan) once the target confirmed the scan ended, `failed` when it gave up; `retrying` (with
 * retryDelivery) when a try failed and it is tried again.
 */
export function deliveryEvent(
  item: ScanItem,
  target: string,
  outcome: { status: 'done'; detail?: string; items?: readonly ScannedItem[] } | { status: 'failed' | 'retrying'; error: string },
  now: number,
): NotifyEvent {
  const files = item.files.slice(0, EVENT_FILES);
  const more = item.files.length - files.length + item.moreFiles;
  return {
    kind: outcome.status === 'done' ? (item.removal ? 'removed' : 'scanned') : outcome.status,
    at: now,
    target,
    scan: item.id,
    folder: item.folder,
    ...(files.length ? { files } : {}),
    ...(more ? { moreFiles: more } : {}),
    trigger: item.source,
    event: item.event,
    ...(item.title ? { title: item.title } : {}),
    requestedAt: item.firstAt,
    tookMs: Math.max(0, now - item.firstAt),
    ...(item.removal ? { requests: item.requests } : {}),
    ...(outcome.status !== 'done' ? { reason: outcome.error } : outcome.detail ? { detail: outcome.detail } : {}),
    ...(outcome.status === 'done' && outcome.items?.length ? { items: outcome.items.slice(0, EVENT_ITEMS) } : {}),
    ...(outcome.status === 'done' && (outcome.items?.length ?? 0) > EVENT_ITEMS ? { moreItems: outcome.items!.length - EVENT_ITEMS } : {}),
  };
}

/**
 * Holds that begin and end, told once each: `waiting` when deliveries are held (the mount guard) or a target stays
 * unreachable longer than `afterMs`, `recovered` when that ends. Pure bookkeeping; the scheduler writes what it returns.
 */
export class HoldTracker {
  private readonly since = new Map<string, number>();
  private readonly reasons = new Map<string, { reason: string; target?: string }>();
  private readonly told = new Set<string>();

  constructor(readonly afterMs: number) {}

  /** `key` is held now (a target that did not answer, the guard); an event once the hold has lasted `afterMs`. */
  held(key: string, reason: string, now: number, target?: string, afterMs = this.afterMs): NotifyEvent | undefined {
    if (!this.since.has(key)) this.since.set(key, now);
    this.reasons.set(key, { reason, ...(target ? { target } : {}) });
    return this.due(key, now, afterMs);
  }

  /**
   * `key`'s `waiting`, when it is still held, has lasted `afterMs` and was not told yet: a target that failed once and
   * waits out a long back-off is told when its hold is due, not when its next attempt lands minutes later.
   */
  due(key: string, now: number, afterMs = this.afterMs): NotifyEvent | undefined {
    const since = this.since.get(key);
    const why = this.reasons.get(key);
    if (since === undefined || !why || this.told.has(key) || now - since < afterMs) return undefined;
    this.told.add(key);
    return { kind: 'waiting', at: now, ...(why.target ? { target: why.target } : {}), reason: why.reason, requestedAt: since };
  }

  /** When `key`'s hold began (undefined: not held). */
  heldSince(key: string): number | undefined {
    return this.since.get(key);
  }

  /** `key` works again; `recovered` when its hold was told. */
  clear(key: string, now: number, target?: string): NotifyEvent | undefined {
    const since = this.since.get(key);
    this.since.delete(key);
    this.reasons.delete(key);
    if (!this.told.delete(key) || since === undefined) return undefined;
    return { kind: 'recovered', at: now, ...(target ? { target } : {}), requestedAt: since, tookMs: now - since };
  }
}

/**
 * A delivery's failed tries told as `retrying`, at most: autopulse tells a file `retrying` until it gives up at
 * max_retries (5 by default: 4 retries told, runner.rs:306-321, opts.rs:76). The relay tries on without a limit,
 * and an outage's every retry of every queued scan would fill the outbox; the scan is told again when it settles.
 */
export const RETRYING_TOLD = 4;

/**
 * A delivery's event as the store writes it, in the transaction of its state change: with the scan's deliveries
 * still open and failed then (counted in that transaction, so exactly one event of a scan has `scanOpen` 0).
 */
export function stampScan(event: NotifyEvent, open: number | string | null, failed: number | string | null): NotifyEvent {
  return { ...event, scanOpen: Number(open ?? 0), scanFailed: Number(failed ?? 0) };
}
