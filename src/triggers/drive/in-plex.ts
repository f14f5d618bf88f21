import { statSync } from 'node:fs';
import type { Config } from '../../config/schema.ts';
import type { Logger } from '../../log.ts';
import { mapPath } from '../../paths/mapping.ts';
import type { PlexDatabase } from '../../targets/plex/database.ts';

/**
 * plex_autoscan's rule for drive changes (utils.remove_files_exist_in_plex_database): a file Plex's
 * database already has is not scanned again, unless the copy on disk (seen through
 * SERVER_FILE_EXIST_PATH_MAPPINGS) has another size. With DISABLE_DISK_FILE_SIZE_CHECK, being in the
 * database is enough. A file that cannot be seen on disk is scanned.
 */
export function skipBecauseInPlex(found: { size: number | null } | undefined, diskSize: number | undefined, disableSizeCheck: boolean): boolean {
  if (!found) return false;
  if (disableSizeCheck) return true;
  return diskSize !== undefined && diskSize === found.size;
}

export type PlexLookup = (mappedPath: string) => { size: number | null } | undefined;

/** A checker over Plex's database that tolerates a missing or locked database (then nothing is skipped). */
export function inPlexChecker(
  config: Pick<Config, 'SERVER_FILE_EXIST_PATH_MAPPINGS' | 'GOOGLE'>,
  db: Pick<PlexDatabase, 'mediaPartSize'> | undefined,
  log: Logger,
): (mappedPath: string) => boolean {
  let warned = false;
  return (mappedPath) => {
    if (!db) return false;
    let found: { size: number | null } | undefined;
    try {
      found = db.mediaPartSize(mappedPath);
    } catch (err) {
      if (!warned) log.warn({ err: (err as Error).message }, `cannot read the Plex database, drive files are scanned without checking it: ${(err as Error).message}`);
      warned = true;
      return false;
    }
    let diskSize: number | undefined;
    if (found && !config.GOOGLE.DISABLE_DISK_FILE_SIZE_CHECK) {
      const local = mapPath(config.SERVER_FILE_EXIST_PATH_MAPPINGS, mappedPath).path;
      try {
        const st = statSync(local);
        if (st.isFile()) diskSize = st.size;
      } catch {
        /* not visible: scanned */
      }
    }
    const skip = skipBecauseInPlex(found, diskSize, config.GOOGLE.DISABLE_DISK_FILE_SIZE_CHECK);
    if (found) log.debug({ path: mappedPath, plexSize: found.size, diskSize, skip }, `${mappedPath} is in the Plex database`);
    return skip;
  };
}
