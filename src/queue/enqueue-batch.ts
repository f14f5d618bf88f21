import type Database from 'better-sqlite3';
import { isUpgradeEvent, type NormalizedScanRequest, type UpdateType } from '../core/scan.ts';
import { ancestors, longestPrefix, relativeTo } from '../paths/mapping.ts';
import { crossesRoot, descendantRange, dueAt, mergeUpdateType, removalApart, removalDueAt, removalHoldUntil } from './coalesce.ts';
import type { EnqueueResult, ScanRow, Timing } from './types.ts';

/** The statements one enqueue transaction uses (prepared once by the store). */
export interface EnqueueStatements {
  /** Pending scans of one kind (removal 0 or 1, the first parameter) at the folders given. */
  pendingIn: (n: number) => Database.Statement<Array<string | number>, ScanRow>;
  /** Pending scans of one kind (removal, then the folder range) below a folder. */
  pendingBelow: Database.Statement<[number, string, string], ScanRow>;
  insert: Database.Statement;
  merge: Database.Statement;
  addFile: Database.Statement;
  addFiles: Database.Statement;
  moveFiles: Database.Statement;
  deleteFiles: Database.Statement;
  deleteScan: Database.Statement;
  /** Records (or adds to) a request for another folder that a scan stands for (scan_parts). */
  addPart: Database.Statement;
  moveParts: Database.Statement;
}

/** A pending scan as this transaction last left it (written back by flush()). */
interface PendingState {
  id: number;
  folder: string;
  requests: number;
  priority: number;
  firstAt: number;
  lastAt: number;
  dueAt: number;
  updateType: UpdateType;
  /** 1 once any request merged in was an upgrade (kept as SQLite stores it). */
  upgrade: number;
  title: string | null;
  ids: string | null;
  event: string;
  source: string;
  /** 1: a library root scan for removed items (coalesce.ts removalApart); it merges only with its own kind. */
  removal: number;
  holdUntil: number | null;
  dirty: boolean;
}

/** Pending scans of the two kinds live side by side: one key per folder and kind. */
const keyOf = (folder: string, removal: number) => `${removal}\0${folder}`;

/**
 * The body of one enqueue transaction. A burst (a season pack, a flood of manual posts) mostly merges
 * into the same few pending scans, so pending rows are read once, merged in memory and written once
 * when the transaction ends, instead of a lookup and an UPDATE per request.
 *
 * Correct because pending folders never nest inside one library (a request below a pending folder merges
 * into it, a new folder absorbs pending folders below it), and nothing merges across a library root
 * (Timing.roots): a request has at most one pending holder, and a holder seen in this transaction is that
 * holder. A request for another folder than its holder's is kept as a part of the scan (scan_parts), so it
 * can be queued on its own again if the scan fails for good.
 *
 * A removal at a library root (coalesce.ts removalApart) is a kind of its own: it merges only with other such
 * removals, never takes in a scan of new files nor merges into one, and is due a fixed window after the first
 * (removalDueAt), so the removals of a window share one root scan and the imports keep their own folders.
 */
export class EnqueueBatch {
  private readonly pending = new Map<string, PendingState>();
  private readonly filesAdded = new Set<string>();

  constructor(
    private readonly stmt: EnqueueStatements,
    private readonly timing: Timing,
    private readonly now: number,
  ) {}

  add(req: NormalizedScanRequest): EnqueueResult {
    const ids = req.ids && Object.keys(req.ids).length ? JSON.stringify(req.ids) : null;
    const removal = req.removal && removalApart(req.folder, this.timing.roots) ? 1 : 0;
    const holder = this.holderOf(req.folder, removal);
    if (holder) {
      holder.requests += 1;
      // plex_autoscan serves the smallest number first: the most urgent request decides.
      holder.priority = Math.min(holder.priority, req.priority);
      holder.lastAt = this.now;
      holder.dueAt = removal ? removalDueAt(holder.firstAt, this.timing.delayMs, this.timing.maxMs) : dueAt(holder.firstAt, this.now, this.timing.delayMs, this.timing.maxMs);
      holder.updateType = mergeUpdateType(holder.updateType, req.updateType);
      if (isUpgradeEvent(req.event)) holder.upgrade = 1;
      holder.title = req.title ?? holder.title;
      holder.ids = ids ?? holder.ids;
      holder.event = req.event;
      holder.source = req.source;
      holder.dirty = true;
      this.addFiles(holder.id, req.files);
      if (holder.folder !== req.folder) {
        this.addPart(holder.id, { ...req, ids, upgrade: isUpgradeEvent(req.event) ? 1 : 0, requests: 1, firstAt: this.now });
      }
      return { id: holder.id, status: 'merged', folder: holder.folder, dueAt: holder.dueAt };
    }
    return this.insert(req, ids, removal);
  }

  /** Writes the merges made in memory. Call once at the end of the transaction. */
  flush(): void {
    for (const p of this.pending.values()) {
      if (!p.dirty) continue;
      this.stmt.merge.run({
        id: p.id,
        requests: p.requests,
        priority: p.priority,
        lastAt: p.lastAt,
        firstAt: p.firstAt,
        dueAt: p.dueAt,
        updateType: p.updateType,
        upgrade: p.upgrade,
        title: p.title,
        ids: p.ids,
        event: p.event,
        source: p.source,
      });
      p.dirty = false;
    }
  }

  private holderOf(folder: string, removal: number): PendingState | undefined {
    // Never above the library root that holds the folder.
    const root = this.timing.roots?.length ? longestPrefix(folder, this.timing.roots, (r) => r) : undefined;
    const candidates = [folder, ...ancestors(folder)].filter((c) => root === undefined || relativeTo(root, c) === undefined || relativeTo(root, c) === '');
    for (const c of candidates) {
      const seen = this.pending.get(keyOf(c, removal));
      if (seen) return seen;
    }
    // Nearest first: across library roots pending folders may nest.
    const row = this.stmt.pendingIn(candidates.length).all(removal, ...candidates).sort((a, b) => b.folder.length - a.folder.length)[0];
    if (!row) return undefined;
    const state = fromRow(row);
    this.pending.set(keyOf(state.folder, removal), state);
    return state;
  }

  /** A new pending scan; it takes over pending folders below it (one scan of the parent covers them). */
  private insert(req: NormalizedScanRequest, ids: string | null, removal: number): EnqueueResult {
    // The rows below are read from the table: write this transaction's merges first.
    this.flush();
    const below = this.stmt.pendingBelow.all(removal, ...descendantRange(req.folder)).filter((d) => !crossesRoot(req.folder, d.folder, this.timing.roots));
    let firstAt = this.now;
    let requests = 1;
    let priority = req.priority;
    let updateType: UpdateType = req.updateType;
    let upgrade = isUpgradeEvent(req.event) ? 1 : 0;
    for (const d of below) {
      upgrade |= d.upgrade;
      firstAt = Math.min(firstAt, d.first_at);
      requests += d.requests;
      priority = Math.min(priority, d.priority);
      updateType = mergeUpdateType(updateType, d.update_type as UpdateType);
    }
    const { delayMs, maxMs } = this.timing;
    const due = removal ? removalDueAt(firstAt, delayMs, maxMs) : dueAt(firstAt, this.now, delayMs, maxMs);
    const state: PendingState = {
      id: 0,
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
      dirty: false,
    };
    const { id: _id, dirty: _dirty, ...columns } = state;
    const info = this.stmt.insert.run(columns);
    state.id = Number(info.lastInsertRowid);
    this.pending.set(keyOf(state.folder, removal), state);
    this.addFiles(state.id, req.files);
    for (const d of below) {
      this.stmt.moveParts.run(state.id, d.id);
      this.addPart(state.id, { folder: d.folder, priority: d.priority, source: d.source, event: d.event, title: d.title, ids: d.ids, updateType: d.update_type, upgrade: d.upgrade, requests: d.requests, firstAt: d.first_at });
      this.stmt.moveFiles.run(state.id, d.id);
      this.stmt.deleteFiles.run(d.id);
      this.stmt.deleteScan.run(d.id);
      this.pending.delete(keyOf(d.folder, removal));
    }
    return { id: state.id, status: below.length ? 'merged' : 'queued', folder: req.folder, dueAt: due };
  }

  private addPart(
    scanId: number,
    p: { folder: string; priority: number; source: string; event: string; title?: string | null; ids: string | null; updateType: string; upgrade: number; requests: number; firstAt: number },
  ): void {
    this.stmt.addPart.run({ scanId, folder: p.folder, priority: p.priority, source: p.source, event: p.event, title: p.title ?? null, ids: p.ids, updateType: p.updateType, upgrade: p.upgrade, requests: p.requests, firstAt: p.firstAt });
  }

  private addFiles(id: number, files: readonly string[]): void {
    const fresh: string[] = [];
    for (const f of files) {
      const key = `${id}\0${f}`;
      if (this.filesAdded.has(key)) continue;
      this.filesAdded.add(key);
      fresh.push(f);
    }
    if (fresh.length === 1) this.stmt.addFile.run(id, fresh[0]);
    // Thousands of files (a season pack) in one statement: SQLite walks the list, not thousands of calls.
    else if (fresh.length > 1) this.stmt.addFiles.run(id, JSON.stringify(fresh));
  }
}

function fromRow(row: ScanRow): PendingState {
  return {
    id: row.id,
    folder: row.folder,
    requests: row.requests,
    priority: row.priority,
    firstAt: row.first_at,
    lastAt: row.last_at,
    dueAt: row.due_at,
    updateType: row.update_type as UpdateType,
    upgrade: row.upgrade,
    title: row.title,
    ids: row.ids,
    event: row.event,
    source: row.source,
    removal: row.removal,
    holdUntil: row.hold_until,
    dirty: false,
  };
}
