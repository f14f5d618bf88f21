import { dirname, sep } from 'node:path';
import type { UpdateType } from '../../core/scan.ts';
import type { WatchConfig } from '../../config/schema.ts';
import type { FolderProbe } from '../../paths/folder.ts';
import { looksLikeFile } from '../../paths/folder.ts';
import type { ScanPath } from '../../intake/intent.ts';
import { compilePattern, leftOutByPatterns, type Pattern } from '../../paths/pattern.ts';

/** The file system events the watcher reacts to (chokidar's names). */
export type WatchEventName = 'add' | 'change' | 'unlink' | 'addDir' | 'unlinkDir';

export interface WatchFilter {
  include: Pattern[];
  exclude: Pattern[];
}

/** The patterns run on RE2 (paths/pattern.ts), like every pattern a user writes. */
export function watchFilter(config: Pick<WatchConfig, 'INCLUDE' | 'EXCLUDE'>): WatchFilter {
  return { include: config.INCLUDE.map(compilePattern), exclude: config.EXCLUDE.map(compilePattern) };
}

/**
 * autoscan's filter (autoscan.go:88-144, NewFilterer), for a WATCH.PATHS entry's own INCLUDE/EXCLUDE: an
 * exclude match drops the path; without includes anything else passes; with includes one must match.
 */
export function allowedByEntry(path: string, filter: WatchFilter): boolean {
  return leftOutByPatterns(filter.include, filter.exclude, path) === undefined;
}

/**
 * EXCLUDE applies to files and folders alike (an excluded folder is not even watched). A folder is also
 * tried with a trailing slash, so `/Sample/` excludes the folder itself and not only what is in it.
 */
export function excluded(path: string, filter: WatchFilter, isFolder = false): boolean {
  return filter.exclude.some((r) => r.test(path) || (isFolder && r.test(`${path}/`)));
}

/** Names downloaders give files still being written; the finished file gets its own event. */
const UNFINISHED = /\.(part|partial|!qb|tmp)$/i;

/**
 * A file worth a scan: not excluded, and matching an INCLUDE expression; without INCLUDE, any file with a
 * media, subtitle or metadata extension (so partial downloads, lock files and the like are left alone).
 */
export function wantedFile(path: string, filter: WatchFilter): boolean {
  if (excluded(path, filter)) return false;
  return filter.include.length ? filter.include.some((r) => r.test(path)) : looksLikeFile(path) && !UNFINISHED.test(path);
}

export interface WatchScan {
  path: ScanPath;
  updateType: UpdateType;
}

/**
 * What one event scans, following the webhooks' rules: a new or changed file scans its folder; a deleted
 * file scans its folder, or when that is gone too, the nearest folder above it that still exists; a
 * deleted folder scans the nearest existing folder above it. A rename arrives as a delete of the old
 * name and an add of the new one, so both folders are scanned. Never climbs above the watched root.
 */
export function scanForEvent(event: WatchEventName, path: string, root: string, filter: WatchFilter, probe: FolderProbe): WatchScan | undefined {
  switch (event) {
    case 'add':
    case 'change':
      return wantedFile(path, filter) ? { path: { path, kind: 'file' }, updateType: event === 'add' ? 'Created' : 'Modified' } : undefined;
    case 'unlink':
      return wantedFile(path, filter) ? { path: { path: nearestExisting(dirname(path), root, probe), kind: 'folder' }, updateType: 'Deleted' } : undefined;
    case 'unlinkDir':
      if (excluded(path, filter, true) || path === root) return undefined;
      return { path: { path: nearestExisting(dirname(path), root, probe), kind: 'folder' }, updateType: 'Deleted' };
    case 'addDir':
      // The files inside arrive as their own `add` events; an empty folder has nothing to scan.
      return undefined;
  }
}

function nearestExisting(folder: string, root: string, probe: FolderProbe): string {
  let at = folder;
  while (at !== root && inside(at, root) && probe(at) !== 'folder') {
    const up = dirname(at);
    if (up === at) break;
    at = up;
  }
  return inside(at, root) ? at : root;
}

function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}
