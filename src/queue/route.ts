import type { TargetConfig } from '../config/targets.ts';
import type { NormalizedScanRequest } from '../core/scan.ts';
import { compilePattern, leftOutByPatterns, type LeftOut, type Pattern } from '../paths/pattern.ts';
import { placeRewriter, type PathRewriter } from '../paths/rewrite.ts';

/** One target as routing sees it: its name, its rewrite and its INCLUDE/EXCLUDE, compiled once. */
export interface RouteEntry {
  name: string;
  rewrite?: PathRewriter;
  include: Pattern[];
  exclude: Pattern[];
}

/** The routing table of a config's named targets (config/named-targets.ts), in the map's order. */
export function routeTable(targets: ReadonlyMap<string, Pick<TargetConfig, 'REWRITE' | 'INCLUDE' | 'EXCLUDE'> & { REWRITE_MODE?: 'first' | 'all' }>): RouteEntry[] {
  return [...targets].map(([name, t]) => ({
    name,
    rewrite: placeRewriter(t.REWRITE, t.REWRITE_MODE),
    include: t.INCLUDE.map(compilePattern),
    exclude: t.EXCLUDE.map(compilePattern),
  }));
}

/**
 * The routing table for the targets a relay runs: each one's INCLUDE/EXCLUDE from its entry, matched on its own
 * path (the target's toTargetPath, its REWRITE). A target without an entry (built by a test) takes every path.
 */
export function relayRouteTable(
  targets: ReadonlyArray<{ name: string; toTargetPath?: (path: string) => string }>,
  entries: ReadonlyMap<string, Pick<TargetConfig, 'INCLUDE' | 'EXCLUDE'>>,
): RouteEntry[] {
  return targets.map((t) => {
    const entry = entries.get(t.name);
    return {
      name: t.name,
      ...(t.toTargetPath ? { rewrite: t.toTargetPath } : {}),
      include: (entry?.INCLUDE ?? []).map(compilePattern),
      exclude: (entry?.EXCLUDE ?? []).map(compilePattern),
    };
  });
}

/**
 * Why a target does not take a path, as the target names it (after its own REWRITE); undefined: it takes it.
 * Patterns match anywhere, as autoscan's and the watcher's.
 */
export function leftOutBy(entry: RouteEntry, relayPath: string): LeftOut | undefined {
  return leftOutByPatterns(entry.include, entry.exclude, entry.rewrite ? entry.rewrite(relayPath) : relayPath);
}

/** Whether a target takes a path (leftOutBy finds nothing against it). */
export function takesPath(entry: RouteEntry, relayPath: string): boolean {
  return leftOutBy(entry, relayPath) === undefined;
}

/**
 * Where one request goes, decided once when it is queued (issue 39): the targets its trigger allows (`targets`;
 * absent: all) that take one of its paths (its files when it names any, else its folder). undefined: every target,
 * unrestricted (nothing was narrowed, so the scan coalesces with any other and, on a shared queue, goes to every
 * relay's servers, as before targets had names). [] : no target takes it.
 */
export function routeRequest(table: readonly RouteEntry[], req: Pick<NormalizedScanRequest, 'folder' | 'files' | 'targets'>): string[] | undefined {
  const allowed = req.targets ? table.filter((t) => req.targets!.includes(t.name)) : table;
  const paths = req.files.length ? req.files : [req.folder];
  const taken = allowed.filter((t) => paths.some((p) => takesPath(t, p))).map((t) => t.name);
  if (taken.length === table.length && table.every((t) => taken.includes(t.name))) return undefined;
  return taken.sort();
}

/** A route as a scan row stores it (scans.targets): names joined by ",", NULL for every target. */
export function routeKey(route: readonly string[] | undefined): string | null {
  return route === undefined ? null : [...route].sort().join(',');
}

/** The names a stored route lists (null: every target). */
export function routeNames(key: string | null | undefined): string[] | undefined {
  return key === null || key === undefined ? undefined : key.split(',').filter(Boolean);
}
