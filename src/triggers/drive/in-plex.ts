import type { Config } from '../../config/schema.ts';
import type { Logger } from '../../log.ts';
import type { PlexDatabase } from '../../targets/plex/database.ts';
import { filesInPlex } from '../../targets/plex/in-plex.ts';

/**
 * plex_autoscan's rule for drive changes (utils.remove_files_exist_in_plex_database), shared with the
 * Plex target's SERVER_SKIP_FILES_IN_PLEX: a file Plex's database already has is not scanned again unless
 * the copy on disk has another size. A missing or locked database skips nothing (logged once).
 */
export function inPlexChecker(
  config: Pick<Config, 'SERVER_FILE_EXIST_PATH_MAPPINGS' | 'GOOGLE'>,
  db: PlexDatabase | undefined,
  log: Logger,
): (mappedPath: string) => boolean {
  let warned = false;
  return (mappedPath) => {
    if (!db) return false;
    try {
      const skip = filesInPlex(db, [mappedPath], config).inPlex.length > 0;
      if (skip) log.debug({ path: mappedPath }, `${mappedPath} is already in the Plex database`);
      return skip;
    } catch (err) {
      if (!warned) log.warn({ err: (err as Error).message }, `cannot read the Plex database, drive files are scanned without checking it: ${(err as Error).message}`);
      warned = true;
      return false;
    }
  };
}
