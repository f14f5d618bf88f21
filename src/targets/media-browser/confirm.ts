import { setTimeout as sleep } from 'node:timers/promises';
import type { ScannedItem } from '../../core/events.ts';
import { relativeTo } from '../../paths/mapping.ts';
import type { ItemDto } from './client.ts';
import { within } from './item-tree.ts';

/** What a scan should have done to a path: made it an item (a new or changed file, a folder), or taken it away. */
export interface Expectation {
  path: string;
  gone: boolean;
  /** A folder the scan named without files: any item at or below it will do. */
  folder?: boolean;
  /**
   * A folder that already was an item: the ids of its children before the refresh. It is done when a child that is
   * not among them shows up (those are what the scan added).
   */
  known?: ReadonlySet<string>;
}

/** How long the look goes on: waits from `firstMs`, doubling up to `maxWaitMs`, for at most `boundMs` in all. */
export interface LookLimits {
  firstMs: number;
  maxWaitMs: number;
  boundMs: number;
}

/**
 * Jellyfin's queued refresh of a season takes a second or two, a library's a minute or more; the bound is where the
 * relay stops looking and says "completion unknown", as it did before it looked at all.
 */
export const LOOK_LIMITS: LookLimits = { firstMs: 2_000, maxWaitMs: 30_000, boundMs: 10 * 60_000 };

export interface LookResult {
  confirmed: boolean;
  /** The items the scan's paths now are (none for a deletion). */
  items: ItemDto[];
  /** Listings made. */
  listings: number;
}

/**
 * Confirms a scan by looking (issue 50 item 4): lists the refreshed items' subtrees one level at a time until every
 * expected path is an item (or, for a deletion, no longer one), with back-off, up to a bound. Each path keeps the
 * deepest item reached, so a later round lists only the level that was still missing. An API key suffices: it reads
 * `GET /Items?ParentId=` as the walk does (LibraryChanged over the websocket goes only to users' sessions).
 */
export async function lookUntilDone(
  children: (parentId: string) => Promise<ItemDto[]>,
  starts: ReadonlyArray<{ id: string; path: string }>,
  expected: readonly Expectation[],
  signal: AbortSignal,
  limits: LookLimits = LOOK_LIMITS,
  now: () => number = Date.now,
): Promise<LookResult> {
  const began = now();
  let listings = 0;
  // Where each path's walk stands: the deepest item known to hold it, and what was found there.
  const state = expected.map((e) => {
    const start = [...starts].filter((s) => within(e.path, s.path)).sort((a, b) => b.path.length - a.path.length)[0];
    return { e, at: start, done: start === undefined && e.gone, items: [] as ItemDto[] };
  });
  let wait = limits.firstMs;
  for (;;) {
    const round = new Map<string, Promise<ItemDto[]>>();
    const list = (id: string) => {
      let p = round.get(id);
      if (!p) {
        listings++;
        round.set(id, (p = children(id)));
      }
      return p;
    };
    for (const s of state) {
      // Descend while a level holds the next ancestor; stop at the level where the path is not (yet) found.
      while (!s.done && s.at) {
        const kids = await list(s.at.id);
        if (s.e.known && s.at.path === s.e.path) {
          const added = kids.filter((k) => !s.e.known!.has(k.Id));
          if (added.length) {
            s.done = true;
            s.items = added;
          }
          break;
        }
        const exact = kids.find((k) => k.Path === s.e.path);
        if (s.e.gone) {
          if (exact) break;
        } else if (exact) {
          s.done = true;
          s.items = [exact];
          break;
        } else if (s.e.folder) {
          // A movie is an item at its file, inside the folder named.
          const inside = kids.find((k) => k.Path && relativeTo(k.Path, s.e.path) !== undefined);
          if (inside) {
            s.done = true;
            s.items = [inside];
            break;
          }
        }
        const down = kids.filter((k) => k.Path && k.IsFolder !== false && within(s.e.path, k.Path) && (k.Path !== s.e.path || s.e.known)).sort((a, b) => b.Path!.length - a.Path!.length)[0];
        if (down) {
          s.at = { id: down.Id, path: down.Path! };
          continue;
        }
        if (s.e.gone) s.done = true;
        break;
      }
    }
    // A path under none of the refreshed items can never show up by looking there.
    if (!state.some((s) => !s.done && s.at)) break;
    const left = limits.boundMs - (now() - began);
    if (left <= 0 || signal.aborted) break;
    await sleep(Math.min(wait, left), undefined, { signal }).catch(() => undefined);
    if (signal.aborted) break;
    wait = Math.min(wait * 2, limits.maxWaitMs);
  }
  const seen = new Set<string>();
  const items = state.flatMap((s) => s.items.filter((i) => !seen.has(i.Id) && seen.add(i.Id)));
  return { confirmed: state.every((s) => s.done), items, listings };
}

/** Jellyfin's and Emby's item kinds in the event's words, as Plex's are (core/events.ts scannedItemSchema). */
const TYPES: Record<string, string> = { Episode: 'episode', Movie: 'movie', Series: 'show', Season: 'season', Audio: 'track', MusicAlbum: 'album', Book: 'book', AudioBook: 'book', Video: 'video' };

/** An item as a `scanned` event names it: "Show S01E02 — Title", "Film (2021)". */
export function asScannedItem(item: ItemDto): ScannedItem {
  const type = (item.Type && TYPES[item.Type]) ?? item.Type?.toLowerCase() ?? 'item';
  const title = item.Name ?? item.Path?.split(/[/\\]/).pop() ?? `item ${item.Id}`;
  return {
    key: item.Id,
    type,
    title,
    ...(item.ProductionYear != null && type !== 'episode' ? { year: item.ProductionYear } : {}),
    ...(type === 'episode' && item.SeriesName ? { show: item.SeriesName } : {}),
    ...(type === 'episode' && item.ParentIndexNumber != null ? { season: item.ParentIndexNumber } : {}),
    ...(type === 'episode' && item.IndexNumber != null ? { episode: item.IndexNumber } : {}),
  };
}
