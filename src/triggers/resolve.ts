import type { Config } from '../config/schema.ts';
import type { ScanRequest } from '../core/scan.ts';
import { ancestors, mapPath, normalizeFolder, parentFolder } from '../paths/mapping.ts';
import { scanFolderFor, statProbe, type FolderProbe } from '../paths/folder.ts';
import { ignoredBy, priorityOf } from '../paths/rules.ts';
import { invalidMappedPath, invalidRequestPath } from '../paths/validate.ts';
import type { Intent } from './intent.ts';

export type PathOutcome =
  | { received: string; mapped: string; folder: string; request: ScanRequest }
  | { received: string; mapped: string; ignored: string };

/**
 * Turns a scan intent into queue requests: map each path through SERVER_PATH_MAPPINGS, reject paths
 * that are still not absolute, drop SERVER_IGNORE_LIST matches, and pick the folder to scan.
 * Throws PathProblem (answered 400) for a bad path.
 */
export function resolveIntent(
  intent: Extract<Intent, { kind: 'scan' }>,
  config: Pick<Config, 'SERVER_PATH_MAPPINGS' | 'SERVER_FILE_EXIST_PATH_MAPPINGS' | 'SERVER_IGNORE_LIST' | 'SERVER_SCAN_PRIORITIES'>,
  probe: FolderProbe = statProbe,
): PathOutcome[] {
  return intent.paths.map(({ path, kind }) => {
    const problem = invalidRequestPath(path);
    if (problem) throw new PathProblem(problem);
    const mapped = mapPath(config.SERVER_PATH_MAPPINGS, path).path;
    const mappedProblem = invalidMappedPath(mapped);
    if (mappedProblem) throw new PathProblem(mappedProblem);
    const ignored = ignoredBy(config.SERVER_IGNORE_LIST, mapped);
    if (ignored) return { received: path, mapped, ignored };
    const folder = folderToScan(mapped, kind, config.SERVER_FILE_EXIST_PATH_MAPPINGS, probe);
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
        priority: priorityOf(config.SERVER_SCAN_PRIORITIES, folder),
      },
    };
  });
}

function folderToScan(mapped: string, kind: 'file' | 'folder' | 'guess' | 'gone', fileExist: Config['SERVER_FILE_EXIST_PATH_MAPPINGS'], probe: FolderProbe): string {
  switch (kind) {
    case 'file':
      return parentFolder(mapped);
    case 'folder':
      return normalizeFolder(mapped);
    case 'guess':
      return scanFolderFor(mapped, fileExist, probe);
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

export class PathProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathProblem';
  }
}
