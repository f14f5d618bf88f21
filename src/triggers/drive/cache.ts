import type Database from 'better-sqlite3';
import { openSqlite } from '../../db/sqlite.ts';

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

/** Read/write access to cached items: the database itself, or a staged overlay on top of it. */
export interface ItemStore {
  get(id: string): CachedItem | undefined;
  put(item: CachedItem): void;
  remove(id: string): boolean;
  /** Ids of items that list `parentId` among their parents. */
  children(parentId: string): string[];
}

export type CacheOp = { op: 'put'; item: CachedItem } | { op: 'remove'; id: string };

interface ItemRow {
  id: string;
  name: string;
  parents: string;
  md5: string | null;
  mime: string | null;
  paths: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, name TEXT NOT NULL, parents TEXT NOT NULL, md5 TEXT, mime TEXT, paths TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS item_parents (parent TEXT NOT NULL, child TEXT NOT NULL, PRIMARY KEY (parent, child));
CREATE TABLE IF NOT EXISTS drives (id TEXT PRIMARY KEY, name TEXT NOT NULL);
`;

export class DriveCache implements ItemStore {
  readonly db: Database.Database;
  private readonly stmt;

  constructor(file: string) {
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
    return { id: row.id, name: row.name, parents: JSON.parse(row.parents), md5: row.md5, mimeType: row.mime, paths: JSON.parse(row.paths) };
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
 * Writes staged in memory over a base store, so a poll's cache changes can be committed only after
 * the scans they produced are safely queued (a crash in between must not hide a change next time).
 */
export class StagedItems implements ItemStore {
  private readonly staged = new Map<string, CachedItem | null>();

  constructor(private readonly base: ItemStore) {}

  get(id: string): CachedItem | undefined {
    if (this.staged.has(id)) return this.staged.get(id) ?? undefined;
    return this.base.get(id);
  }

  put(item: CachedItem): void {
    this.staged.set(item.id, item);
  }

  remove(id: string): boolean {
    const existed = this.get(id) !== undefined;
    this.staged.set(id, null);
    return existed;
  }

  children(parentId: string): string[] {
    const candidates = new Set(this.base.children(parentId));
    for (const [id, item] of this.staged) if (item?.parents.includes(parentId)) candidates.add(id);
    return [...candidates].filter((id) => this.get(id)?.parents.includes(parentId));
  }

  ops(): CacheOp[] {
    return [...this.staged].map(([id, item]) => (item ? { op: 'put', item } : { op: 'remove', id }));
  }
}
