import { existsSync } from 'node:fs';
import { RCLONE_BINARY_DEFAULT, type Config } from '../../config/schema.ts';
import { tokenSourceFor } from '../../drive/auth.ts';
import { DriveCache } from '../../drive/cache.ts';
import { DriveClient, type BackoffOptions, type DriveClientOptions } from '../../drive/client.ts';
import { DriveWatcher } from '../../drive/watcher.ts';
import type { Logger } from '../../log.ts';
import type { QueueIntake } from '../../queue/intake.ts';
import type { QueueStore } from '../../queue/store.ts';
import { PlexDatabase } from '../../targets/plex/database.ts';
import { inPlexChecker } from './in-plex.ts';
import { DrivePoller } from './poller.ts';

export interface DriveFiles {
  cachefile: string;
  tokenfile: string;
}

/** The rclone binary: RCLONE.BINARY when the user changed it, else `rclone` from PATH. */
export function rcloneBinaryOf(config: Pick<Config, 'RCLONE'>): string {
  return config.RCLONE.BINARY !== RCLONE_BINARY_DEFAULT ? config.RCLONE.BINARY : 'rclone';
}

/** Client + cache + watcher for the GOOGLE section (shared by the server and build_caches). */
export function openDrive(
  config: Config,
  files: DriveFiles,
  log: Logger,
  backoff?: BackoffOptions,
  onApiError?: DriveClientOptions['onApiError'],
): { watcher: DriveWatcher; cache: DriveCache; client: DriveClient } {
  const auth = tokenSourceFor(config.GOOGLE, {
    tokenfile: files.tokenfile,
    rcloneConfigPath: config.RCLONE.CONFIG || undefined,
    rcloneBinary: rcloneBinaryOf(config),
    log,
  });
  const client = new DriveClient({ baseUrl: config.GOOGLE.DRIVE_API_URL, auth, log, backoff, onApiError });
  const cache = new DriveCache(files.cachefile);
  return { watcher: new DriveWatcher(client, cache, config.GOOGLE, log), cache, client };
}

/** Starts drive monitoring in the server process (GOOGLE.ENABLED). */
export function startDriveMonitor(opts: {
  config: Config;
  files: DriveFiles;
  store: QueueStore;
  intake: QueueIntake;
  log: Logger;
  backoff?: BackoffOptions;
  onPoll?: (outcome: 'ok' | 'error') => void;
  onApiError?: DriveClientOptions['onApiError'];
}): { poller: DrivePoller; close(): Promise<void> } {
  const log = opts.log.child({ component: 'drive' });
  const { watcher, cache } = openDrive(opts.config, opts.files, log, opts.backoff, opts.onApiError);
  const dbPath = opts.config.PLEX_DATABASE_PATH;
  // Opened lazily: a database that is missing or locked now is simply not consulted until it can be read.
  const plexDb = dbPath ? new PlexDatabase(dbPath) : undefined;
  if (dbPath && !existsSync(dbPath)) log.info({ path: dbPath }, 'Plex database not found: drive files are scanned without checking whether Plex has them');
  const poller = new DrivePoller({
    config: opts.config,
    watcher,
    cache,
    store: opts.store,
    intake: opts.intake,
    inPlex: inPlexChecker(opts.config, plexDb, log),
    log,
    onPoll: opts.onPoll,
  });
  poller.start();
  return {
    poller,
    async close() {
      await poller.stop();
      cache.close();
      plexDb?.close();
    },
  };
}
