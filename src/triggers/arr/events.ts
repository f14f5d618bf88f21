import { PayloadError, type ScanPath } from '../../intake/intent.ts';
import type { Plan } from './recognizer.ts';
import { renameScans } from './scans.ts';

const FILES_KEPT = 'the files were kept on disk (deletedFiles is false): nothing changed for the media server';

/** An import: new files are Created, an upgrade (plex_autoscan's "Upgrade" event) Modified. */
export function upgradeOr(isUpgrade: unknown): { updateType: 'Created' | 'Modified'; event?: string } {
  return isUpgrade === true ? { updateType: 'Modified', event: 'Upgrade' } : { updateType: 'Created' };
}

/** Scans of files that were deleted: their folders, without waiting for the files (they are gone). */
export function fileDelete(paths: ScanPath[]): Plan {
  return { updateType: 'Deleted', paths };
}

/**
 * A whole series/movie/artist/author deleted: its folder is gone, so the nearest existing ancestor is
 * scanned (a scan of the missing folder leaves the item in Plex). When the manager kept the files
 * (`deletedFiles: false`) nothing changed on disk and nothing is scanned.
 */
export function deleteOfItem(folder: string | undefined, field: string, deletedFiles: unknown): Plan {
  if (deletedFiles === false) return { ignore: FILES_KEPT };
  if (!folder) throw new PayloadError(`${field} is missing: it names the deleted folder`);
  return { updateType: 'Deleted', paths: [{ path: folder, kind: 'gone' }] };
}

/**
 * Part of an item deleted whose own folder the payload does not name (Lidarr album, Readarr book):
 * the item's folder above it still exists and is scanned.
 */
export function deleteInsideItem(itemFolder: string | undefined, field: string, deletedFiles: unknown): Plan {
  if (deletedFiles === false) return { ignore: FILES_KEPT };
  if (!itemFolder) throw new PayloadError(`${field} is missing: it names the folder to scan`);
  return { updateType: 'Deleted', paths: [{ path: itemFolder, kind: 'folder' }] };
}

/** A rename: new and previous folders (see renameScans); with no files listed, the item folder. */
export function rename(itemFolder: string | undefined, itemField: string, listField: string, renamed: ReadonlyArray<{ now: string; before?: string }>): Plan {
  if (renamed.length === 0 && !itemFolder) throw new PayloadError(`Rename lists no ${listField} and has no ${itemField}: nothing to scan`);
  return { updateType: 'Modified', paths: renameScans(itemFolder, renamed) };
}
