import type { RewriteRule } from './rewrite.ts';

/**
 * Pairing a media manager's root folders with the media servers' library locations (`scanrelay setup`,
 * docs/setup.md). Pure: the callers read the folders and items over HTTP and hand them in.
 */

/** One folder of one library on one media server. */
export interface LibraryLocation {
  /** The server's name as setup calls it: `plex`, `jellyfin`, `emby`. */
  server: string;
  /** The library's id on that server (Plex's section key, Jellyfin's ItemId). */
  libraryId: string;
  library: string;
  path: string;
}

export type Pairing =
  | { root: string; status: 'paired'; location: LibraryLocation; by: 'name' | 'items' | 'answer' }
  | { root: string; status: 'unmatched' }
  | { root: string; status: 'ambiguous'; candidates: LibraryLocation[] };

/** A path's folder names, without empty ones; Windows separators count as separators too. */
export function segments(path: string): string[] {
  return path.split(/[\\/]+/).filter(Boolean);
}

/** How many trailing folder names two paths share, compared case-insensitively (`/tv` and `/data/TV`: 1). */
export function commonTail(a: string, b: string): number {
  const x = segments(a).map((s) => s.toLowerCase());
  const y = segments(b).map((s) => s.toLowerCase());
  let n = 0;
  while (n < x.length && n < y.length && x[x.length - 1 - n] === y[y.length - 1 - n]) n++;
  return n;
}

/**
 * The locations that best share a root's trailing folder names, one server at a time: the longest common tail
 * wins; several libraries at the same length are all returned (ambiguous). A tail of zero is no match.
 */
export function bestByName(root: string, locations: readonly LibraryLocation[]): LibraryLocation[] {
  let best = 0;
  let out: LibraryLocation[] = [];
  for (const l of locations) {
    const n = commonTail(root, l.path);
    if (n === 0 || n < best) continue;
    if (n > best) {
      best = n;
      out = [];
    }
    out.push(l);
  }
  return out;
}

/**
 * Among candidate locations, the one that holds the manager's items: each item folder's name (`Show (2020)`) is
 * looked for among the server's item paths under each location. The location with the most hits wins; a tie
 * (or no hit) decides nothing.
 */
export function bestByItems(itemFolders: readonly string[], candidates: readonly LibraryLocation[], serverPaths: ReadonlyMap<LibraryLocation, readonly string[]>): LibraryLocation | undefined {
  const names = new Set(itemFolders.map((f) => segments(f).pop()?.toLowerCase()).filter((n): n is string => !!n));
  const scored = candidates.map((c) => {
    const base = segments(c.path).length;
    const hits = new Set<string>();
    for (const p of serverPaths.get(c) ?? []) {
      if (!isInside(p, c.path)) continue;
      const first = segments(p)[base]?.toLowerCase();
      if (first && names.has(first)) hits.add(first);
    }
    return { c, n: hits.size };
  });
  scored.sort((a, b) => b.n - a.n);
  const [top, next] = scored;
  if (!top || top.n === 0 || (next && next.n === top.n)) return undefined;
  return top.c;
}

/** Whether `path` is `folder` or lies below it (whole folder names, case-sensitive as the servers' paths are). */
export function isInside(path: string, folder: string): boolean {
  const f = folder.replace(/[\\/]+$/, '');
  return path === f || path.startsWith(`${f}/`) || path.startsWith(`${f}\\`);
}

/** The first pass: by folder names alone. Ambiguous roots go on to the items (bestByItems), then to the user. */
export function pairByName(roots: readonly string[], locations: readonly LibraryLocation[]): Pairing[] {
  return roots.map((root) => {
    const best = bestByName(root, locations);
    if (best.length === 0) return { root, status: 'unmatched' };
    // The same library listed once per location: two locations of one library are one claim.
    const libraries = new Set(best.map((l) => `${l.server}\u0000${l.libraryId}`));
    if (best.length === 1 || libraries.size === 1) return { root, status: 'paired', location: best[0]!, by: 'name' };
    return { root, status: 'ambiguous', candidates: best };
  });
}

/** RE2 text matching `s` literally. */
export function escapeRegex(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

/** A Go template producing `s` literally ("$" doubled). */
function escapeTemplate(s: string): string {
  return s.replace(/\$/g, '$$$$');
}

/**
 * The trigger rewrite that takes a manager's root folder to the library location: the root itself and what lies
 * below it (`^/tv(/|$)` -> `/data/media/TV$1`), nothing that merely starts with the same letters (`/tv2`).
 */
export function rewriteFor(root: string, location: string): RewriteRule {
  const from = root.replace(/\/+$/, '') || '/';
  const to = location.replace(/\/+$/, '') || '/';
  return { from: `^${escapeRegex(from)}(/|$)`, to: `${escapeTemplate(to)}\${1}` };
}

/** The rule setup wrote for `root`, recognised on a rerun so it is replaced instead of added twice. */
export function isRuleFor(rule: RewriteRule, root: string): boolean {
  const from = root.replace(/\/+$/, '') || '/';
  return rule.from === `^${escapeRegex(from)}(/|$)`;
}

/** The library location holding `path` (the longest that does), if any. */
export function locationOf(path: string, locations: readonly LibraryLocation[]): LibraryLocation | undefined {
  let best: LibraryLocation | undefined;
  for (const l of locations) if (isInside(path, l.path) && (!best || l.path.length > best.path.length)) best = l;
  return best;
}
