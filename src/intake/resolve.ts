import type { Config } from '../config/schema.ts';
import type { ScanRequest, Source } from '../core/scan.ts';
import { ancestors, joinPath, mapPath, normalizeFolder, parentFolder } from '../paths/mapping.ts';
import { mapIncomingPath } from '../paths/rewrite.ts';
import { scanFolderFor, statProbe, type FolderProbe } from '../paths/folder.ts';
import { ignoredBy, priorityMatch } from '../paths/rules.ts';
import { invalidMappedPath, invalidRequestPath } from '../paths/validate.ts';
import { invalidInputText } from '../core/text.ts';
import { MAX_FOLDERS_PER_REQUEST, tooManyFolders, type ScanPath, type ScanIntent } from './intent.ts';

export type PathOutcome =
  | { received: string; mapped: string; folder: string; request: ScanRequest }
  /** `ignored`: what matched (a SERVER_IGNORE_LIST entry, or the key that turned the scan off); `reason`: why, in words. */
  | { received: string; mapped: string; ignored: string; reason: string };

/**
 * plex_autoscan checks SERVER_IGNORE_LIST for manual requests only (scan.py:326-335): its webhook branches
 * (scan.py:381-463) and the drive monitor (scan.py:153-184) never call should_ignore. scanrelay's own folder
 * watcher, which plex_autoscan did not have, keeps it too (it sees every stray file on the disk).
 */
export function ignoreListApplies(source: Source): boolean {
  return source === 'Manual' || source === 'API' || source === 'Watch';
}

const REMOVALS_OFF =
  'SERVER_SCAN_REMOVED is false: a folder that is gone (an item deleted or renamed away) is not scanned; the media server drops its items at its own periodic library scan';

/**
 * Turns a scan intent into queue requests: map each path through SERVER_PATH_REWRITES and SERVER_PATH_MAPPINGS, reject paths
 * that are still not absolute, drop SERVER_IGNORE_LIST matches of manual requests (and gone folders with
 * SERVER_SCAN_REMOVED off), and pick the folder to scan.
 * Throws PathProblem (answered 400) for a bad path.
 */
export function resolveIntent(
  intent: ScanIntent,
  config: Pick<Config, 'SERVER_PATH_MAPPINGS' | 'SERVER_FILE_EXIST_PATH_MAPPINGS' | 'SERVER_IGNORE_LIST' | 'SERVER_SCAN_PRIORITIES'> &
    Partial<Pick<Config, 'SERVER_PATH_REWRITES' | 'SERVER_SCAN_REMOVED'>>,
  probe: FolderProbe = statProbe,
  /** The media servers' library roots as they name them (section locations): a path below one may be looked at. */
  serverRoots: readonly string[] = [],
): PathOutcome[] {
  checkFolderCount(intent.paths);
  const textProblem = invalidIntentText(intent);
  if (textProblem) throw new PathProblem(textProblem);
  const libraryRoots = [...Object.keys(config.SERVER_PATH_MAPPINGS), ...serverRoots];
  // Files of one folder share its mapping: mapped once per folder, not once per file.
  const hasRewrites = (config.SERVER_PATH_REWRITES ?? []).length > 0;
  const mappedFolders = new Map<string, string>();
  const mapFile = (path: string): string => {
    const cut = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
    if (cut <= 0) return mapPath(config.SERVER_PATH_MAPPINGS, path).path;
    const folder = path.slice(0, cut);
    let mappedFolder = mappedFolders.get(folder);
    if (mappedFolder === undefined) mappedFolders.set(folder, (mappedFolder = mapPath(config.SERVER_PATH_MAPPINGS, folder).path));
    return mappedFolder === folder ? path : joinPath(mappedFolder, path.slice(cut + 1));
  };
  return intent.paths.map(({ path, kind }) => {
    const problem = invalidRequestPath(path);
    if (problem) throw new PathProblem(problem);
    // A regular-expression rewrite may look at the whole path, file name included: then no per-folder shortcut.
    const mapped = kind === 'file' && !hasRewrites ? mapFile(path) : mapIncomingPath(config, path).path;
    const mappedProblem = invalidMappedPath(mapped);
    if (mappedProblem) throw new PathProblem(mappedProblem);
    const ignored = ignoreListApplies(intent.source) ? ignoredBy(config.SERVER_IGNORE_LIST, mapped) : undefined;
    if (ignored) return { received: path, mapped, ignored, reason: `matched "${ignored}" in SERVER_IGNORE_LIST` };
    if (kind === 'gone' && config.SERVER_SCAN_REMOVED === false) return { received: path, mapped, ignored: 'SERVER_SCAN_REMOVED', reason: REMOVALS_OFF };
    const folder = folderToScan(mapped, kind, config.SERVER_FILE_EXIST_PATH_MAPPINGS, probe, libraryRoots);
    return {
      received: path,
      mapped,
      folder,
      request: {
        folder,
        // Files are what the steps around a scan wait for and analyze; a deleted file is neither, and it
        // must not make a scan it merges into (an import of the same folder) wait for it.
        files: intent.updateType !== 'Deleted' && (kind === 'file' || (kind === 'guess' && folder !== normalizeFolder(mapped))) ? [mapped] : [],
        source: intent.source,
        event: intent.event,
        title: intent.title,
        ids: intent.ids,
        updateType: intent.updateType,
        // A path rule is more specific than the trigger's own priority (autoscan's), which replaces the default.
        priority: priorityMatch(config.SERVER_SCAN_PRIORITIES, folder) ?? intent.priority ?? 0,
        ...(kind === 'gone' ? { removal: true } : {}),
        ...(intent.targets ? { targets: intent.targets } : {}),
        ...(intent.delay !== undefined ? { delay: intent.delay } : {}),
        ...(intent.action !== undefined && intent.action !== 'scan' ? { action: intent.action } : {}),
      },
    };
  });
}

/** One path a trigger found on its own (a drive change, a watched file, a row of plex_autoscan's queue). */
export type SinglePathIntent = Omit<ScanIntent, 'kind' | 'paths'> & { path: ScanPath };

/** A path left out of `resolveEach`'s requests, and why. */
export interface SkippedPath {
  path: string;
  /** `ignored`: a SERVER_IGNORE_LIST entry matched; `invalid`: the path (or its mapped form) is not usable. */
  why: 'ignored' | 'invalid';
  reason: string;
}

/**
 * For triggers that gather single paths without a client to answer (drive, watch, plex_autoscan's queue):
 * each path is resolved on its own, and a bad or ignored one is set aside with its reason instead of
 * failing the others.
 */
export function resolveEach(
  intents: Iterable<SinglePathIntent>,
  config: Parameters<typeof resolveIntent>[1],
  probe?: FolderProbe,
): { requests: ScanRequest[]; skipped: SkippedPath[] } {
  const requests: ScanRequest[] = [];
  const skipped: SkippedPath[] = [];
  for (const { path, ...rest } of intents) {
    try {
      const [outcome] = resolveIntent({ ...rest, kind: 'scan', paths: [path] }, config, probe);
      if (outcome && 'request' in outcome) requests.push(outcome.request);
      else if (outcome) skipped.push({ path: path.path, why: 'ignored', reason: outcome.reason });
    } catch (err) {
      if (!(err instanceof PathProblem)) throw err;
      skipped.push({ path: path.path, why: 'invalid', reason: err.message });
    }
  }
  return { requests, skipped };
}

function folderToScan(
  mapped: string,
  kind: 'file' | 'folder' | 'guess' | 'gone',
  fileExist: Config['SERVER_FILE_EXIST_PATH_MAPPINGS'],
  probe: FolderProbe,
  libraryRoots: readonly string[],
): string {
  switch (kind) {
    case 'file':
      return parentFolder(mapped);
    case 'folder':
      return normalizeFolder(mapped);
    case 'guess':
      return scanFolderFor(mapped, fileExist, probe, libraryRoots);
    case 'gone':
      return nearestExistingAncestor(mapped, fileExist, probe);
  }
}

/**
 * A deleted folder: Plex drops its items only when a folder above it is scanned. Walk up to the nearest
 * ancestor scanrelay can see through SERVER_FILE_EXIST_PATH_MAPPINGS, never above the mappings' roots
 * (there the local file system says nothing about the media). Without mappings, or when nothing on
 * the way is visible, the parent.
 */
export function nearestExistingAncestor(mapped: string, fileExist: Config['SERVER_FILE_EXIST_PATH_MAPPINGS'], probe: FolderProbe): string {
  const parent = parentFolder(mapped);
  if (Object.keys(fileExist).length === 0) return parent;
  for (const candidate of [parent, ...ancestors(parent)]) {
    const visible = mapPath(fileExist, candidate);
    if (!visible.match) break;
    if (probe(visible.path) === 'folder') return candidate;
  }
  return parent;
}

/** Counts the distinct folders a request names (a file counts as its folder) and refuses too many. */
export function checkFolderCount(paths: ScanIntent['paths']): void {
  if (paths.length <= MAX_FOLDERS_PER_REQUEST) return;
  const folders = new Set<string>();
  for (const { path, kind } of paths) {
    folders.add(kind === 'file' && typeof path === 'string' ? path.slice(0, Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'))) : path);
  }
  if (folders.size > MAX_FOLDERS_PER_REQUEST) {
    throw new PathProblem(tooManyFolders());
  }
}

/**
 * One queue request per folder: the files of a multi-file import (up to thousands of episodes) become
 * one request listing them, so the queue does per-folder work, not per-file work. Returns the requests
 * and, for each outcome with a request, the index of the request it went into.
 */
export function requestsPerFolder(outcomes: readonly PathOutcome[]): { requests: ScanRequest[]; indexOf: Array<number | undefined> } {
  const byKey = new Map<string, number>();
  const requests: ScanRequest[] = [];
  const indexOf = outcomes.map((o) => {
    if (!('request' in o)) return undefined;
    const r = o.request;
    // Same folder and same update type: the requests only differ in their files.
    const key = `${r.updateType}\0${r.folder}`;
    const at = byKey.get(key);
    if (at === undefined) {
      byKey.set(key, requests.length);
      requests.push({ ...r, files: [...(r.files ?? [])] });
      return requests.length - 1;
    }
    const files = requests[at]!.files!;
    for (const f of r.files ?? []) files.push(f);
    return at;
  });
  for (const r of requests) if (r.files && r.files.length > 1) r.files = [...new Set(r.files)];
  return { requests, indexOf };
}

export class PathProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathProblem';
  }
}

/**
 * The text fields of a request get the check its paths get (invalidInputText): a NUL byte, a lone surrogate or
 * another control character in a title is a 400 naming the field, not a queue that cannot store it (or stores
 * something else than answered), nor a log line split in two.
 */
export function invalidIntentText(intent: Pick<ScanIntent, 'event' | 'title' | 'ids'>): string | undefined {
  const fields: Array<[string, unknown]> = [
    ['event', intent.event],
    ['title', intent.title],
    ...Object.entries(intent.ids ?? {}).flatMap(([key, value]): Array<[string, unknown]> => [
      [`ids key ${JSON.stringify(key.replace(/[^\x20-\x7e]/g, '?'))}`, key],
      [`ids.${key.replace(/[^\x20-\x7e]/g, '?')}`, value],
    ]),
  ];
  for (const [name, value] of fields) {
    const problem = typeof value === 'string' ? invalidInputText(value) : undefined;
    if (problem) return `${name} ${problem}`;
  }
  return undefined;
}
