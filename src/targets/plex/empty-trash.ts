import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PlexSettings } from './settings.ts';
import type { Logger } from '../../core/logger.ts';
import type { PlexApi } from './api.ts';
import type { PlexDatabase } from './database.ts';

export type EmptyTrashConfig = Pick<
  PlexSettings,
  'EMPTY_TRASH' | 'TOKEN' | 'EMPTY_TRASH_MAX_FILES' | 'EMPTY_TRASH_CONTROL_FILES' | 'EMPTY_TRASH_ZERO_DELETED'
>;

export interface EmptyTrashDeps {
  config: EmptyTrashConfig;
  api: PlexApi | undefined;
  db: PlexDatabase;
  log: Logger;
  /** Tries of the PUT and the wait between them (plex_autoscan: 5 tries, 10 s apart). */
  tries: number;
  retryMs: number;
  exists?: (path: string) => boolean;
}

/** Whether PLEX_EMPTY_TRASH is on as plex_autoscan reads it: the key, a token and a non-zero PLEX_EMPTY_TRASH_MAX_FILES. */
export function emptyTrashEnabled(config: EmptyTrashConfig): boolean {
  return config.EMPTY_TRASH && config.TOKEN !== '' && config.EMPTY_TRASH_MAX_FILES > 0;
}

/**
 * PLEX_EMPTY_TRASH with plex_autoscan's guards, in its order: the deleted count from Plex's database
 * (metadata_items plus media_parts rows with deleted_at) must be readable and at most
 * PLEX_EMPTY_TRASH_MAX_FILES; zero deleted skips the call unless PLEX_EMPTY_TRASH_ZERO_DELETED or the scan
 * was an upgrade; every PLEX_EMPTY_TRASH_CONTROL_FILES path must exist (a dropped mount must never empty
 * the trash). Returns a short outcome for the history; never throws.
 */
export async function emptyTrashGuarded(deps: EmptyTrashDeps, sectionId: string, upgrade: boolean, signal: AbortSignal): Promise<string> {
  const { config, log } = deps;
  if (!emptyTrashEnabled(config) || !deps.api) return '';
  let deleted: number;
  try {
    deleted = deps.db.deletedCount();
  } catch (err) {
    log.error({ key: 'PLEX_EMPTY_TRASH', err: (err as Error).message }, 'cannot count deleted items in the Plex database; not emptying the trash');
    return 'trash not emptied: deleted count unknown (Plex database unreadable)';
  }
  if (deleted > config.EMPTY_TRASH_MAX_FILES) {
    log.warn({ key: 'PLEX_EMPTY_TRASH_MAX_FILES', deleted, max: config.EMPTY_TRASH_MAX_FILES, section: sectionId }, 'too many deleted items; not emptying the trash');
    return `trash not emptied: ${deleted} deleted items > PLEX_EMPTY_TRASH_MAX_FILES ${config.EMPTY_TRASH_MAX_FILES}`;
  }
  if (deleted === 0 && !config.EMPTY_TRASH_ZERO_DELETED && !upgrade) {
    log.info({ key: 'PLEX_EMPTY_TRASH_ZERO_DELETED', section: sectionId }, 'no deleted items; not emptying the trash');
    return 'trash not emptied: nothing deleted';
  }
  const exists = deps.exists ?? existsSync;
  const missing = config.EMPTY_TRASH_CONTROL_FILES.find((f) => !exists(f));
  if (missing !== undefined) {
    log.warn({ key: 'PLEX_EMPTY_TRASH_CONTROL_FILES', missing }, 'a control file is missing (is the mount down?); not emptying the trash');
    return `trash not emptied: control file missing: ${missing}`;
  }
  for (let attempt = 1; attempt <= deps.tries; attempt++) {
    try {
      await deps.api.emptyTrash(sectionId);
      log.info({ key: 'PLEX_EMPTY_TRASH', section: sectionId, deleted, attempt }, 'Plex trash emptied');
      return `trash emptied (${deleted} deleted)`;
    } catch (err) {
      log.warn({ key: 'PLEX_EMPTY_TRASH', section: sectionId, attempt, tries: deps.tries, err: (err as Error).message }, 'empty trash failed');
      if (attempt < deps.tries) await sleep(deps.retryMs, undefined, { signal });
    }
  }
  return `trash not emptied: Plex refused ${deps.tries} times`;
}
