import type { NotifyEvent } from '../core/events.ts';
import { duration } from '../config/durations.ts';
import { deliveryEvent } from './events.ts';
import { toItem } from './rows.ts';
import { step, type Steps } from './steps.ts';
import type { ScanRow } from './types.ts';

/*
 * SERVER_WAIT_FOR_FILES (autopulse's opts.check_path, issue 48 item 1): a due scan goes to none of its targets
 * before its files are on the relay's disk. autopulse looks every second and sends a row only once it was found
 * (service/src/runner.rs:37-48, 159-167; manager.rs:288); it never gives up, but deletes rows still not found
 * after cleanup_days (runner.rs:332-347). Here the looks back off, and a scan whose files never appear fails,
 * told like any failed delivery. The disk is looked at outside the queue's transaction (FileGate); this is the
 * rule activation applies to what was found, the same for both stores.
 */

/** How a scan waits for its files, in ms (SERVER_WAIT_FOR_FILES, in seconds there). */
export interface FileWaitPolicy {
  /** The first look again after a scan's files were missing. */
  firstMs: number;
  /** Looks back off (doubling) up to this far apart. */
  maxMs: number;
  /** A scan that waited this long and none of whose files appeared fails. */
  giveUpMs: number;
}

/** What one look at a due scan's files found (FileGate). */
export interface FileVerdict {
  /** The scan's last_at when looked at: a request merged in since may bring files not looked at. */
  lastAt: number;
  /** Paths looked for (its files, or its folder when it has none). */
  looked: number;
  /** Those not there, or never looked at (`outside`). */
  missing: string[];
  /** Of `missing`, those outside every library folder the relay knows: never looked at on its disk. */
  outside: string[];
}

/** The looks of one pass, handed to activation. */
export interface FileWaitCheck {
  policy: FileWaitPolicy;
  verdicts: ReadonlyMap<number, FileVerdict>;
}

/** The columns activation reads of a due scan (lifecycle.ts DueScan), in both stores' SQL. */
export const DUE_COLUMNS = 'id, folder, removal, hold_until, targets, last_at, update_type, files_wait_since';

/**
 * Due pending scans that wait for files (waitsForFiles), in activation's order, so a pass looks at every one
 * activation will read. `ph1`, `ph2`: the store's placeholders for now and the limit.
 */
export const FILE_WAIT_DUE_SQL = (ph1: string, ph2: string) =>
  `SELECT * FROM scans WHERE status = 'pending' AND due_at <= ${ph1} AND removal = 0 AND update_type <> 'Deleted' ORDER BY removal, priority, due_at, id LIMIT ${ph2}`;

/** A due scan whose files a pass looks for (QueueBackend.dueWaitingForFiles). */
export interface FileWaitScan {
  id: number;
  /** As stored (the store's clock): only compared with itself. */
  lastAt: number;
  folder: string;
  /** Its sample of files (none: its folder is looked for). */
  files: string[];
  /** Its stored route (queue/route.ts), for the library folders its targets know. */
  targets: string | null;
  /** Since when it waits (the store's clock), null: it did not wait yet. */
  since: number | null;
}

/** The columns of a due scan the rule reads. */
export type FileWaitRow = Pick<ScanRow, 'id' | 'removal' | 'update_type' | 'last_at' | 'files_wait_since'>;

/**
 * Whether a scan waits for files at all: a removal scan, and a scan of deletions only, stand for what is gone,
 * which can never appear.
 */
export function waitsForFiles(row: Pick<ScanRow, 'removal' | 'update_type'>): boolean {
  return Number(row.removal) !== 1 && row.update_type !== 'Deleted';
}

export type FileWaitDecision =
  /** Activate it now. */
  | { kind: 'go' }
  /** Not looked at in this pass (queued or merged into meanwhile): it stays due, looked at in the next pass. */
  | { kind: 'unlooked' }
  /** Look again at `at`; `since`: when the wait began. */
  | { kind: 'wait'; at: number; since: number }
  /** Fail it, told with `reason`. */
  | { kind: 'give up'; reason: string };

/**
 * When to look again: as long after this look as the scan has waited so far, at least `firstMs` and at most
 * `maxMs` (looks at 1, 2, 4, 8 ... s), and no later than the give-up time.
 */
export function nextLookAt(since: number, now: number, policy: FileWaitPolicy): number {
  const wait = Math.min(policy.maxMs, Math.max(policy.firstMs, now - since));
  return Math.min(now + wait, since + policy.giveUpMs);
}

/**
 * The rule for one due scan. Its files all there: it goes. Some missing: it waits, looked at again later (backing
 * off), until it has waited `giveUpMs`; then it goes when any of them appeared (its folder's scan finds what is
 * there, as plex_autoscan's last check did), else it fails.
 */
export function decideFileWait(row: FileWaitRow, check: FileWaitCheck | undefined, now: number): FileWaitDecision {
  if (!check || !waitsForFiles(row)) return { kind: 'go' };
  const v = check.verdicts.get(Number(row.id));
  if (!v || v.lastAt !== Number(row.last_at)) return { kind: 'unlooked' };
  if (v.missing.length === 0) return { kind: 'go' };
  const since = row.files_wait_since === null || row.files_wait_since === undefined ? now : Number(row.files_wait_since);
  if (now - since < check.policy.giveUpMs) return { kind: 'wait', at: nextLookAt(since, now, check.policy), since };
  if (v.missing.length < v.looked) return { kind: 'go' };
  return { kind: 'give up', reason: giveUpReason(v, check.policy.giveUpMs) };
}

/** Why a scan failed waiting, naming its files (a few) and those the relay may not look at. */
export function giveUpReason(v: Pick<FileVerdict, 'missing' | 'outside'>, giveUpMs: number): string {
  const few = (list: readonly string[]) => list.slice(0, 3).join(', ') + (list.length > 3 ? ` and ${list.length - 3} more` : '');
  const outside = v.outside.length
    ? `; never looked at, outside every library folder the relay knows (add the folder to SERVER_FILE_EXIST_PATH_MAPPINGS): ${few(v.outside)}`
    : '';
  return `its files did not appear on the relay's disk within ${duration(giveUpMs)} (SERVER_WAIT_FOR_FILES.GIVE_UP_AFTER): ${few(v.missing)}${outside}`;
}

type Awaitable<T> = T | Promise<T>;

/** What giving up writes, in the store's own SQL (a part of lifecycle.ts LifecycleIO, named here to keep the imports one way). */
export interface GiveUpIO {
  scan(id: number): Awaitable<ScanRow | undefined>;
  activate(scans: ReadonlyArray<{ id: number; deliveries: ReadonlyArray<{ target: string; at: number; error?: string }> }>, now: number): Awaitable<void>;
  addEvents(events: readonly NotifyEvent[]): Awaitable<void>;
  endScan(scanId: number, status: 'done' | 'failed', now: number): Awaitable<void>;
}

/**
 * A scan that gave up: every delivery its route has fails with `reason`, each told as a failed delivery is, and
 * the scan ends failed. The requests for other folders it took in are not queued again: their files are among
 * those that never appeared.
 */
export function* giveUpSteps(id: number, deliveries: ReadonlyArray<{ target: string; at: number; error?: string }>, reason: string, files: readonly string[], now: number): Steps<GiveUpIO, void> {
  const row = yield* step<GiveUpIO, ScanRow | undefined>((io) => io.scan(id));
  if (!row) return;
  const failed = deliveries.map((d) => ({ target: d.target, at: d.at, error: d.error ?? reason }));
  yield* step<GiveUpIO, void>((io) => io.activate([{ id, deliveries: failed }], now));
  const item = toItem(row, [...files], 0, 0);
  // The event names the target as the scheduler's do (a shared queue's delivery is <name>@<server>).
  const events: NotifyEvent[] = failed.map((d) => deliveryEvent(item, d.target.split('@')[0]!, { status: 'failed', error: d.error }, now));
  if (events.length) yield* step<GiveUpIO, void>((io) => io.addEvents(events));
  yield* step<GiveUpIO, void>((io) => io.endScan(id, 'failed', now));
}
