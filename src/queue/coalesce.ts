import type { UpdateType } from '../core/scan.ts';
import { longestPrefix, relativeTo } from '../paths/mapping.ts';

/**
 * SERVER_SCAN_DELAY is a debounce: the scan is due `delay` after the latest request, but never later
 * than `max` after the first one (0 = no cap: plex_autoscan's behaviour, where a folder that keeps
 * getting requests is never scanned).
 */
export function dueAt(firstAt: number, lastAt: number, delayMs: number, maxMs: number): number {
  const debounced = lastAt + delayMs;
  if (maxMs <= 0) return debounced;
  return Math.min(debounced, firstAt + maxMs);
}

/** Two requests for one scan: a delete and a create of the same folder amount to a modification. */
export function mergeUpdateType(a: UpdateType, b: UpdateType): UpdateType {
  return a === b ? a : 'Modified';
}

/** Range [low, high) of folder names strictly below `folder` (descendants), for an indexed query. */
export function descendantRange(folder: string): [string, string] {
  const sep = folder.startsWith('/') || !folder.includes('\\') ? '/' : '\\';
  const prefix = folder.endsWith(sep) ? folder : folder + sep;
  const high = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  return [prefix, high];
}

/** Retry delay after `attempts` failed attempts: exponential from base, capped. */
export function backoffMs(attempts: number, baseMs: number, capMs: number): number {
  const exp = Math.min(30, Math.max(0, attempts - 1));
  return Math.min(capMs, baseMs * 2 ** exp);
}

/**
 * Whether one scan of `upper` standing for `lower` (a folder at or below it) would cross a library root:
 * true when the deepest known root holding `lower` lies strictly below `upper`. A media server scans one
 * library at a time, so a scan above a root does not cover what is in it. Unknown roots cross nothing.
 */
export function crossesRoot(upper: string, lower: string, roots: readonly string[] | undefined): boolean {
  if (!roots?.length) return false;
  const root = longestPrefix(lower, roots, (r) => r);
  if (root === undefined) return false;
  const rest = relativeTo(root, upper);
  return rest !== undefined && rest !== '';
}
