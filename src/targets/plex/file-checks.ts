import type { PlexRelaySettings } from './settings.ts';
import type { ScanItem } from '../../core/scan.ts';
import { mapPath, normalizeFolder, parentFolder } from '../../paths/mapping.ts';
import type { FolderProbe } from '../../paths/folder.ts';

export type FileCheckConfig = Pick<
  PlexRelaySettings,
  'SERVER_MAX_FILE_CHECKS' | 'SERVER_FILE_CHECK_DELAY' | 'SERVER_FILE_EXIST_PATH_MAPPINGS' | 'SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION'
>;

/** One path to look for: as Plex names it, and where scanrelay can see it. */
export interface CheckedPath {
  plex: string;
  visible: string;
}

export type FileCheckDecision =
  /** Go on and scan `folder`. `folderOnly`: the files never showed, the folder did (no analyze then). */
  | { kind: 'ready'; check: number; folder: string; folderOnly: boolean; missing: CheckedPath[] }
  /** Not there yet: check again after SERVER_FILE_CHECK_DELAY. */
  | { kind: 'wait'; check: number; missing: CheckedPath[] }
  /** Checks used up: no scan. */
  | { kind: 'exhausted'; check: number; missing: CheckedPath[] };

/**
 * The paths check number `check` (1-based) looks for, as plex_autoscan's scan() does: the item's files
 * (or the folder itself when the request named a folder); on the last check, with
 * SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION and at least two checks, their parent folder instead.
 */
export function pathsForCheck(item: Pick<ScanItem, 'folder' | 'files'>, config: FileCheckConfig, check: number): { paths: CheckedPath[]; folderOnly: boolean; folder: string } {
  const names = item.files.length ? item.files : [item.folder];
  const max = config.SERVER_MAX_FILE_CHECKS;
  const folderOnly = config.SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION && max >= 2 && check >= max;
  const targets = folderOnly ? [...new Set(names.map(parentFolder))] : names;
  const visible = (p: string) => mapPath(config.SERVER_FILE_EXIST_PATH_MAPPINGS, p).path;
  // A folder request that falls back scans the folder above it, as plex_autoscan's dirname(path) did.
  const folder = folderOnly && !item.files.length ? parentFolder(item.folder) : normalizeFolder(item.folder);
  return { paths: targets.map((plex) => ({ plex, visible: visible(plex) })), folderOnly, folder };
}

/**
 * Decides one file-exists check. plex_autoscan's meaning of SERVER_MAX_FILE_CHECKS: the check always
 * runs at least once, so 0 and 1 both mean "one check, no waiting". When an item stands for several
 * files, it is ready once all are there, or on the last check once any is (the folder scan finds it).
 */
export function decideFileCheck(item: Pick<ScanItem, 'folder' | 'files' | 'fileChecks'>, config: FileCheckConfig, probe: FolderProbe): FileCheckDecision {
  const check = item.fileChecks + 1;
  const { paths, folderOnly, folder } = pathsForCheck(item, config, check);
  const missing = paths.filter((p) => probe(p.visible) === 'missing');
  const last = check >= config.SERVER_MAX_FILE_CHECKS;
  if (missing.length === 0 || (last && missing.length < paths.length)) return { kind: 'ready', check, folder, folderOnly, missing };
  return last ? { kind: 'exhausted', check, missing } : { kind: 'wait', check, missing };
}
