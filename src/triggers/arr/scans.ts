import { ancestors, joinPath, normalizeFolder, parentFolder, relativeTo } from '../../paths/mapping.ts';
import { PayloadError, type ScanPath } from '../../intake/intent.ts';
import type { MediaFile } from './fields.ts';

/** The folder a payload's relative paths are below, with the field it came from (for messages). */
export interface Base {
  path: string | undefined;
  field: string;
}

/** A file's full path: its `path`, else the item folder joined with its `relativePath`. */
export function fullPath(file: { path?: string; relativePath?: string }, base: Base, field: string): string {
  if (file.path) return file.path;
  if (file.relativePath && base.path) return joinPath(base.path, file.relativePath.replace(/^[\\/]+/, ''));
  if (file.relativePath) throw new PayloadError(`${field}.relativePath needs ${base.field}; or send ${field}.path`);
  throw new PayloadError(`${field} has no path: send ${field}.path, or ${field}.relativePath with ${base.field}`);
}

/** The previous full path of a renamed file, when the payload says where it was. */
export function previousPath(file: { previousPath?: string; previousRelativePath?: string }, base: Base): string | undefined {
  if (file.previousPath) return file.previousPath;
  if (file.previousRelativePath && base.path) return joinPath(base.path, file.previousRelativePath.replace(/^[\\/]+/, ''));
  return undefined;
}

/** Files whose folders are scanned (imports, file deletes): one entry per distinct file. */
export function fileScans(paths: readonly string[]): ScanPath[] {
  return [...new Set(paths)].map((path) => ({ path, kind: 'file' as const }));
}

/** A payload field holding one file (`episodeFile`) or a list of files (`episodeFiles`). */
export type FileField = { field: string; file: MediaFile | undefined } | { field: string; files: readonly MediaFile[] | undefined };

/** The full path of every file in the given fields; a PayloadError when there is none. */
export function filesOf(fields: readonly FileField[], base: Base, expected: string): string[] {
  const out: string[] = [];
  for (const f of fields) {
    if ('file' in f && f.file) out.push(fullPath(f.file, base, f.field));
    if ('files' in f) f.files?.forEach((file, i) => out.push(fullPath(file, base, `${f.field}[${i}]`)));
  }
  if (out.length === 0) throw new PayloadError(`no file to scan: expected ${expected}`);
  return out;
}

const inside = (path: string, folder: string) => relativeTo(path, folder) !== undefined;
const isRoot = (folder: string) => parentFolder(folder) === folder;

/**
 * Folders to scan after a rename. The item folder (when known) stands for every folder inside it; a
 * new folder outside it is scanned as itself. A previous folder outside everything scanned is gone
 * (typically the item folder itself was renamed): Plex drops its items only when a folder that still
 * exists above it is scanned, so it becomes a `gone` path for the topmost old folder that is not shared
 * with the new location; resolve scans its nearest existing ancestor.
 */
export function renameScans(itemFolder: string | undefined, renamed: ReadonlyArray<{ now: string; before?: string }>): ScanPath[] {
  const paths: ScanPath[] = [];
  const covered: string[] = [];
  const isCovered = (folder: string) => covered.some((c) => inside(folder, c));
  if (itemFolder) {
    paths.push({ path: itemFolder, kind: 'folder' });
    covered.push(normalizeFolder(itemFolder));
  }
  for (const { now } of renamed) {
    const folder = parentFolder(now);
    if (isCovered(folder)) continue;
    paths.push({ path: now, kind: 'file' });
    covered.push(folder);
  }
  for (const { now, before } of renamed) {
    if (!before) continue;
    const folder = parentFolder(before);
    if (isCovered(folder)) continue;
    const scan = oldFolderScan(folder, itemFolder ? normalizeFolder(itemFolder) : parentFolder(now));
    paths.push(scan);
    covered.push(scan.kind === 'gone' ? parentFolder(scan.path) : scan.path);
  }
  return paths;
}

/**
 * How to scan a previous folder: itself when it still holds the new location (so it exists), else a
 * `gone` path for its ancestor-or-self just below the folder it shares with the new location. A
 * shared root ("/") is never scanned for it: then the old folder itself is the `gone` path.
 */
function oldFolderScan(oldFolder: string, newFolder: string): ScanPath {
  const chain = [oldFolder, ...ancestors(oldFolder)];
  const sharedIndex = chain.findIndex((a) => inside(newFolder, a));
  if (sharedIndex === 0) return { path: oldFolder, kind: 'folder' };
  if (sharedIndex < 0 || isRoot(chain[sharedIndex]!)) return { path: oldFolder, kind: 'gone' };
  return { path: chain[sharedIndex - 1]!, kind: 'gone' };
}
