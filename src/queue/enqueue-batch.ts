import type Database from 'better-sqlite3';
import type { NormalizedScanRequest, UpdateType } from '../core/scan.ts';
import { ancestors } from '../paths/mapping.ts';
import { descendantRange, dueAt, mergeUpdateType } from './coalesce.ts';
import type { EnqueueResult, ScanRow, Timing } from './store.ts';

/** The statements one enqueue transaction uses (prepared once by the store). */
export interface EnqueueStatements {
  pendingIn: (n: number) => Database.Statement<string[], ScanRow>;
  pendingBelow: Database.Statement<[string, string], ScanRow>;
  insert: Database.Statement;
  merge: Database.Statement;
  addFile: Database.Statement;
  moveFiles: Database.Statement;
  deleteFiles: Database.Statement;
  deleteScan: Database.Statement;
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
  title: string | null;
  ids: string | null;
  event: string;
  source: string;
  dirty: boolean;
}

/**
 * The body of one enqueue transaction. A burst (a season pack, a flood of manual posts) mostly merges
 * into the same few pending scans, so pending rows are read once, merged in memory and written once
 * when the transaction ends, instead of a lookup and an UPDATE per request.
 *
 * Correct because pending folders never nest (a request below a pending folder merges into it, a new
 * folder absorbs pending folders below it): a request has at most one pending holder, and a holder
 * seen in this transaction is that holder.
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
    const holder = this.holderOf(req.folder);
    if (holder) {
      holder.requests += 1;
      holder.priority = Math.max(holder.priority, req.priority);
      holder.lastAt = this.now;
      holder.dueAt = dueAt(holder.firstAt, this.now, this.timing.delayMs, this.timing.maxMs);
      holder.updateType = mergeUpdateType(holder.updateType, req.updateType);
      holder.title = req.title ?? holder.title;
      holder.ids = ids ?? holder.ids;
      holder.event = req.event;
      holder.source = req.source;
      holder.dirty = true;
      this.addFiles(holder.id, req.files);
      return { id: holder.id, status: 'merged', folder: holder.folder, dueAt: holder.dueAt };
    }
    return this.insert(req, ids);
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
        title: p.title,
        ids: p.ids,
        event: p.event,
        source: p.source,
      });
      p.dirty = false;
    }
  }

  private holderOf(folder: string): PendingState | undefined {
    const candidates = [folder, ...ancestors(folder)];
    for (const c of candidates) {
      const seen = this.pending.get(c);
      if (seen) return seen;
    }
    const row = this.stmt.pendingIn(candidates.length).all(...candidates)[0];
    if (!row) return undefined;
    const state = fromRow(row);
    this.pending.set(state.folder, state);
    return state;
  }

  /** A new pending scan; it takes over pending folders below it (one scan of the parent covers them). */
  private insert(req: NormalizedScanRequest, ids: string | null): EnqueueResult {
    // The rows below are read from the table: write this transaction's merges first.
    this.flush();
    const below = this.stmt.pendingBelow.all(...descendantRange(req.folder));
    let firstAt = this.now;
    let requests = 1;
    let priority = req.priority;
    let updateType: UpdateType = req.updateType;
    for (const d of below) {
      firstAt = Math.min(firstAt, d.first_at);
      requests += d.requests;
      priority = Math.max(priority, d.priority);
      updateType = mergeUpdateType(updateType, d.update_type as UpdateType);
    }
    const due = dueAt(firstAt, this.now, this.timing.delayMs, this.timing.maxMs);
    const state: PendingState = {
      id: 0,
      folder: req.folder,
      requests,
      priority,
      firstAt,
      lastAt: this.now,
      dueAt: due,
      updateType,
      title: req.title ?? null,
      ids,
      event: req.event,
      source: req.source,
      dirty: false,
    };
    const { id: _id, dirty: _dirty, ...columns } = state;
    const info = this.stmt.insert.run(columns);
    state.id = Number(info.lastInsertRowid);
    this.pending.set(state.folder, state);
    this.addFiles(state.id, req.files);
    for (const d of below) {
      this.stmt.moveFiles.run(state.id, d.id);
      this.stmt.deleteFiles.run(d.id);
      this.stmt.deleteScan.run(d.id);
      this.pending.delete(d.folder);
    }
    return { id: state.id, status: below.length ? 'merged' : 'queued', folder: req.folder, dueAt: due };
  }

  private addFiles(id: number, files: readonly string[]): void {
    for (const f of files) {
      const key = `${id}\0${f}`;
      if (this.filesAdded.has(key)) continue;
      this.filesAdded.add(key);
      this.stmt.addFile.run(id, f);
    }
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
    title: row.title,
    ids: row.ids,
    event: row.event,
    source: row.source,
    dirty: false,
  };
}
