import type { NormalizedScanRequest, ScanItem, Target } from '../core/scan.ts';
import type { NotifyEvent } from '../core/events.ts';
import type { Outbox } from './outbox.ts';
import type { DeliveryRow, EnqueueResult, HistoryFilter, QueueEntry, Timing } from './types.ts';
import type { EventQuery, ProcessStatus } from '../peers/autopulse/event-list.ts';
import type { FileWaitCheck, FileWaitScan } from './file-wait.ts';

/** A value now (SQLite) or later (PostgreSQL): callers await either. */
export type Awaitable<T> = T | Promise<T>;

/** The dashboard's reads: counts, one scan, the open ones, the history. */
export interface QueueReads {
  counts(): Awaitable<Record<string, number>>;
  get(id: number): Awaitable<QueueEntry | undefined>;
  listOpen(limit?: number, offset?: number): Awaitable<QueueEntry[]>;
  listHistory(filter?: HistoryFilter): Awaitable<QueueEntry[]>;
  /** A page of every scan, open or finished, as autopulse's /list pages its events (peers/autopulse/event-list.ts). */
  listEvents(query: EventQuery): Awaitable<QueueEntry[]>;
  /** How many scans are in each of autopulse's process statuses, by the list's rule (autopulse's /stats). */
  eventCounts(): Awaitable<Record<ProcessStatus, number>>;
}

/** Small named values kept beside the queue (page tokens, what was imported). */
export interface QueueMetaStore {
  get(key: string): Awaitable<string | undefined>;
  /** Sets a value; null clears it. */
  set(key: string, value: string | null): Awaitable<void>;
  /** Every key starting with `prefix` that has a value, in key order. */
  list(prefix: string): Awaitable<Array<[string, string]>>;
}

/** Meta values a commit expects to find (null: absent); any other value and nothing is committed. */
export type MetaExpect = Readonly<Record<string, string | null>>;

/**
 * A commit's expected meta values were not there: another writer (another relay's drive poller, a
 * reset_page_token) changed them first. Nothing of the commit was written.
 */
export class MetaConflictError extends Error {
  constructor(
    readonly key: string,
    readonly expected: string | null,
    readonly found: string | null,
  ) {
    super(`meta value ${key} is ${found === null ? 'unset' : JSON.stringify(found)}, not ${expected === null ? 'unset' : JSON.stringify(expected)} as this commit expected: nothing was written`);
    this.name = 'MetaConflictError';
  }
}

/** Throws MetaConflictError at the first expected value that differs from what `read` finds. */
export function checkExpected(expect: MetaExpect, read: (key: string) => string | null): void {
  for (const [key, expected] of Object.entries(expect)) {
    const found = read(key);
    if (found !== expected) throw new MetaConflictError(key, expected, found);
  }
}

/**
 * A meta key that records that something was queued once (a peer's queue taken over). enqueueOnce reads it and
 * queues under the same lock other writers of the queue wait for, so two relays doing the same at once queue it once.
 */
export interface OnceMarker {
  key: string;
  /** Whether the key's current value says it was done before: then nothing is queued or written. */
  done(prior: string | undefined): boolean;
  /** The value written with the requests, from the one before (a marker may keep a list). */
  value(prior: string | undefined): string;
}

export interface OnceResult {
  /** The key's value before (what `done` was asked about). */
  prior: string | undefined;
  /** Absent when it was done before. */
  results?: EnqueueResult[];
}

/** A delivery's final outcome, as the scheduler records it. */
export interface Completion {
  scanId: number;
  target: string;
  result: { status: 'done' | 'failed'; error?: string; detail?: string; event?: NotifyEvent };
}

/** What recording a delivery's outcome did to its scan: finished (and how), and the folders queued again. */
export interface CompleteResult {
  scanFinished: 'done' | 'failed' | undefined;
  requeued?: string[];
}

export interface Claimed {
  item: ScanItem;
  target: string;
}

/**
 * What several relays sharing one queue need beyond the queue itself (PostgreSQL). Absent for SQLite, where
 * one process owns the queue file.
 */
export interface SharedQueue {
  /** This relay's name, stored with each delivery it claims. */
  readonly relayId: string;
  /** How often the scheduler looks anyway, in case a wake-up was missed. */
  readonly pollMs: number;
  /**
   * Records this relay and its targets among the live relays (renewed while it runs, removed by close()):
   * a scan that becomes due goes to every server a live relay has, and each relay claims its servers' deliveries.
   */
  join(targets: readonly Target[]): Promise<void>;
  /** The running relays and their servers as people read them ("plex (Living Room)"), for the dashboard. */
  relays(): Promise<RunningRelay[]>;
  /**
   * The target names (`plex`, `jellyfin`) the other relays sharing this queue have had lately, as last read (at
   * open, then with each lease renewal; no round trip here): routing sends them what this relay's targets do not
   * decide (queue/route.ts withPeerTargets).
   */
  peerTargets(): readonly string[];
  /**
   * Takes a serial target's one-at-a-time turn across relays (true; also when this relay holds it already) or
   * finds another relay holding it (false). Held until releaseTurn, across a lost connection and a database
   * restart; a relay that dies holding it loses it once its lease runs out, and the relay that takes it then
   * gets 'taken over': the server may still be running the dead relay's scan, so it asks before sending.
   */
  takeTurn(target: string): Promise<boolean | 'taken over'>;
  /** `announce`: wake the other relays (a delivery ended; they may wait for the turn). A look that claimed nothing does not. */
  releaseTurn(target: string, announce?: boolean): Promise<void>;
  /**
   * Called when a relay queued, finished or released something; `at`: the wake-up only says something is due
   * then (a queued scan), so a timer for that time will do.
   */
  onWake(listener: (at?: number) => void): void;
}

export interface RunningRelay {
  relay: string;
  targets: string[];
}

/**
 * The queue store as the scheduler, the intake and the server use it. SQLite (QueueStore) answers
 * synchronously, PostgreSQL (PgQueueStore) with promises; callers await both and never ask which it is.
 */
export interface QueueBackend {
  readonly view: QueueReads;
  readonly meta: QueueMetaStore;
  /** Events for notifications and the dashboard's stream; a delivery's event goes in with its state change. */
  readonly outbox: Outbox;
  /** Present when several relays share this queue. */
  readonly shared?: SharedQueue;
  /** Where the queue is, for logs (a file, or a URL without its password). */
  readonly location: string;
  /**
   * Queues requests and writes `meta` in one commit. `expect`: meta values that must be there (compare and
   * set, e.g. the page token a drive poll started from), else MetaConflictError and nothing is written.
   */
  enqueueMany(
    requests: readonly NormalizedScanRequest[],
    timing: Timing,
    now?: number,
    meta?: Readonly<Record<string, string | null>>,
    expect?: MetaExpect,
  ): Awaitable<EnqueueResult[]>;
  /** enqueueMany, unless `once.done` says the marker's current value means it was done already (one transaction). */
  enqueueOnce(requests: readonly NormalizedScanRequest[], timing: Timing, now: number, once: OnceMarker): Awaitable<OnceResult>;
  /** `files`: what a FileGate pass found on disk (SERVER_WAIT_FOR_FILES); a scan that waits for files goes only on its word. */
  activateDue(targets: readonly string[], now?: number, limit?: number, files?: FileWaitCheck): Awaitable<number>;
  /** Due pending scans that wait for their files (queue/file-wait.ts), with their sample, in activation's order. */
  dueWaitingForFiles(now?: number, limit?: number): Awaitable<FileWaitScan[]>;
  claimDeliveries(limit: number, now?: number, target?: string): Awaitable<Claimed[]>;
  completeDelivery(scanId: number, target: string, result: Completion['result'], now?: number): Awaitable<CompleteResult>;
  /**
   * Several outcomes in one commit (SQLite: its commits block the event loop while they fsync, so they are
   * grouped). Absent: the scheduler records each with completeDelivery (PostgreSQL commits off the event loop).
   */
  completeDeliveries?(completions: readonly Completion[], now?: number): CompleteResult[];
  /** `event` (a `retrying`) is written with the change, in its transaction. */
  retryDelivery(scanId: number, target: string, error: string, nextAt: number, countsAsAttempt?: boolean, fileChecks?: number, event?: NotifyEvent): Awaitable<void>;
  /**
   * A claimed delivery goes back to waiting as it was: its place in line (its due time, its priority) and its
   * attempts unchanged. For a serial target that is busy with a scan that is not the relay's: the next one
   * claimed is again the first by priority and age, whichever was tried.
   */
  putBack(scanId: number, target: string, error: string): Awaitable<void>;
  /** `event`: written in the same transaction (the scan's end, once the target's after-steps confirmed it). */
  setDeliveryDetail(scanId: number, target: string, detail: string, event?: NotifyEvent): Awaitable<void>;
  recoverInFlight(): Awaitable<number>;
  /**
   * At start: deliveries to these targets that wait out a retry back-off after an error are due now. A start
   * reads the config again, and the error (no token, a wrong token, a wrong URL) may be one it fixed; the
   * relay cannot tell which, and one early try of a scan that still fails only restarts its back-off.
   */
  retryWaitingNow(targets: readonly string[], now?: number): Awaitable<number>;
  failUnknownTargets(targets: readonly string[], now?: number): Awaitable<number>;
  /**
   * At start, the migration to explicit routes: open scans stored without one (NULL) get the list `routeOf` gives
   * for their folder and files, or `every` target when none takes them (queue/lifecycle.ts routeUnroutedSteps).
   */
  routeUnrouted(routeOf: (scan: { folder: string; files: string[] }) => string[], every: readonly string[]): Awaitable<number>;
  nextWakeAt(targets?: readonly string[]): Awaitable<number | undefined>;
  countOpen(): Awaitable<number>;
  pruneHistory(keep: number): Awaitable<number>;
  cancel(id: number): Awaitable<boolean>;
  retryNow(id: number, now?: number): Awaitable<boolean>;
  /** Whether a write could start now (the health check). */
  writable(): Awaitable<boolean>;
  close(): Awaitable<void>;
}

/** Still here for the queue's callers; it lives in core because db/pg's toolkit throws it. */
export { QueueUnavailableError } from '../core/errors.ts';

export type { DeliveryRow };
