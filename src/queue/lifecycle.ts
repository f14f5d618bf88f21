import type { NotifyEvent } from '../core/events.ts';
import { descendantRange, removalRecheckAt } from './coalesce.ts';
import { stampScan } from './events.ts';
import { routeKey, routeNames } from './route.ts';
import { step, type Steps } from './steps.ts';
import type { ScanRow } from './types.ts';
import { decideFileWait, giveUpSteps, type FileWaitCheck } from './file-wait.ts';

type Awaitable<T> = T | Promise<T>;

/** A due scan as activation reads it. */
export type DueScan = Pick<ScanRow, 'id' | 'folder' | 'removal' | 'hold_until' | 'targets' | 'last_at' | 'update_type' | 'files_wait_since'>;

/** A delivery activation writes: waiting from `at`, or failed at once with `error` (its target is gone). */
export interface NewDelivery {
  target: string;
  at: number;
  error?: string;
}

/** A delivery's outcome as the scheduler records it. */
export interface Outcome {
  status: 'done' | 'failed';
  error?: string;
  detail?: string;
  event?: NotifyEvent;
}

/** A delivery tried again later: its error, when, whether the try counts (`refund` 1: it does not), file checks. */
export interface Retry {
  error: string;
  nextAt: number;
  refund: 0 | 1;
  fileChecks?: number;
  /** A `retrying` event, written with the change. */
  event?: NotifyEvent;
}

/**
 * What the queue's lifecycle after enqueue reads and writes, in the store's own SQL (SQLite answers at once,
 * PostgreSQL with promises). Each call is one statement's worth: no rule lives here, only in the steps below.
 */
export interface LifecycleIO {
  scan(id: number): Awaitable<ScanRow | undefined>;
  /** Pending scans due by `now`, scans of new files first (a removal scan due in the same pass waits for them). */
  duePending(now: number, limit: number): Awaitable<DueScan[]>;
  /** Open scans of new files at or below a folder, and the latest due time of the pending ones among them. */
  openFilesScansAt(folder: string, low: string, high: string): Awaitable<{ n: number; pendingDue: number | null }>;
  /** A pending scan waits for its files (queue/file-wait.ts): due again at `at`, waiting since `since` unless it was already. */
  waitForFiles(id: number, at: number, since: number): Awaitable<void>;
  /** A pending scan's due time; `clearHold`: it no longer waits for the scans of new files below it. */
  setDue(id: number, at: number, clearHold: boolean): Awaitable<void>;
  /** Marks scans active and writes their deliveries (a failed one finished at `now`). */
  activate(scans: ReadonlyArray<{ id: number; deliveries: readonly NewDelivery[] }>, now: number): Awaitable<void>;
  /**
   * Records one delivery's outcome; then how many of its scan's deliveries are open, and how many failed. When
   * none is open and none failed, the scan is done in the same statement (endScan 'done': PostgreSQL's common
   * case is one round trip, test/queue/pg-statements.test.ts).
   */
  finishDelivery(scanId: number, target: string, outcome: Outcome, now: number): Awaitable<{ open: number; failed: number }>;
  /** A delivery back to waiting, due at `nextAt`, with its error (and its attempt given back when `refund` is 1). */
  retryDelivery(scanId: number, target: string, retry: Omit<Retry, 'event'>): Awaitable<void>;
  /** How many of a scan's deliveries are open (waiting or sending). */
  openDeliveries(scanId: number): Awaitable<number>;
  /** A scan's end: its status and finish time, and the parts it took in are dropped (after requeueParts). */
  endScan(scanId: number, status: 'done' | 'failed', now: number): Awaitable<void>;
  /** Queues the parts of a failed scan again, due now, with the files of theirs it held (EnqueueBatch). */
  requeueParts(scanId: number, now: number): Awaitable<string[]>;
  /** Events written in the same transaction as the state change they tell of. */
  addEvents(events: readonly NotifyEvent[]): Awaitable<void>;
  /** Every open (waiting or sending) delivery. */
  openDeliveryRows(): Awaitable<Array<{ scan_id: number; target: string }>>;
  /** Active scans without any delivery. */
  orphans(): Awaitable<Array<Pick<ScanRow, 'id' | 'targets'>>>;
  /** Whether a scan has a delivery being sent now. */
  sending(scanId: number): Awaitable<boolean>;
  deleteScans(ids: readonly number[]): Awaitable<void>;
  /** Back to active: the scan unfinished, its waiting and failed deliveries waiting and due at `now`. */
  reopen(scanId: number, now: number): Awaitable<void>;
  /** The finished scans past the newest `keep`. */
  finishedBeyond(keep: number): Awaitable<number[]>;
  /** Open scans stored without a route (NULL, from before routes were explicit), with their sample of files. */
  unrouted(): Awaitable<Array<{ id: number; folder: string; files: string[] }>>;
  /** Stores a scan's route (queue/route.ts routeKey). */
  setRoute(id: number, key: string): Awaitable<void>;
}

export type LifecycleSteps<T> = Steps<LifecycleIO, T>;
const call = <R>(f: (io: LifecycleIO) => Awaitable<R>): LifecycleSteps<R> => step(f);

/**
 * The targets a store can deliver to now: SQLite, this relay's; PostgreSQL, the servers of the relays sharing the
 * queue. `keysOf(name)`: the delivery names a routed target name goes to ([]: no one has that target any more).
 */
export interface Reach {
  keysOf(name: string): string[];
  /** Every target's delivery names: where a scan stored before routes were explicit goes (see fillRoutes). */
  all: readonly string[];
}

/** A relay's own targets, each delivered under its own name (SQLite; PostgreSQL before a scheduler joins). */
export function localReach(names: readonly string[]): Reach {
  return { all: names, keysOf: (name) => (names.includes(name) ? [name] : []) };
}

/** Why a delivery to a target that left the config fails, naming it. */
export const goneReason = (target: string) => `target ${target} is no longer configured`;

/**
 * A scan's deliveries, from its stored route: one per delivery name of each target it names, waiting from `at`;
 * a target no longer configured anywhere gets a delivery that fails at once, naming it, so the scan ends for all
 * to see instead of waiting for ever, and its other targets are not held up.
 */
export function deliveriesOf(route: string | null | undefined, reach: Reach, at: number): NewDelivery[] {
  const names = routeNames(route);
  // No stored route: queued by a relay with no target of its own (a feeder on a shared queue), or before routes
  // were explicit and not yet given one (routeUnroutedSteps, at a relay's start): every target there is.
  if (!names) return reach.all.map((target) => ({ target, at }));
  return names.flatMap((name) => {
    const keys = reach.keysOf(name);
    return keys.length ? keys.map((target) => ({ target, at })) : [{ target: name, at, error: goneReason(name) }];
  });
}

/**
 * Moves due pending scans to active with their deliveries (deliveriesOf). A due removal scan waits while scans of
 * new files at or below its folder are open, until its hold_until at most; its deliveries are due a moment later,
 * so the claim order hands out the scans of new files activated in the same pass first. Returns how many it
 * activated; those whose every target is gone end failed at once.
 */
export function* activateSteps(reach: Reach, now: number, limit: number, files?: FileWaitCheck): LifecycleSteps<number> {
  const due = yield* call((io) => io.duePending(now, limit));
  const ready: Array<{ id: number; deliveries: NewDelivery[] }> = [];
  for (const row of due) {
    // SERVER_WAIT_FOR_FILES: no target gets a scan before its files are on the relay's disk (queue/file-wait.ts).
    const wait = decideFileWait(row, files, now);
    if (wait.kind === 'unlooked') continue;
    if (wait.kind === 'wait') {
      yield* call((io) => io.waitForFiles(row.id, wait.at, wait.since));
      continue;
    }
    if (wait.kind === 'give up') {
      yield* giveUpSteps(row.id, deliveriesOf(row.targets, reach, now), wait.reason, files?.verdicts.get(Number(row.id))?.missing ?? [], now);
      continue;
    }
    if (row.removal && row.hold_until !== null && now < row.hold_until) {
      const open = yield* call((io) => io.openFilesScansAt(row.folder, ...descendantRange(row.folder)));
      const later = removalRecheckAt(row.hold_until, open, now);
      if (later !== undefined) {
        yield* call((io) => io.setDue(row.id, later, false));
        continue;
      }
    }
    ready.push({ id: row.id, deliveries: deliveriesOf(row.targets, reach, row.removal ? now + 1 : now) });
  }
  if (!ready.length) return 0;
  yield* call((io) => io.activate(ready, now));
  for (const r of ready) if (r.deliveries.length && r.deliveries.every((d) => d.error !== undefined)) yield* endScan(r.id, 'failed', now);
  return ready.length;
}

/** What recording an outcome did to its scan. `later`: it ended failed, and the store must finish it under its lock. */
export type Recorded = { scanFinished: 'done' | 'failed' | undefined; requeued?: string[] } | { later: true };

/**
 * Records a delivery's outcome (and its event). When none of its scan's deliveries is open, the scan ends: done,
 * or failed when one failed, and then the requests for other folders it took in are queued again on their own.
 * `deferFailed`: the store holds only the scan's row, and a failed end (which queues parts) needs the queue's lock:
 * it answers `later` and runs failSteps under that lock.
 */
export function* completeSteps(scanId: number, target: string, outcome: Outcome, now: number, deferFailed = false): LifecycleSteps<Recorded> {
  const counts = yield* call((io) => io.finishDelivery(scanId, target, outcome, now));
  // The event carries its scan's open and failed deliveries as this transaction counted them: exactly one event of
  // a scan says it settled (scanOpen 0), which autopulse's json document tells as processed or failed.
  if (outcome.event) yield* call((io) => io.addEvents([stampScan(outcome.event!, counts.open, counts.failed)]));
  if (counts.open) return { scanFinished: undefined };
  // Ended done by finishDelivery itself.
  if (!counts.failed) return { scanFinished: 'done' };
  if (deferFailed) return { later: true };
  return yield* failSteps(scanId, now);
}

/** A delivery tried again later, and its `retrying` event (if any) in the same transaction. */
export function* retrySteps(scanId: number, target: string, retry: Retry): LifecycleSteps<void> {
  const { event, ...change } = retry;
  yield* call((io) => io.retryDelivery(scanId, target, change));
  if (event) yield* call((io) => io.addEvents([event]));
}

/** A scan whose deliveries all ended, one failed: failed, and its parts queued again (unless retried meanwhile). */
export function* failSteps(scanId: number, now: number): LifecycleSteps<{ scanFinished: 'failed' | undefined; requeued?: string[] }> {
  const open = yield* call((io) => io.openDeliveries(scanId));
  const row = yield* call((io) => io.scan(scanId));
  // Retried from the dashboard meanwhile, or finished by another relay.
  if (open || row?.status !== 'active') return { scanFinished: undefined };
  return yield* endScan(scanId, 'failed', now);
}

function* endScan<S extends 'done' | 'failed'>(scanId: number, status: S, now: number): LifecycleSteps<{ scanFinished: S; requeued?: string[] }> {
  const requeued = status === 'failed' ? yield* call((io) => io.requeueParts(scanId, now)) : [];
  yield* call((io) => io.endScan(scanId, status, now));
  return requeued.length ? { scanFinished: status, requeued } : { scanFinished: status };
}

/**
 * At start: deliveries to targets no longer configured anywhere can never finish: each fails, naming its target,
 * and its scan ends as any other. Active scans left without a delivery get theirs from their own route (never
 * every target: a scan keeps where it was routed).
 */
export function* failUnknownSteps(reach: Reach, now: number): LifecycleSteps<number> {
  const rows = yield* call((io) => io.openDeliveryRows());
  const known = new Set(reach.all);
  let failed = 0;
  for (const r of rows) {
    // A shared queue names a delivery by its server (<name>@<server id>), or by the bare name from before ids.
    const name = r.target.split('@')[0]!;
    if (known.has(r.target) || reach.keysOf(name).length) continue;
    const out = yield* completeSteps(r.scan_id, r.target, { status: 'failed', error: goneReason(name) }, now);
    if ('later' in out) yield* failSteps(r.scan_id, now);
    failed++;
  }
  return failed + (yield* adoptSteps(reach, now));
}

/**
 * Active scans left without any delivery (by a relay without targets, before relays had a registry) get theirs
 * from their own route, as activation gives them. Returns how many of those failed at once (target gone).
 */
export function* adoptSteps(reach: Reach, now: number): LifecycleSteps<number> {
  const orphans = yield* call((io) => io.orphans());
  let failed = 0;
  for (const o of orphans) {
    const deliveries = deliveriesOf(o.targets, reach, now);
    if (!deliveries.length) continue;
    yield* call((io) => io.activate([{ id: o.id, deliveries }], now));
    failed += deliveries.filter((d) => d.error !== undefined).length;
    if (deliveries.every((d) => d.error !== undefined)) yield* endScan(o.id, 'failed', now);
  }
  return failed;
}

/**
 * The migration to explicit routes (issue 49), run at a relay's start: every open scan stored without a route
 * (NULL, "every target", decided when due) gets the explicit list its folder and files route to now (`routeOf`:
 * the relay's routing table). One no target takes keeps every target's name, as NULL meant when it was queued:
 * a queued scan is never lost. Returns how many it routed.
 */
export function* routeUnroutedSteps(routeOf: (scan: { folder: string; files: string[] }) => string[], every: readonly string[]): LifecycleSteps<number> {
  const rows = yield* call((io) => io.unrouted());
  for (const r of rows) {
    const route = routeOf(r);
    const key = routeKey(route.length ? route : every) ?? '';
    yield* call((io) => io.setRoute(r.id, key));
  }
  return rows.length;
}

/** The dashboard's delete: an open scan none of whose deliveries is being sent goes, with all it holds. */
export function* cancelSteps(id: number): LifecycleSteps<boolean> {
  const row = yield* call((io) => io.scan(id));
  if (!row || (row.status !== 'pending' && row.status !== 'active')) return false;
  if (yield* call((io) => io.sending(id))) return false;
  yield* call((io) => io.deleteScans([id]));
  return true;
}

/**
 * "Scan now": a pending scan is due now (a removal scan no longer waits for the imports below it); an active or
 * failed one is active again with its waiting and failed deliveries due now. False for anything else.
 */
export function* retryNowSteps(id: number, now: number): LifecycleSteps<boolean> {
  const row = yield* call((io) => io.scan(id));
  if (!row) return false;
  if (row.status === 'pending') {
    yield* call((io) => io.setDue(id, now, true));
    return true;
  }
  if (row.status === 'active' || row.status === 'failed') {
    yield* call((io) => io.reopen(id, now));
    return true;
  }
  return false;
}

/** Keeps the newest `keep` finished scans. */
export function* pruneSteps(keep: number): LifecycleSteps<number> {
  const old = yield* call((io) => io.finishedBeyond(keep));
  if (old.length) yield* call((io) => io.deleteScans(old));
  return old.length;
}
