import type { UpdateType } from '../core/scan.ts';
import { longestPrefix, relativeTo } from '../paths/mapping.ts';

/**
 * SERVER_SCAN_DELAY is a debounce: the scan is due `delay` after the latest request, but never later
 * than `max` after the first one (0 = no cap: plex_autoscan's behaviour, where a folder that keeps
 * getting requests is never scanned).
 */
export function dueAt(firstAt: number, lastAt: number, delayMs: number, maxMs: number): number {
  return mergedDueAt(-Infinity, firstAt, lastAt, delayMs, maxMs);
}

/**
 * When a pending scan is due once another request joins it: no sooner than it was already due, nor than the new
 * request's own debounce (`now + delayMs`, its trigger's delay), so a scan merged from requests with different
 * delays waits for the latest of them, as autopulse keeps the later can_process of two requests for one path
 * (database/src/conn.rs:311-318). The cap (`maxMs` after the first request) still bounds an endless stream.
 * With one delay for every request this is dueAt(): the earlier due time is never the later.
 */
export function mergedDueAt(pendingDue: number, firstAt: number, now: number, delayMs: number, maxMs: number): number {
  const latest = Math.max(pendingDue, now + delayMs);
  if (maxMs <= 0) return latest;
  return Math.min(latest, firstAt + maxMs);
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

/**
 * Whether a removal request (ScanRequest.removal) is a library root scan kept apart from other scans: its
 * folder is a known library root or above one, or no root is known. Such a scan would otherwise take in every
 * pending import of the library (one scan of /data/Movies for a delete and two imports). A removal inside a
 * library (a series folder above a deleted season) is an ordinary scan.
 */
export function removalApart(folder: string, roots: readonly string[] | undefined): boolean {
  if (!roots?.length) return true;
  const root = longestPrefix(folder, roots, (r) => r);
  return root === undefined || relativeTo(folder, root) === '';
}

/**
 * When a removal scan is due: a fixed window after the first removal (later ones join it and do not move
 * it), SERVER_SCAN_DELAY_MAX, or SERVER_SCAN_DELAY when there is no cap.
 */
export function removalDueAt(firstAt: number, delayMs: number, maxMs: number): number {
  return firstAt + (maxMs > 0 ? maxMs : delayMs);
}

/**
 * A due removal scan waits while scans of new files at or below its folder are open, so they go first as
 * their own folders; past this long after its first request (two windows) it goes anyway, so a steady stream
 * of imports cannot hold it for ever.
 */
export function removalHoldUntil(firstAt: number, delayMs: number, maxMs: number): number {
  return firstAt + 2 * (maxMs > 0 ? maxMs : delayMs);
}

/** How often a held removal scan looks again whether the scans it waits for are done. */
export const REMOVAL_RECHECK_MS = 1000;

/**
 * A due removal scan waits while scans of new files at or below its folder are open (`open.n` of them, the
 * latest pending one due at `open.pendingDue`), until its hold_until at most. The time to look again, or
 * undefined to send it now. The same rule for every store.
 */
export function removalRecheckAt(holdUntil: number | null, open: { n: number; pendingDue: number | null }, now: number): number | undefined {
  if (holdUntil === null || now >= holdUntil || open.n === 0) return undefined;
  return Math.min(holdUntil, Math.max(open.pendingDue ?? 0, now) + REMOVAL_RECHECK_MS);
}
