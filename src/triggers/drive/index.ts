import { existsSync } from 'node:fs';
import { RCLONE_BINARY_DEFAULT, type Config } from '../../config/schema.ts';
import { driveMonitorEndpoints, tokenSourceFor } from '../../google/auth.ts';
import { DriveCache } from './cache.ts';
import { DriveClient, type AccessTokenSource, type BackoffOptions, type DriveClientOptions } from '../../google/drive-client.ts';
import { DriveWatcher } from './watcher.ts';
import { cryptMimeProblem } from './filters.ts';
import { expandPath } from '../../paths/expand.ts';
import { CryptDecoder } from '../../rclone/cryptdecode.ts';
import type { Logger } from '../../log.ts';
import type { QueueIntake } from '../../queue/intake.ts';
import type { QueueStore } from '../../queue/store.ts';
import { importDriveStateAtFirstStart } from './import.ts';
import { DrivePoller } from './poller.ts';

export interface DriveFiles {
  cachefile: string;
  tokenfile: string;
}

/**
 * The rclone binary: RCLONE.BINARY when the user changed it and it exists, else `rclone` from PATH
 * (plex_autoscan rclone.py:9-11 falls back to `which rclone` the same way).
 */
export function rcloneBinaryOf(config: Pick<Config, 'RCLONE'>): string {
  const configured = config.RCLONE.BINARY;
  return configured && configured !== RCLONE_BINARY_DEFAULT && existsSync(configured) ? configured : 'rclone';
}

/** RCLONE.CRYPT_MAPPINGS decoding (google/drive.py:600-604), or undefined when no mapping is set. */
export function cryptDecoderOf(config: Pick<Config, 'RCLONE'>): CryptDecoder | undefined {
  const decoder = new CryptDecoder({
    binary: rcloneBinaryOf(config),
    configFile: config.RCLONE.CONFIG ? expandPath(config.RCLONE.CONFIG) : '',
    mappings: config.RCLONE.CRYPT_MAPPINGS,
  });
  return decoder.active ? decoder : undefined;
}

/** Client + cache + watcher for the GOOGLE section (shared by the server and build_caches). */
export function openDrive(
  config: Config,
  files: DriveFiles,
  log: Logger,
  backoff?: BackoffOptions,
  onApiError?: DriveClientOptions['onApiError'],
): { watcher: DriveWatcher; cache: DriveCache; client: DriveClient; auth: AccessTokenSource } {
  const endpoints = driveMonitorEndpoints(config.GOOGLE);
  const auth = tokenSourceFor(
    config.GOOGLE,
    { tokenfile: files.tokenfile, rcloneConfigPath: config.RCLONE.CONFIG || undefined, rcloneBinary: rcloneBinaryOf(config), log },
    endpoints,
  );
  const client = new DriveClient({ baseUrl: endpoints.driveApiUrl, auth, log, backoff, onApiError });
  const cache = new DriveCache(files.cachefile);
  return { watcher: new DriveWatcher(client, cache, config.GOOGLE, log, cryptDecoderOf(config)), cache, client, auth };
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
  /** True when Plex already has the (mapped) file: it is then not scanned. Passed in from where the targets are built. */
  inPlex?: (mappedPath: string) => boolean;
}): { poller: DrivePoller; close(): Promise<void> } {
  const log = opts.log.child({ component: 'drive' });
  const { watcher, cache } = openDrive(opts.config, opts.files, log, opts.backoff, opts.onApiError);
  const cryptMime = Object.keys(opts.config.RCLONE.CRYPT_MAPPINGS).length ? cryptMimeProblem(opts.config.GOOGLE.ALLOWED) : undefined;
  if (cryptMime) log.warn(cryptMime);
  const poller = new DrivePoller({
    config: opts.config,
    watcher,
    cache,
    store: opts.store,
    intake: opts.intake,
    inPlex: opts.inPlex ?? (() => false),
    log,
    onPoll: opts.onPoll,
    prepare: () => importDriveStateAtFirstStart({ config: opts.config, ...opts.files, cache, store: opts.store, intake: opts.intake, log }),
  });
  poller.start();
  return {
    poller,
    async close() {
      await poller.stop();
      cache.close();
    },
  };
}
