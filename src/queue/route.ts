import type { Config } from '../config/schema.ts';
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
 * The one place a relay's routing table is built, from the one target model (Config.targets, built at load): every
 * named target with its REWRITE and INCLUDE/EXCLUDE. `targets`: the targets a relay actually runs (the server), in
 * their order; one without a config entry (built by a test) takes every path. Every intake (the server, the
 * plex_autoscan, autoscan and autopulse takeovers) routes through a table built here.
 */
export function relayRoutes(config: Pick<Config, 'targets'>, targets?: ReadonlyArray<{ name: string; toTargetPath?: (path: string) => string }>): RouteEntry[] {
  return targets ? relayRouteTable(targets, config.targets) : routeTable(config.targets);
}

/** A table of targets that take every path (tests, and a store used without a config). */
export function openRoutes(names: readonly string[]): RouteEntry[] {
  return names.map((name) => ({ name, include: [], exclude: [] }));
}

/**
 * A relay's table on a shared queue: its own targets, then every target name the other relays sharing the queue
 * have (SharedQueue.peerTargets) and it has not. Those take every path: this relay cannot know their INCLUDE/EXCLUDE
 * (docs/postgres.md). A name it has goes by its own entry, for every relay's server of that name. A relay with no
 * target (a feeder) keeps its empty table: its scans reach every relay's servers (routeRequest).
 */
export function withPeerTargets(table: readonly RouteEntry[], peers: readonly string[]): readonly RouteEntry[] {
  if (!table.length) return table;
  const own = new Set(table.map((t) => t.name));
  const more = [...new Set(peers)].filter((name) => !own.has(name));
  return more.length ? [...table, ...openRoutes(more)] : table;
}

/**
 * The routing table for the targets a relay runs: each one's INCLUDE/EXCLUDE from its entry, matched on its own
 * path (the target's toTargetPath, its REWRITE). A target without an entry (built by a test) takes every path.
 */
function relayRouteTable(
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
 * absent: all) that take one of its paths (its files when it names any, else its folder), as the explicit list
 * of their names ([]: no target takes it). A scan never stores "every target" to be decided later (issue 49).
 *
 * The one exception is a relay with no target at all (a feeder on a shared queue): it has nothing to route by,
 * and its scans go to whatever the relays with targets have (undefined, stored as NULL).
 */
export function routeRequest(table: readonly RouteEntry[], req: Pick<NormalizedScanRequest, 'folder' | 'files' | 'targets'>): string[] | undefined {
  if (!table.length) return req.targets ? [...req.targets].sort() : undefined;
  const allowed = req.targets ? table.filter((t) => req.targets!.includes(t.name)) : table;
  const paths = req.files.length ? req.files : [req.folder];
  return allowed
    .filter((t) => paths.some((p) => takesPath(t, p)))
    .map((t) => t.name)
    .sort();
}

/** A route as a scan row stores it (scans.targets): names joined by ","; NULL only from a relay without targets. */
export function routeKey(route: readonly string[] | undefined): string | null {
  return route === undefined ? null : [...route].sort().join(',');
}

/** The names a stored route lists (null: every target). */
export function routeNames(key: string | null | undefined): string[] | undefined {
  return key === null || key === undefined ? undefined : key.split(',').filter(Boolean);
}
