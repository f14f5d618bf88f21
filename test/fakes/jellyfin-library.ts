import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

/**
 * The library model behind the fake Jellyfin/Emby (fakes/jellyfin.ts): items made from a real directory tree, as the
 * server's resolvers make them, and the operations that re-read that tree, each counting the items it touches.
 *
 * What it models, from jellyfin/jellyfin (c3ed1407ca) and d3v1l1989/targeted-scans (0b5cabe):
 * - items and their fields: BaseItemDto's Name, Id, Type, IsFolder, IndexNumber, ParentIndexNumber, SeriesName,
 *   ProductionYear always, Path and ParentId only when Fields names them (Emby.Server.Implementations/Dto/
 *   DtoService.cs:1069-1175, 1128-1137);
 * - a library (VirtualFolderInfo: Name, Locations, CollectionType, ItemId; MediaBrowser.Model/Entities/
 *   VirtualFolderInfo.cs:26-56) has its own item, whose children are the top folders of its Locations;
 * - a refresh of a folder re-reads its whole subtree from disk: new files become items, gone ones are dropped
 *   (MediaBrowser.Providers/Manager/ProviderManager.cs:1208-1232: a CollectionFolder refreshes its physical folders'
 *   children, a Folder validates its children);
 * - Media/Updated refreshes the deepest existing item at or above the path, or its nearest existing parent for a
 *   deleted one (Jellyfin.Api/Controllers/LibraryController.cs:648-659 -> Emby.Server.Implementations/IO/
 *   FileRefresher.cs:130-186), as 10.10 and Emby do; on 10.11 users see the whole library refreshed instead
 *   (jellyfin/jellyfin#16729, #16176; Cloudbox/autoscan#233), which `wholeLibrary` models;
 * - the TargetedScan plugin's ScanPath (jellyfin-plugin/Services/TargetedScanService.cs:117-441): a path gone from
 *   disk removes its item (Removed) or is PathNotFound; an existing item is Refreshed (FullRefresh: its subtree); else
 *   it walks up to the nearest Series/Season/library folder item (ParentNotFound without one), creates the missing
 *   items top down (a movie folder resolves to its Movie and stops there), and queues a Default refresh of the
 *   ancestors between that item and the library (each re-reads its subtree, ProviderManager.cs:1208-1232).
 */

export interface FakeItem {
  Id: string;
  Name: string;
  Type: string;
  Path: string;
  /** The library's ItemId for a top item, else the parent item's Id. */
  ParentId: string;
  IsFolder: boolean;
  IndexNumber?: number;
  ParentIndexNumber?: number;
  SeriesName?: string;
  ProductionYear?: number;
  /** The library's ItemId. */
  library: string;
  /** When the fake made it (ms), never sent. */
  createdAt: number;
}

export interface FakeLibrary {
  Name: string;
  ItemId: string;
  CollectionType: 'tvshows' | 'movies';
  Locations: string[];
  /** False until its first scan: its folders are no items yet (the plugin then finds no parent). */
  scanned: boolean;
}

const VIDEO = new Set(['.mkv', '.mp4', '.avi', '.m4v', '.ts']);
const isVideo = (p: string) => VIDEO.has(extname(p).toLowerCase());
const newId = () => randomBytes(16).toString('hex');

/** "Film (2021)" -> name and year, as Jellyfin's name parser splits a folder name. */
function nameAndYear(name: string): { Name: string; ProductionYear?: number } {
  const m = /^(.*?)\s*\((\d{4})\)\s*$/.exec(name);
  return m ? { Name: m[1]!, ProductionYear: Number(m[2]) } : { Name: name };
}

function listDir(path: string): Array<{ name: string; path: string; dir: boolean }> {
  try {
    return readdirSync(path, { withFileTypes: true })
      .map((d) => ({ name: d.name, path: join(path, d.name), dir: d.isDirectory() }))
      .sort((a, b) => a.name.localeCompare(b.name));
  } catch {
    return [];
  }
}

type Spec = Omit<FakeItem, 'Id' | 'ParentId' | 'library' | 'createdAt'>;

/** What Jellyfin's resolvers make of a path under a parent (the library itself, a Series or a Season). */
function resolve(path: string, dir: boolean, parent: { kind: 'library'; type: FakeLibrary['CollectionType'] } | { kind: 'item'; item: FakeItem }): Spec | undefined {
  const name = basename(path);
  if (parent.kind === 'library') {
    if (parent.type === 'tvshows') return dir ? { Type: 'Series', Path: path, IsFolder: true, ...nameAndYear(name) } : undefined;
    if (!dir) return isVideo(path) ? { Type: 'Movie', Path: path, IsFolder: false, ...nameAndYear(basename(name, extname(name))) } : undefined;
    // A movie folder is the Movie, whose Path is its video file.
    const video = listDir(path).find((e) => !e.dir && isVideo(e.path));
    return video ? { Type: 'Movie', Path: video.path, IsFolder: false, ...nameAndYear(name) } : undefined;
  }
  const p = parent.item;
  if (p.Type === 'Series' && dir) {
    const season = /^season\s*(\d+)$/i.exec(name);
    return season ? { Type: 'Season', Path: path, IsFolder: true, Name: `Season ${Number(season[1])}`, IndexNumber: Number(season[1]), SeriesName: p.Name } : undefined;
  }
  if ((p.Type === 'Series' || p.Type === 'Season') && !dir && isVideo(path)) {
    const m = /S(\d+)E(\d+)(?:\s*-\s*(.+))?$/i.exec(basename(name, extname(name)));
    const title = m?.[3]?.trim() || basename(name, extname(name));
    return {
      Type: 'Episode',
      Path: path,
      IsFolder: false,
      Name: title,
      SeriesName: p.Type === 'Series' ? p.Name : p.SeriesName!,
      ...(m ? { ParentIndexNumber: Number(m[1]), IndexNumber: Number(m[2]) } : p.IndexNumber !== undefined ? { ParentIndexNumber: p.IndexNumber } : {}),
    };
  }
  return undefined;
}

/** Whether `path` is `base` or below it. */
export function under(path: string, base: string): boolean {
  const b = base.replace(/\/+$/, '');
  return path === b || path.startsWith(`${b}/`);
}

export class LibraryModel {
  readonly libraries: FakeLibrary[] = [];
  readonly items = new Map<string, FakeItem>();
  /** Items touched (read from disk, made, dropped) by each call that scans, in order. */
  readonly touches: Array<{ call: string; items: number }> = [];
  /** Items returned by listings (`GET /Items`). */
  listed = 0;

  /** Items touched by every call so far. */
  get touched(): number {
    return this.touches.reduce((n, t) => n + t.items, 0);
  }

  /** How many items the libraries hold (the library items themselves not counted). */
  get size(): number {
    return this.items.size;
  }

  addLibrary(name: string, type: FakeLibrary['CollectionType'], locations: string[], opts: { scan?: boolean } = {}): FakeLibrary {
    const lib: FakeLibrary = { Name: name, ItemId: newId(), CollectionType: type, Locations: locations, scanned: false };
    this.libraries.push(lib);
    // The library's first scan, done before the test begins: not counted.
    if (opts.scan ?? true) this.refreshLibrary(lib);
    return lib;
  }

  libraryOf(path: string): FakeLibrary | undefined {
    return this.libraries.find((l) => l.Locations.some((loc) => under(path, loc)));
  }

  libraryById(id: string): FakeLibrary | undefined {
    return this.libraries.find((l) => l.ItemId === id);
  }

  children(parentId: string): FakeItem[] {
    return [...this.items.values()].filter((i) => i.ParentId === parentId);
  }

  descendants(parentId: string): FakeItem[] {
    const out: FakeItem[] = [];
    for (const c of this.children(parentId)) out.push(c, ...(c.IsFolder ? this.descendants(c.Id) : []));
    return out;
  }

  byPath(path: string): FakeItem | undefined {
    for (const i of this.items.values()) if (i.Path === path) return i;
    return undefined;
  }

  /** The deepest item at or above `path`: FindByPath up the parents (FileRefresher.cs:163-171). */
  deepestAt(path: string): FakeItem | FakeLibrary | undefined {
    for (let p = path; p && p !== '/' && p !== '.'; p = dirname(p)) {
      const item = this.byPath(p);
      if (item) return item;
      const lib = this.libraries.find((l) => l.scanned && l.Locations.includes(p));
      if (lib) return lib;
    }
    return undefined;
  }

  /** Re-reads a library from disk (every item in it is touched). Returns the count. */
  refreshLibrary(lib: FakeLibrary): number {
    lib.scanned = true;
    let n = 0;
    const want = new Map<string, Spec>();
    for (const loc of lib.Locations) {
      for (const e of listDir(loc)) {
        const spec = resolve(e.path, e.dir, { kind: 'library', type: lib.CollectionType });
        if (spec) want.set(e.dir && spec.Path !== e.path ? e.path : spec.Path, spec);
      }
    }
    n += this.reconcileChildren(lib.ItemId, lib.ItemId, [...want.values()]);
    return n;
  }

  /** Re-reads an item and its subtree from disk; an item whose path is gone is dropped. Returns the items touched. */
  refreshItem(item: FakeItem): number {
    if (!existsSync(item.Path)) return this.drop(item);
    if (!item.IsFolder) return 1;
    const want = listDir(item.Path).flatMap((e) => resolve(e.path, e.dir, { kind: 'item', item }) ?? []);
    return 1 + this.reconcileChildren(item.Id, item.library, want);
  }

  private reconcileChildren(parentId: string, library: string, want: Spec[]): number {
    let n = 0;
    const have = this.children(parentId);
    for (const old of have) if (!want.some((w) => w.Path === old.Path)) n += this.drop(old);
    for (const spec of want) {
      let item = have.find((h) => h.Path === spec.Path);
      if (!item) item = this.create(spec, parentId, library);
      n += this.refreshItem(item);
    }
    return n;
  }

  create(spec: Spec, parentId: string, library: string): FakeItem {
    const item: FakeItem = { Id: newId(), ParentId: parentId, library, createdAt: Date.now(), ...spec };
    this.items.set(item.Id, item);
    return item;
  }

  /** Drops an item and everything below it (each counted). */
  drop(item: FakeItem): number {
    let n = 0;
    for (const c of this.children(item.Id)) n += this.drop(c);
    this.items.delete(item.Id);
    return n + 1;
  }

  /**
   * The plugin's ScanPathAsync (TargetedScanService.cs:117-239, CreateItemsAsync 269-441), for one path: its status
   * and item, the items it touched at once, and the refreshes it queued (ids of items or libraries).
   */
  pluginScan(path: string): { status: string; item?: FakeItem; touched: number; queued: string[] } {
    if (!existsSync(path)) {
      const stale = this.byPath(path);
      if (stale) return { status: 'Removed', item: stale, touched: this.drop(stale), queued: [] };
      return { status: 'PathNotFound', touched: 0, queued: [] };
    }
    const existing = this.byPath(path);
    if (existing) return { status: 'Refreshed', item: existing, touched: 0, queued: [existing.Id] };
    // Walk up to the nearest known Series, Season or library folder (WalkUpToAncestor, 51-109).
    const missing = [path];
    let ancestor: FakeItem | FakeLibrary | undefined;
    for (let p = dirname(path); p && p !== '/' && p !== '.'; p = dirname(p)) {
      const found = this.byPath(p);
      if (found?.IsFolder) {
        ancestor = found;
        break;
      }
      const lib = this.libraries.find((l) => l.scanned && l.Locations.includes(p));
      if (lib) {
        ancestor = lib;
        break;
      }
      missing.push(p);
    }
    if (!ancestor) return { status: 'ParentNotFound', touched: 0, queued: [] };
    missing.reverse();
    let parent = ancestor;
    let last: FakeItem | undefined;
    let touched = 0;
    for (const p of missing) {
      const lib = 'ItemId' in parent ? parent : undefined;
      const spec = resolve(p, statSync(p).isDirectory(), lib ? { kind: 'library', type: lib.CollectionType } : { kind: 'item', item: parent as FakeItem });
      if (!spec) return { status: 'Failed', touched, queued: [] };
      const already = this.byPath(spec.Path);
      last = already ?? this.create(spec, lib ? lib.ItemId : (parent as FakeItem).Id, lib ? lib.ItemId : (parent as FakeItem).library);
      if (!already) touched++;
      if (!last.IsFolder) break;
      parent = last;
    }
    // The new item's FullRefresh, then the ancestors' Default refreshes up to (not including) the library (374-433).
    const queued = [last!.Id];
    let a: FakeItem | undefined = 'ItemId' in ancestor ? undefined : ancestor;
    for (; a; a = this.items.get(a.ParentId)) queued.push(a.Id);
    return { status: 'Created', item: last!, touched, queued };
  }
}

/**
 * A media tree on disk for the fake's libraries: `shows` series of `seasons` seasons of `episodes` episodes under
 * `<root>/tv`, and `movies` movie folders under `<root>/movies`. Names as Sonarr and Radarr write them.
 */
export function writeMediaTree(root: string, size: { shows: number; seasons: number; episodes: number; movies: number }): { tv: string; movies: string } {
  const tv = join(root, 'tv');
  const movies = join(root, 'movies');
  mkdirSync(tv, { recursive: true });
  mkdirSync(movies, { recursive: true });
  for (let s = 1; s <= size.shows; s++) {
    for (let n = 1; n <= size.seasons; n++) {
      const season = join(tv, showName(s), `Season ${pad(n)}`);
      mkdirSync(season, { recursive: true });
      for (let e = 1; e <= size.episodes; e++) writeFileSync(join(season, episodeName(s, n, e)), '');
    }
  }
  for (let m = 1; m <= size.movies; m++) {
    const dir = join(movies, movieName(m));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${movieName(m)}.mkv`), '');
  }
  return { tv, movies };
}

const pad = (n: number) => String(n).padStart(2, '0');
export const showName = (s: number) => `Show ${String(s).padStart(3, '0')}`;
export const episodeName = (s: number, season: number, e: number, title = `Episode ${e}`) => `${showName(s)} - S${pad(season)}E${pad(e)} - ${title}.mkv`;
export const movieName = (m: number) => `Film ${String(m).padStart(4, '0')} (${2000 + (m % 20)})`;
