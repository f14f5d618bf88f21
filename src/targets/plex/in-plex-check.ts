import { existsSync } from 'node:fs';
import type { Config } from '../../config/schema.ts';
import type { Logger } from '../../core/logger.ts';
import { PlexDatabase } from './database.ts';
import { filesInPlex } from './in-plex.ts';

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

/** The Plex database the drive check reads: the target `plex`'s (the PLEX_* keys), else the first Plex target's. */
function plexDatabaseOf(targets: Config['targets']): string | undefined {
  const plex = [targets.get('plex'), ...targets.values()].find((t) => t?.TYPE === 'plex');
  return plex?.TYPE === 'plex' ? plex.DATABASE_PATH : undefined;
}

/**
 * The drive monitor's "already in Plex" check, built where the targets are (the monitor is a trigger and
 * never reads a target's database itself). No Plex target, or its DATABASE_PATH unset: nothing is skipped.
 */
export function openInPlexCheck(
  config: Pick<Config, 'SERVER_FILE_EXIST_PATH_MAPPINGS' | 'GOOGLE' | 'targets'>,
  log: Logger,
): { inPlex: (mappedPath: string) => boolean; close(): void } {
  const dbPath = plexDatabaseOf(config.targets);
  // Opened lazily: a database that is missing or locked now is simply not consulted until it can be read.
  const db = dbPath ? new PlexDatabase(dbPath) : undefined;
  if (dbPath && !existsSync(dbPath)) log.info({ path: dbPath }, 'Plex database not found: drive files are scanned without checking whether Plex has them');
  return { inPlex: inPlexChecker(config, db, log), close: () => db?.close() };
}
