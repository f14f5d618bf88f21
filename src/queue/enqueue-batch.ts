import { isUpgradeEvent, type NormalizedScanRequest, type UpdateType } from '../core/scan.ts';
import { ancestors, longestPrefix, relativeTo } from '../paths/mapping.ts';
import { crossesRoot, descendantRange, mergeUpdateType, mergedDueAt, removalApart, removalDueAt, removalHoldUntil } from './coalesce.ts';
import { routeKey } from './route.ts';
import { runAsync, runSync, step, type Steps } from './steps.ts';
import { MAX_FILES_PER_SCAN, type EnqueueResult, type ScanRow, type Timing } from './types.ts';

type Awaitable<T> = T | Promise<T>;

export { runAsync, runSync };

/** The columns of a new pending scan. */
export interface NewScan {
  folder: string;
  requests: number;
  priority: number;
  firstAt: number;
  lastAt: number;
  dueAt: number;
  updateType: UpdateType;
  upgrade: number;
  title: string | null;
  ids: string | null;
  event: string;
  source: string;
  /** 1: a library root scan for removed items (coalesce.ts removalApart); it merges only with its own kind. */
  removal: number;
  holdUntil: number | null;
  /** Its route (queue/route.ts routeKey): the target names it goes to joined by ",", null for every target. */
  targets: string | null;
  /** What it asks the targets to do: null for a scan, 'refresh' or 'analyze' (kept apart like routes). */
  action: string | null;
}

/** A request for another folder that a scan stands for (scan_parts). */
export interface NewPart {
  scanId: number;
  folder: string;
  priority: number;
  source: string;
  event: string;
  title: string | null;
  ids: string | null;
  updateType: string;
  upgrade: number;
  requests: number;
  firstAt: number;
}

/**
 * What one enqueue transaction reads and writes, in the store's own SQL. SQLite answers at once, PostgreSQL
 * with promises: the rules below are written once and driven by runSync or runAsync.
 */
export interface EnqueueIO {
  /** Pending scans of one kind (removal 0 or 1) and one route (scans.targets) at any of these folders. */
  pendingIn(folders: string[], removal: number, targets: string | null, action: string | null): Awaitable<ScanRow[]>;
  /** Pending scans of one kind and one route with a folder in [low, high). */
  pendingBelow(low: string, high: string, removal: number, targets: string | null, action: string | null): Awaitable<ScanRow[]>;
  /** Inserts a pending scan; returns its id. */
  insert(scan: NewScan): Awaitable<number>;
  merge(scan: NewScan & { id: number }): Awaitable<void>;
  /** Adds files to a scan's sample (a name it has is skipped); returns how many rows were added. */
  addFiles(scanId: number, files: string[]): Awaitable<number>;
  /** Counts file names that did not fit in a scan's sample (scans.files_more). */
  addMoreFiles(scanId: number, count: number): Awaitable<void>;
  /** Rows in a scan's sample (scan_files). */
  sampleSize(scanId: number): Awaitable<number>;
  /**
   * Moves an absorbed scan's parts to `to`, and its first `room` files (by path) into `to`'s sample; counts
   * the rest and its own files_more in `to`'s files_more; then deletes it. Returns the rows added to the sample.
   */
  absorb(to: number, from: number, room: number): Awaitable<number>;
  /** Records (or adds to) a part: requests add up, the most urgent priority and the earliest first_at win. */
  addPart(part: NewPart): Awaitable<void>;
}

/** One step of an enqueue: a call on the store's IO. */
export type EnqueueSteps<T> = Steps<EnqueueIO, T>;

function* call<R>(f: (io: EnqueueIO) => Awaitable<R>): EnqueueSteps<R> {
  return yield* step(f);
}

/** A pending scan as this transaction last left it (written back by flush()). */
interface PendingState extends NewScan {
  id: number;
  dirty: boolean;
}

/**
 * Pending scans of the two kinds live side by side, and so do scans with different routes (the targets they go
 * to, decided when queued: queue/route.ts): one key per folder, kind and route. A scan never merges with one
 * going elsewhere, so each target gets exactly the requests routed to it; requests with the same route coalesce
 * as before.
 */
const keyOf = (folder: string, removal: number, group: Group) => `${removal}\0${group.targets ?? '*'}\0${group.action ?? ''}\0${folder}`;

/**
 * What keeps scans of one folder apart besides their kind: their route, and their action (a refresh or analyze of
 * the items at the files never merges with a scan, nor with the other action: each target does exactly what was asked).
 */
interface Group {
  targets: string | null;
  action: string | null;
}

/**
 * The body of one enqueue transaction, the same for every store. A burst (a season pack, a flood of manual
 * posts) mostly merges into the same few pending scans, so pending rows are read once, merged in memory and
 * written once when the transaction ends, instead of a lookup and an UPDATE per request.
 *
 * Correct because pending folders never nest inside one library (a request below a pending folder merges
 * into it, a new folder absorbs pending folders below it), and nothing merges across a library root
 * (Timing.roots): a request has at most one pending holder, and a holder seen in this transaction is that
 * holder. A request for another folder than its holder's is kept as a part of the scan (scan_parts), so it
 * can be queued on its own again if the scan fails for good. The store makes the transaction exclusive
 * against other enqueues (SQLite: the write lock; PostgreSQL: an advisory lock), so a burst cannot race.
 *
 * A removal at a library root (coalesce.ts removalApart) is a kind of its own: it merges only with other such
 * removals, never takes in a scan of new files nor merges into one, and is due a fixed window after the first
 * (removalDueAt), so the removals of a window share one root scan and the imports keep their own folders.
 */
export class EnqueueBatch {
  private readonly pending = new Map<string, PendingState>();
  /** Rows in each touched scan's sample, as this transaction left them. */
  private readonly sampled = new Map<number, number>();

  constructor(
    private readonly timing: Timing,
    private readonly now: number,
  ) {}

  /** Adds every request, then writes the merges: one transaction's work. */
  *addAll(requests: readonly NormalizedScanRequest[]): EnqueueSteps<EnqueueResult[]> {
    const results: EnqueueResult[] = [];
    for (const r of requests) results.push(yield* this.add(r));
    yield* this.flush();
    return results;
  }

  *add(req: NormalizedScanRequest): EnqueueSteps<EnqueueResult> {
    const ids = req.ids && Object.keys(req.ids).length ? JSON.stringify(req.ids) : null;
    const removal = req.removal && removalApart(req.folder, this.timing.roots) ? 1 : 0;
    const group: Group = { targets: routeKey(req.targets), action: req.action && req.action !== 'scan' ? req.action : null };
    // The trigger's DELAY, when it has one, replaces SERVER_SCAN_DELAY for this request.
    const delayMs = req.delay !== undefined ? req.delay * 1000 : this.timing.delayMs;
    const holder = yield* this.holderOf(req.folder, removal, group);
    if (holder) {
      holder.requests += 1;
      // plex_autoscan serves the smallest number first: the most urgent request decides.
      holder.priority = Math.min(holder.priority, req.priority);
      holder.lastAt = this.now;
      // Never due before any of its requests: a short-delay request does not pull forward a long-delay one.
      holder.dueAt = removal ? removalDueAt(holder.firstAt, delayMs, this.timing.maxMs) : mergedDueAt(holder.dueAt, holder.firstAt, this.now, delayMs, this.timing.maxMs);
      holder.updateType = mergeUpdateType(holder.updateType, req.updateType);
      if (isUpgradeEvent(req.event)) holder.upgrade = 1;
      holder.title = req.title ?? holder.title;
      holder.ids = ids ?? holder.ids;
      holder.event = req.event;
      holder.source = req.source;
      holder.dirty = true;
      yield* this.addFiles(holder.id, req.files);
      if (holder.folder !== req.folder) {
        const part = { ...req, title: req.title ?? null, ids, upgrade: isUpgradeEvent(req.event) ? 1 : 0, requests: 1, firstAt: this.now };
        yield* call((io) => io.addPart({ scanId: holder.id, ...part }));
      }
      return { id: holder.id, status: 'merged', folder: holder.folder, dueAt: holder.dueAt };
    }
    return yield* this.insert(req, ids, removal, group, delayMs);
  }

  /** Writes the merges made in memory. Call once at the end of the transaction. */
  *flush(): EnqueueSteps<void> {
    for (const p of this.pending.values()) {
      if (!p.dirty) continue;
      const { dirty: _dirty, ...row } = p;
      yield* call((io) => io.merge(row));
      p.dirty = false;
    }
  }

  private *holderOf(folder: string, removal: number, route: Group): EnqueueSteps<PendingState | undefined> {
    // Never above the library root that holds the folder.
    const root = this.timing.roots?.length ? longestPrefix(folder, this.timing.roots, (r) => r) : undefined;
    const candidates = [folder, ...ancestors(folder)].filter((c) => root === undefined || relativeTo(root, c) === undefined || relativeTo(root, c) === '');
    for (const c of candidates) {
      const seen = this.pending.get(keyOf(c, removal, route));
      if (seen) return seen;
    }
    // Nearest first: across library roots pending folders may nest.
    const rows = yield* call((io) => io.pendingIn(candidates, removal, route.targets, route.action));
    const row = rows.sort((a, b) => b.folder.length - a.folder.length)[0];
    if (!row) return undefined;
    const state = fromRow(row);
    this.pending.set(keyOf(state.folder, removal, route), state);
    return state;
  }

  /** A new pending scan; it takes over pending folders below it (one scan of the parent covers them). */
  private *insert(req: NormalizedScanRequest, ids: string | null, removal: number, route: Group, delayMs: number): EnqueueSteps<EnqueueResult> {
    // The rows below are read from the table: write this transaction's merges first.
    yield* this.flush();
    const [low, high] = descendantRange(req.folder);
    const below = (yield* call((io) => io.pendingBelow(low, high, removal, route.targets, route.action))).filter((d) => !crossesRoot(req.folder, d.folder, this.timing.roots));
    let firstAt = this.now;
    let requests = 1;
    let priority = req.priority;
    let updateType: UpdateType = req.updateType;
    let upgrade = isUpgradeEvent(req.event) ? 1 : 0;
    // The absorbed scans' own due times: the new scan waits for the latest of them too.
    let belowDue = -Infinity;
    for (const d of below) {
      belowDue = Math.max(belowDue, Number(d.due_at));
      upgrade |= d.upgrade;
      firstAt = Math.min(firstAt, d.first_at);
      requests += d.requests;
      priority = Math.min(priority, d.priority);
      updateType = mergeUpdateType(updateType, d.update_type as UpdateType);
    }
    const { maxMs } = this.timing;
    const due = removal ? removalDueAt(firstAt, delayMs, maxMs) : mergedDueAt(belowDue, firstAt, this.now, delayMs, maxMs);
    const columns: NewScan = {
      folder: req.folder,
      requests,
      priority,
      firstAt,
      lastAt: this.now,
      dueAt: due,
      updateType,
      upgrade,
      title: req.title ?? null,
      ids,
      event: req.event,
      source: req.source,
      removal,
      holdUntil: removal ? removalHoldUntil(firstAt, delayMs, maxMs) : null,
      targets: route.targets,
      action: route.action,
    };
    const id = yield* call((io) => io.insert(columns));
    const state: PendingState = { ...columns, id, dirty: false };
    this.pending.set(keyOf(state.folder, removal, route), state);
    this.sampled.set(id, 0);
    yield* this.addFiles(state.id, req.files);
    for (const d of below) {
      const size = yield* this.sampleSize(state.id);
      const moved = yield* call((io) => io.absorb(state.id, d.id, Math.max(0, MAX_FILES_PER_SCAN - size)));
      this.sampled.set(state.id, size + moved);
      this.sampled.delete(d.id);
      const part: NewPart = { scanId: state.id, folder: d.folder, priority: d.priority, source: d.source, event: d.event, title: d.title, ids: d.ids, updateType: d.update_type, upgrade: d.upgrade, requests: d.requests, firstAt: d.first_at };
      yield* call((io) => io.addPart(part));
      this.pending.delete(keyOf(d.folder, removal, route));
    }
    return { id: state.id, status: below.length ? 'merged' : 'queued', folder: req.folder, dueAt: due };
  }

  /** Keeps files in the scan's sample while it has room (MAX_FILES_PER_SCAN), and counts the rest. */
  private *addFiles(id: number, files: readonly string[]): EnqueueSteps<void> {
    if (files.length === 0) return;
    const size = yield* this.sampleSize(id);
    const kept = files.slice(0, Math.max(0, MAX_FILES_PER_SCAN - size));
    const added = kept.length ? yield* call((io) => io.addFiles(id, kept)) : 0;
    this.sampled.set(id, size + added);
    if (files.length > kept.length) yield* call((io) => io.addMoreFiles(id, files.length - kept.length));
  }

  private *sampleSize(id: number): EnqueueSteps<number> {
    const known = this.sampled.get(id);
    if (known !== undefined) return known;
    const n = yield* call((io) => io.sampleSize(id));
    this.sampled.set(id, n);
    return n;
  }
}

function fromRow(row: ScanRow): PendingState {
  return {
    id: Number(row.id),
    folder: row.folder,
    requests: row.requests,
    priority: row.priority,
    firstAt: Number(row.first_at),
    lastAt: Number(row.last_at),
    dueAt: Number(row.due_at),
    updateType: row.update_type as UpdateType,
    upgrade: row.upgrade,
    title: row.title,
    ids: row.ids,
    event: row.event,
    source: row.source,
    removal: row.removal,
    holdUntil: row.hold_until === null ? null : Number(row.hold_until),
    targets: row.targets ?? null,
    action: row.action ?? null,
    dirty: false,
  };
}
