import { z } from 'zod';

/** SERVER_PATH_MAPPINGS (and SERVER_FILE_EXIST_PATH_MAPPINGS): the server's path -> the paths it arrives as. */
export const pathMappingsSchema = z.record(z.string(), z.array(z.string()));
export type PathMappings = z.infer<typeof pathMappingsSchema>;

export interface MappedPath {
  /** The path after mapping: the key's form, in the key's separator style. */
  path: string;
  /** Which key and value matched, or undefined when the path was left as it came. */
  match?: { key: string; value: string };
}

export type Separator = '/' | '\\';

/** A key's separator style: POSIX when it starts with "/", Windows when it holds a backslash. */
export function separatorOf(path: string): Separator {
  if (path.startsWith('/')) return '/';
  return path.includes('\\') ? '\\' : '/';
}

const isSeparator = (code: number) => code === 47 /* / */ || code === 92; /* \ */

function trimTrailingSeparators(path: string): string {
  // A loop, not a regex: this runs several times for every path of every request.
  let end = path.length;
  while (end > 0 && isSeparator(path.charCodeAt(end - 1))) end--;
  if (end === path.length) return path;
  return end === 0 ? path[0]! : path.slice(0, end);
}

/** The part of `path` below `prefix`, or undefined when prefix is not a whole-segment prefix of path. */
export function relativeTo(path: string, prefix: string): string | undefined {
  const base = trimTrailingSeparators(prefix);
  if (base === '') return undefined;
  if (path === base || trimTrailingSeparators(path) === base) return '';
  if (base === '/' || base === '\\') return path.startsWith(base) ? path.slice(1) : undefined;
  if (!path.startsWith(base)) return undefined;
  const next = path[base.length];
  return next === '/' || next === '\\' ? path.slice(base.length + 1) : undefined;
}

export function joinPath(base: string, rest: string, sep: Separator = separatorOf(base)): string {
  const root = trimTrailingSeparators(base);
  if (rest === '') return root;
  const other = sep === '/' ? '\\' : '/';
  const tail = trimTrailingSeparators(rest.includes(other) ? rest.replaceAll(other, sep) : rest);
  if (tail.length === 1 && isSeparator(tail.charCodeAt(0))) return root;
  if (tail === '') return root;
  return root.endsWith(sep) ? `${root}${tail}` : `${root}${sep}${tail}`;
}

/**
 * Rewrites a path through mappings whose keys are target forms and whose values are other forms of
 * the same place. The longest matching value wins, matching whole segments only (plex_autoscan takes
 * the first value in file order with a plain string prefix: a deliberate difference).
 */
export function mapPath(mappings: PathMappings, path: string): MappedPath {
  let best: { key: string; value: string; rest: string; length: number } | undefined;
  for (const [key, values] of Object.entries(mappings)) {
    for (const value of values) {
      if (!value) continue;
      const rest = relativeTo(path, value);
      if (rest === undefined) continue;
      const length = trimTrailingSeparators(value).length;
      if (!best || length > best.length) best = { key, value, rest, length };
    }
  }
  if (!best) return { path };
  return { path: joinPath(best.key, best.rest), match: { key: best.key, value: best.value } };
}

/** Longest whole-segment prefix among candidates, e.g. which Plex section location holds a folder. */
export function longestPrefix<T>(path: string, candidates: Iterable<T>, prefixOf: (c: T) => string): T | undefined {
  let best: T | undefined;
  let bestLength = -1;
  for (const candidate of candidates) {
    const prefix = prefixOf(candidate);
    if (relativeTo(path, prefix) === undefined) continue;
    const length = trimTrailingSeparators(prefix).length;
    if (length > bestLength) {
      best = candidate;
      bestLength = length;
    }
  }
  return best;
}

/** The folder a path lives in (its parent), in the path's own separator style. */
export function parentFolder(path: string): string {
  const trimmed = trimTrailingSeparators(path);
  const cut = Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\'));
  if (cut < 0) return trimmed;
  if (cut === 0) return trimmed[0]!;
  // Keep a Windows drive root as "G:\".
  if (cut === 2 && /^[A-Za-z]:/.test(trimmed)) return trimmed.slice(0, 3);
  return trimmed.slice(0, cut);
}

export function isAbsolutePath(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\');
}

export function normalizeFolder(path: string): string {
  return trimTrailingSeparators(path);
}

/** Every ancestor of a folder, nearest first, excluding the folder itself. */
export function ancestors(folder: string): string[] {
  const out: string[] = [];
  let current = normalizeFolder(folder);
  for (;;) {
    const parent = parentFolder(current);
    if (parent === current) break;
    out.push(parent);
    current = parent;
  }
  return out;
}

/** Go's path.Clean for a folder: `//` and `/./` collapsed, `..` resolved, no trailing slash (autoscan's manual trigger). */
export function cleanFolder(path: string): string {
  if (!path.startsWith('/')) return path;
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}
