import { statSync } from 'node:fs';
import { mapPath, normalizeFolder, parentFolder, relativeTo, type PathMappings } from './mapping.ts';

/*
 * Extensions that name a file, for when scanrelay cannot look at the path. Video and subtitles as Plex's own
 * local-media agent lists them (LocalMedia.bundle config.py VIDEO_EXTS, SUBTITLE_EXTS), audio as its music
 * scanner reads them, then what else media managers and drives deliver beside them (artwork, metadata, books,
 * disc images, unfinished downloads).
 */
const VIDEO =
  '3g2 3gp asf asx avc avi avs bivx bup divx dv dvr-ms evo fli flv m2t m2ts m2v m4v mkv mov mp4 mpeg mpg mts nsv nuv ' +
  'ogm ogv tp pva qt rm rmvb sdp svq3 strm ts ty vdr viv vob vp3 wmv wpl wtv xsp xvid webm mpe mpv mxf iso img';
const AUDIO = 'mp3 m4a m4b flac aac rma mpa wav wma ogg oga opus mp2 mka ac3 dts ape mpc mp+ mpp shn aiff aif wv dsf dff dsd alac';
const SUBTITLES = 'utf utf8 utf-8 srt smi rt ssa aqt jss ass idx sub txt psb vtt sup';
const BESIDE = 'nfo jpg jpeg png gif tbn xml json epub mobi azw azw3 pdf cbz cbr djvu part partial !qb tmp';

/** Extensions of files media managers and drives deliver; a last segment ending in one names a file. */
const FILE_EXTENSIONS = new Set([VIDEO, AUDIO, SUBTITLES, BESIDE].join(' ').split(' '));

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
