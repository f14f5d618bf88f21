import { existsSync } from 'node:fs';
import { RCLONE_BINARY_DEFAULT, type Config } from '../../config/schema.ts';
import { driveMonitorEndpoints, tokenSourceFor } from '../../google/auth.ts';
import { DriveCache, type DriveCacheStore } from './cache.ts';
import { DriveClient, type AccessTokenSource, type BackoffOptions, type DriveClientOptions } from '../../google/drive-client.ts';
import { DriveWatcher } from './watcher.ts';
import { cryptMimeProblem } from './filters.ts';
import { expandPath } from '../../paths/expand.ts';
import { CryptDecoder } from '../../google/rclone-crypt.ts';
import type { Logger } from '../../core/logger.ts';
import type { QueueIntake } from '../../queue/door.ts';
import type { QueueBackend } from '../../queue/backend.ts';
import { copyCacheFileAtFirstStart, importDriveStateAtFirstStart } from './import.ts';
import { DrivePoller, type PollLease } from './poller.ts';

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

/** The lease that picks the one relay polling the drive among those sharing a queue. */
export const DRIVE_LEASE = 'drive';

/**
 * The drive cache in use: with SERVER_QUEUE_URL the shared database's (so a relay taking over the drive
 * sees what the previous poller cached; PostgreSQL's code is loaded only then), else the `--cachefile`.
 * With `relay`, also the lease for polling, on the same connections (absent for SQLite).
 */
export async function openDriveCache(
  config: Pick<Config, 'SERVER_QUEUE_URL'>,
  cachefile: string,
  log: Logger,
  relay?: { id: string; leaseMs: number },
): Promise<{ cache: DriveCacheStore; lease?: PollLease }> {
  if (!config.SERVER_QUEUE_URL) return { cache: new DriveCache(cachefile) };
  const { PgDriveCache } = await import('./pg-cache.ts');
  const cache = await PgDriveCache.open(config.SERVER_QUEUE_URL, `scanrelay ${relay?.id ?? 'drive cache'} (drive)`, log);
  return { cache, ...(relay ? { lease: cache.lease(DRIVE_LEASE, relay.id, relay.leaseMs) } : {}) };
}

/** Client + cache + watcher for the GOOGLE section (shared by the server and build_caches); `cache`: one opened already. */
export function openDrive(
  config: Config,
  files: DriveFiles,
  log: Logger,
  backoff?: BackoffOptions,
  onApiError?: DriveClientOptions['onApiError'],
  opened?: DriveCacheStore,
): { watcher: DriveWatcher; cache: DriveCacheStore; client: DriveClient; auth: AccessTokenSource } {
  const endpoints = driveMonitorEndpoints(config.GOOGLE);
  const auth = tokenSourceFor(
    config.GOOGLE,
    { tokenfile: files.tokenfile, rcloneConfigPath: config.RCLONE.CONFIG || undefined, rcloneBinary: rcloneBinaryOf(config), log },
    endpoints,
  );
  const client = new DriveClient({ baseUrl: endpoints.driveApiUrl, auth, log, backoff, onApiError });
  const cache = opened ?? new DriveCache(files.cachefile);
  return { watcher: new DriveWatcher(client, cache, config.GOOGLE, log, cryptDecoderOf(config)), cache, client, auth };
}

/** Starts drive monitoring in the server process (GOOGLE.ENABLED). */
export async function startDriveMonitor(opts: {
  config: Config;
  files: DriveFiles;
  store: QueueBackend;
  intake: QueueIntake;
  log: Logger;
  backoff?: BackoffOptions;
  onPoll?: (outcome: 'ok' | 'error') => void;
  onApiError?: DriveClientOptions['onApiError'];
  /** True when Plex already has the (mapped) file: it is then not scanned. Passed in from where the targets are built. */
  inPlex?: (mappedPath: string) => boolean;
  /** With a shared queue: how long the drive lease holds (SERVER_QUEUE_LEASE). */
  leaseMs?: number;
}): Promise<{ poller: DrivePoller; close(): Promise<void> }> {
  const log = opts.log.child({ component: 'drive' });
  const shared = opts.store.shared;
  const relay = shared ? { id: shared.relayId, leaseMs: opts.leaseMs ?? 30_000 } : undefined;
  const { cache: opened, lease } = await openDriveCache(opts.config, opts.files.cachefile, log, relay);
  const { watcher, cache } = openDrive(opts.config, opts.files, log, opts.backoff, opts.onApiError, opened);
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
    lease,
    onPoll: opts.onPoll,
    prepare: async () => {
      // The relay's own cache file first (moved from SQLite), then plex_autoscan's, which fills only an empty cache.
      if (!(cache instanceof DriveCache)) await copyCacheFileAtFirstStart({ cachefile: opts.files.cachefile, cache, store: opts.store, intake: opts.intake, log });
      await importDriveStateAtFirstStart({ config: opts.config, ...opts.files, cache, store: opts.store, intake: opts.intake, log });
    },
  });
  poller.start();
  return {
    poller,
    async close() {
      await poller.stop();
      await cache.close();
    },
  };
}
