import { asciiLower } from '../../paths/ascii-case.ts';
import { relativeTo } from '../../paths/mapping.ts';
import type { ItemDto, MediaBrowserClient } from './client.ts';

/** A library as `GET /Library/VirtualFolders` names it: its own item (a config-folder path) and its media folders. */
export interface Library {
  id: string;
  name: string;
  locations: string[];
}

/** An item the walk found: a library's own item (`path` is then the media folder that holds the change), or an item. */
export interface FoundItem {
  id: string;
  path: string;
  library: Library;
  /** The library's own item rather than an item inside it. */
  root: boolean;
}

/** Whether `path` is `base` or below it. */
export function within(path: string, base: string): boolean {
  return relativeTo(path, base) !== undefined;
}

/** Listings kept (one per parent item, least recently used dropped first) and for how long. */
const MAX_LISTINGS = 200;
const LISTING_TTL_MS = 10 * 60_000;
const LIBRARIES_TTL_MS = 5 * 60_000;

interface Listing {
  at: number;
  /** The parent's own path (a library: the location walked from). */
  path: string;
  /** Only what the walk needs: a large library's top listing is thousands of entries. */
  children: Array<{ id: string; path: string; folder: boolean }>;
}

/**
 * Finds the deepest existing item whose Path is a folder or one of its ancestors, walking down from the libraries with
 * one `GET /Items?ParentId=...&Fields=Path` per level and never a recursive listing (issue 50 item 3). A library's own
 * item has a path in the server's config folder, so the walk starts from `GET /Library/VirtualFolders`, whose
 * Locations say which library holds a path. What it learns is cached: the next scan of the same show lists nothing
 * until a level it needs is missing from the cache (a new season), and then that level only.
 */
export class ItemTree {
  private libraries: { at: number; list: Library[] } | undefined;
  private readonly listings = new Map<string, Listing>();
  private readonly inFlight = new Map<string, Promise<Listing>>();
  /** Listings made (for tests and the bench: one per level at most). */
  listed = 0;

  constructor(
    private readonly client: Pick<MediaBrowserClient, 'libraries' | 'children'>,
    private readonly now: () => number = Date.now,
    /** PATH_MATCH case_insensitive: the server's paths hold a path whatever its ASCII case (emby.rs:167-170). */
    private readonly ignoreCase = false,
  ) {}

  /** `within`, ignoring ASCII case when the server does. */
  private holds(path: string, base: string): boolean {
    return this.ignoreCase ? within(asciiLower(path), asciiLower(base)) : within(path, base);
  }

  /** `path` names `base` itself, trailing separators aside (as `holds` compares). */
  private same(path: string, base: string): boolean {
    return this.ignoreCase ? relativeTo(asciiLower(path), asciiLower(base)) === '' : relativeTo(path, base) === '';
  }

  /** The library whose media folder holds `path` (the deepest such folder), or undefined. */
  async libraryFor(path: string, fresh = false): Promise<{ library: Library; location: string } | undefined> {
    if (fresh || !this.libraries || this.now() - this.libraries.at > LIBRARIES_TTL_MS) {
      const list = await this.client.libraries();
      this.libraries = { at: this.now(), list };
    }
    let best: { library: Library; location: string } | undefined;
    for (const library of this.libraries.list) {
      for (const location of library.locations) if (this.holds(path, location) && (!best || location.length > best.location.length)) best = { library, location };
    }
    return best;
  }

  /**
   * The deepest existing item at `path` or above it (`strict`: above it only, for a deletion: the item at a deleted path
   * may still be in the database). The library's own item when nothing inside it is an ancestor; undefined when no
   * library holds the path.
   */
  async deepest(path: string, strict = false): Promise<FoundItem | undefined> {
    let lib = await this.libraryFor(path);
    // A library added since the list was read.
    if (!lib) lib = await this.libraryFor(path, true);
    if (!lib) return undefined;
    let found: FoundItem = { id: lib.library.id, path: lib.location, library: lib.library, root: true };
    for (;;) {
      const next = await this.step(found, path, strict);
      if (!next) return found;
      found = { id: next.id, path: next.path, library: lib.library, root: false };
      if (!next.folder || (this.ignoreCase ? asciiLower(next.path) === asciiLower(path) : next.path === path)) return found;
    }
  }

  /** The child of `parent` that is (or holds) `path`, from the cache when it has one, else from one listing. */
  private async step(parent: FoundItem, path: string, strict: boolean): Promise<{ id: string; path: string; folder: boolean } | undefined> {
    const pick = (l: Listing) => {
      let best: Listing['children'][number] | undefined;
      for (const c of l.children) {
        if (!this.holds(path, c.path) || (strict && this.same(path, c.path))) continue;
        if (!best || c.path.length > best.path.length) best = c;
      }
      return best;
    };
    const cached = this.listings.get(parent.id);
    if (cached && this.now() - cached.at <= LISTING_TTL_MS) {
      const hit = pick(cached);
      if (hit) return hit;
    }
    const listing = await this.list(parent);
    return pick(listing);
  }

  /** One listing of a level; scans delivered at the same moment share it instead of each asking. */
  private list(parent: FoundItem): Promise<Listing> {
    const running = this.inFlight.get(parent.id);
    if (running) return running;
    const p = (async () => {
      this.listed++;
      const children = (await this.client.children(parent.id)).flatMap((c: ItemDto) => (c.Path ? [{ id: c.Id, path: c.Path, folder: c.IsFolder !== false }] : []));
      const listing = { at: this.now(), path: parent.path, children };
      this.listings.delete(parent.id);
      this.listings.set(parent.id, listing);
      while (this.listings.size > MAX_LISTINGS) this.listings.delete(this.listings.keys().next().value!);
      return listing;
    })().finally(() => this.inFlight.delete(parent.id));
    this.inFlight.set(parent.id, p);
    return p;
  }

  /** Forgets every listing and the library list (an item the cache named is gone). */
  forgetAll(): void {
    this.listings.clear();
    this.libraries = undefined;
  }

  /** Forgets what is known at and below `path` (it was refreshed: items may have come or gone). */
  forget(path: string): void {
    // A refresh changes what is below the item, never its parent's listing.
    for (const [id, l] of this.listings) if (this.holds(l.path, path)) this.listings.delete(id);
  }
}
