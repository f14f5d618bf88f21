import { statSync } from 'node:fs';
import type { PlexSettings } from './settings.ts';
import { mapPath } from '../../paths/mapping.ts';
import type { PlexDatabase } from './database.ts';

export type InPlexConfig = Pick<PlexSettings, 'SERVER_FILE_EXIST_PATH_MAPPINGS'> & { GOOGLE: Pick<PlexSettings['GOOGLE'], 'DISABLE_DISK_FILE_SIZE_CHECK'> };

/** Size of the file where scanrelay sees it, or undefined when it is not a readable file. */
export type FileSize = (visiblePath: string) => number | undefined;

export const statFileSize: FileSize = (p) => {
  try {
    const st = statSync(p);
    return st.isFile() ? st.size : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Which files Plex already has, as plex_autoscan's remove_files_exist_in_plex_database decides: a
 * media_parts row whose file ends with the Plex path, and (unless GOOGLE/CLOUD.DISABLE_DISK_FILE_SIZE_CHECK)
 * the same size as the file on disk, seen through SERVER_FILE_EXIST_PATH_MAPPINGS. Throws when the
 * database cannot be read; the caller then scans (never skips on doubt).
 */
export function filesInPlex(db: PlexDatabase, files: readonly string[], config: InPlexConfig, size: FileSize = statFileSize): { inPlex: string[]; notInPlex: string[] } {
  const inPlex: string[] = [];
  const notInPlex: string[] = [];
  for (const file of files) {
    const sizes = db.partSizesEndingWith(file);
    let known = sizes.length > 0;
    if (known && !config.GOOGLE.DISABLE_DISK_FILE_SIZE_CHECK) {
      const onDisk = size(mapPath(config.SERVER_FILE_EXIST_PATH_MAPPINGS, file).path);
      known = onDisk !== undefined && sizes.includes(onDisk);
    }
    (known ? inPlex : notInPlex).push(file);
  }
  return { inPlex, notInPlex };
}
