import type Database from 'better-sqlite3';
import { openSqlite } from '../../db/sqlite.ts';
import { openReadOnly } from '../../db/read-only.ts';
import type { Awaitable, QueueMetaStore } from '../../queue/backend.ts';

/**
 * The drive path cache (`--cachefile`): what plex_autoscan keeps in its sqlitedict cache, per file id
 * (name, parents, md5Checksum, full paths), plus the MIME type and shared drive names. A change is
 * compared with the cached item to tell new / modified / renamed / moved files apart.
 */
export interface CachedItem {
  id: string;
  name: string;
  parents: string[];
  md5: string | null;
  mimeType: string | null;
  paths: string[];
}

export const FOLDER_MIME = 'application/vnd.google-apps.folder';

export function isFolder(mimeType: string | null | undefined): boolean {
  return !!mimeType && mimeType.includes('vnd.google-apps.folder');
}

/**
 * Read/write access to cached items: the database itself, or a staged overlay on top of it. SQLite answers
 * at once, PostgreSQL (a shared queue) with promises; the change logic awaits both.
 */
export interface ItemStore {
  get(id: string): Awaitable<CachedItem | undefined>;
  put(item: CachedItem): Awaitable<void>;
  remove(id: string): Awaitable<boolean>;
  /** Ids of items that list `parentId` among their parents. */
  children(parentId: string): Awaitable<string[]>;
  /** The cached items among `ids`, in one look-up (a store a round trip away offers it). */
  getMany?(ids: readonly string[]): Awaitable<CachedItem[]>;
}

export type CacheOp = { op: 'put'; item: CachedItem } | { op: 'remove'; id: string };

/** The whole drive cache: the SQLite file (DriveCache) or the shared queue's database (PgDriveCache). */
export interface DriveCacheStore extends ItemStore {
  /** Where the cache is, for logs (a file, or a URL without its password). */
  readonly location: string;
  /** Applies staged writes in one transaction (replaying them again is harmless). */
  apply(ops: readonly CacheOp[]): Awaitable<void>;
  /**
   * Applies a page's cache writes that were committed with its scans under meta key `key` (value `value`), and
   * clears the key. False when the key no longer holds `value` (another poller applied or replaced it first).
   */
  applyPending(key: string, value: string, meta: QueueMetaStore): Awaitable<boolean>;
  count(): Awaitable<number>;
  driveName(id: string): Awaitable<string | undefined>;
  setDriveName(id: string, name: string): Awaitable<void>;
  close(): Awaitable<void>;
}

interface ItemRow {
  id: string;
  name: string;
  parents: string;
  md5: string | null;
  mime: string | null;
  paths: string;
}

/** A row of the cache file's items table as an item (its lists are stored as JSON). */
function itemOf(row: ItemRow): CachedItem {
  return { id: row.id, name: row.name, parents: JSON.parse(row.parents), md5: row.md5, mimeType: row.mime, paths: JSON.parse(row.paths) };
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, name TEXT NOT NULL, parents TEXT NOT NULL, md5 TEXT, mime TEXT, paths TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS item_parents (parent TEXT NOT NULL, child TEXT NOT NULL, PRIMARY KEY (parent, child));
CREATE TABLE IF NOT EXISTS drives (id TEXT PRIMARY KEY, name TEXT NOT NULL);
`;

export class DriveCache implements DriveCacheStore {
  readonly db: Database.Database;
  readonly location: string;
  private readonly stmt;

  constructor(file: string) {
    this.location = file;
    // Private (0600): the cache names every file of the drive.
    this.db = openSqlite(file, { private: true });
    this.db.exec(SCHEMA);
    const db = this.db;
    this.stmt = {
      get: db.prepare<[string], ItemRow>(`SELECT * FROM items WHERE id = ?`),
      put: db.prepare(`INSERT OR REPLACE INTO items (id, name, parents, md5, mime, paths) VALUES (@id, @name, @parents, @md5, @mime, @paths)`),
      remove: db.prepare(`DELETE FROM items WHERE id = ?`),
      unlink: db.prepare(`DELETE FROM item_parents WHERE child = ?`),
      link: db.prepare(`INSERT OR IGNORE INTO item_parents (parent, child) VALUES (?, ?)`),
      children: db.prepare<[string], { child: string }>(`SELECT child FROM item_parents WHERE parent = ?`),
      count: db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM items`),
      driveName: db.prepare<[string], { name: string }>(`SELECT name FROM drives WHERE id = ?`),
      setDrive: db.prepare(`INSERT OR REPLACE INTO drives (id, name) VALUES (?, ?)`),
    };
  }

  get(id: string): CachedItem | undefined {
    const row = this.stmt.get.get(id);
    if (!row) return undefined;
    return itemOf(row);
  }

  put(item: CachedItem): void {
    this.db.transaction(() => {
      this.stmt.put.run({
        id: item.id,
        name: item.name,
        parents: JSON.stringify(item.parents),
        md5: item.md5,
        mime: item.mimeType,
        paths: JSON.stringify(item.paths),
      });
      this.stmt.unlink.run(item.id);
      for (const p of item.parents) this.stmt.link.run(p, item.id);
    })();
  }

  remove(id: string): boolean {
    return this.db.transaction(() => {
      this.stmt.unlink.run(id);
      return this.stmt.remove.run(id).changes > 0;
    })();
  }

  children(parentId: string): string[] {
    return this.stmt.children.all(parentId).map((r) => r.child);
  }

  /** Applies staged writes in one transaction (replaying them again is harmless). */
  apply(ops: readonly CacheOp[]): void {
    this.db.transaction(() => {
      for (const o of ops) {
        if (o.op === 'put') this.put(o.item);
        else this.remove(o.id);
      }
    })();
  }

  /** One process owns the file: nothing else can have applied the writes, so the key is cleared after them. */
  applyPending(key: string, value: string, meta: QueueMetaStore): Awaitable<boolean> {
    this.apply(JSON.parse(value) as CacheOp[]);
    const cleared = meta.set(key, null);
    return cleared instanceof Promise ? cleared.then(() => true) : true;
  }

  count(): number {
    return this.stmt.count.get()!.n;
  }

  driveName(id: string): string | undefined {
    return this.stmt.driveName.get(id)?.name;
  }

  setDriveName(id: string, name: string): void {
    this.stmt.setDrive.run(id, name);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * The items and shared drive names of a scanrelay cache file, read-only and `size` items at a time (a cache
 * can hold a whole drive). Undefined when the file has no scanrelay cache tables (or only plex_autoscan's).
 */
export function readCacheFile(file: string, size = 2000): { chunks: Iterable<CachedItem[]>; drives: Array<{ id: string; name: string }>; close(): void } | undefined {
  const db = openReadOnly(file, 'the drive cache file');
  const tables = db.prepare<[], { name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('items', 'drives')`).all().map((r) => r.name);
  if (!tables.includes('items')) {
    db.close();
    return undefined;
  }
  const drives = tables.includes('drives') ? db.prepare<[], { id: string; name: string }>(`SELECT id, name FROM drives`).all() : [];
  function* chunks(): Generator<CachedItem[]> {
    let chunk: CachedItem[] = [];
    for (const row of db.prepare<[], ItemRow>(`SELECT * FROM items ORDER BY id`).iterate()) {
      chunk.push(itemOf(row));
      if (chunk.length >= size) {
        yield chunk;
        chunk = [];
      }
    }
    if (chunk.length) yield chunk;
  }
  return { chunks: chunks(), drives, close: () => db.close() };
}

/**
 * Writes staged in memory over a base store, so a poll's cache changes can be committed only after
 * the scans they produced are safely queued (a crash in between must not hide a change next time).
 * Reads of the base are kept for the page too: a parent shared by many changed files is read once.
 */
export class StagedItems implements ItemStore {
  private readonly staged = new Map<string, CachedItem | null>();
  private readonly read = new Map<string, CachedItem | undefined>();

  constructor(private readonly base: ItemStore) {}

  async get(id: string): Promise<CachedItem | undefined> {
    if (this.staged.has(id)) return this.staged.get(id) ?? undefined;
    if (!this.read.has(id)) this.read.set(id, await this.base.get(id));
    return this.read.get(id);
  }

  put(item: CachedItem): void {
    this.staged.set(item.id, item);
  }

  /** Reads the base's items among `ids` at once, where the base can (a page's changed files: one round trip, not 1,000). */
  async prefetch(ids: readonly string[]): Promise<void> {
    if (!this.base.getMany) return;
    const wanted = [...new Set(ids)].filter((id) => !this.read.has(id));
    if (!wanted.length) return;
    for (const id of wanted) this.read.set(id, undefined);
    for (const item of await this.base.getMany(wanted)) this.read.set(item.id, item);
  }

  async remove(id: string): Promise<boolean> {
    const existed = (await this.get(id)) !== undefined;
    this.staged.set(id, null);
    return existed;
  }

  async children(parentId: string): Promise<string[]> {
    const candidates = new Set(await this.base.children(parentId));
    for (const [id, item] of this.staged) if (item?.parents.includes(parentId)) candidates.add(id);
    const out: string[] = [];
    for (const id of candidates) if ((await this.get(id))?.parents.includes(parentId)) out.push(id);
    return out;
  }

  ops(): CacheOp[] {
    return [...this.staged].map(([id, item]) => (item ? { op: 'put', item } : { op: 'remove', id }));
  }
}
