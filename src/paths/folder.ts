import { statSync } from 'node:fs';
import { mapPath, normalizeFolder, parentFolder, relativeTo, type PathMappings } from './mapping.ts';

/** Extensions of files media managers and drives deliver; a last segment ending in one names a file. */
const FILE_EXTENSIONS = new Set(
  (
    'mkv mp4 m4v avi mov wmv mpg mpeg m2ts ts webm flv vob ogv ogg iso img divx xvid 3gp 3g2 mxf m2v mpe mpv rm rmvb asf ' +
    'mp3 flac m4a m4b aac wav wma alac aiff ape opus dsf dff mka ' +
    'srt sub idx ass ssa vtt sup smi ' +
    'nfo jpg jpeg png gif tbn txt xml json ' +
    'epub mobi azw azw3 pdf cbz cbr djvu ' +
    'part partial !qb tmp strm'
  ).split(' '),
);

export function looksLikeFile(path: string): boolean {
  if (/[\\/]$/.test(path)) return false;
  const last = path.split(/[\\/]/).pop() ?? '';
  const dot = last.lastIndexOf('.');
  if (dot <= 0) return false;
  return FILE_EXTENSIONS.has(last.slice(dot + 1).toLowerCase());
}

export type FolderProbe = (visiblePath: string) => 'file' | 'folder' | 'missing';

export const statProbe: FolderProbe = (visiblePath) => {
  // throwIfNoEntry: a missing path is the common case for a relay that cannot see the media, and an
  // exception per request (stack trace included) costs more than the stat itself.
  const st = statSync(visiblePath, { throwIfNoEntry: false });
  if (!st) return 'missing';
  return st.isDirectory() ? 'folder' : 'file';
};

/**
 * The folder to scan for a mapped path: a file's parent folder, a folder itself. When scanrelay can
 * see the path (through SERVER_FILE_EXIST_PATH_MAPPINGS) the file system decides; otherwise the name does.
 * Only a path inside a SERVER_FILE_EXIST_PATH_MAPPINGS key or a library root (a SERVER_PATH_MAPPINGS key)
 * is ever looked at on disk: anything else would let a request learn which files the relay's host has.
 */
export function scanFolderFor(
  mappedPath: string,
  fileExistMappings: PathMappings,
  probe: FolderProbe = statProbe,
  libraryRoots: readonly string[] = [],
): string {
  const visible = mapPath(fileExistMappings, mappedPath);
  const mayLook = visible.match !== undefined || libraryRoots.some((root) => relativeTo(mappedPath, root) !== undefined);
  const kind = mayLook ? probe(visible.path) : 'missing';
  const isFile = kind === 'missing' ? looksLikeFile(mappedPath) : kind === 'file';
  return isFile ? parentFolder(mappedPath) : normalizeFolder(mappedPath);
}
