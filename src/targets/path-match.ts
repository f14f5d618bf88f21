import { relativeTo } from '../paths/mapping.ts';

/** A Windows path: a drive letter ("D:\", "d:/") or a UNC share ("\\server\share"). */
function isWindows(path: string): boolean {
  return /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\');
}

/** A Windows path as Windows compares it: one separator, any case. */
function windowsKey(path: string): string {
  return path.replaceAll('/', '\\').toLowerCase();
}

/**
 * Whether `root` holds `path` (or is it), by whole path segments: "/tv/Show" holds "/tv/Show/S01/e1.mkv" but
 * not "/tv/Showcase". A Windows root and path compare case-insensitively, with either separator; a Windows
 * path never lies under a POSIX root or the reverse (autopulse's RuntimePath, sonarr.rs:48-54 and its tests
 * at 127-155).
 */
export function pathUnder(path: string, root: string): boolean {
  if (!root) return false;
  const windows = isWindows(root);
  if (windows !== isWindows(path)) return false;
  return windows ? relativeTo(windowsKey(path), windowsKey(root)) !== undefined : relativeTo(path, root) !== undefined;
}

/**
 * The candidate whose root holds `path` most closely (the longest root), or undefined. Sonarr's series,
 * Radarr's movies, Audiobookshelf's and FileFlows' library folders are found with it.
 */
export function deepestHolder<T>(path: string, candidates: Iterable<T>, rootOf: (c: T) => string | undefined): T | undefined {
  let best: T | undefined;
  let bestLength = -1;
  for (const candidate of candidates) {
    const root = rootOf(candidate);
    if (!root || !pathUnder(path, root)) continue;
    const length = root.replace(/[\\/]+$/, '').length;
    if (length > bestLength) {
      best = candidate;
      bestLength = length;
    }
  }
  return best;
}

/**
 * What a scan names to a service that takes paths: its files when the request named them all, else its
 * folder (a cut file list, or none: the folder stands for every file in it).
 */
export function pathsOf(item: { folder: string; files: string[]; moreFiles: number }): string[] {
  return item.files.length && !item.moreFiles ? item.files : [item.folder];
}
