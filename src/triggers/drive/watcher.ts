import type { DriveConfig } from '../../config/schema.ts';
import type { Logger } from '../../core/logger.ts';
import type { CryptDecoder } from '../../google/rclone-crypt.ts';
import { FOLDER_MIME, StagedItems, type CacheOp, type CachedItem, type DriveCacheStore } from './cache.ts';
import { processChanges, type ChangeResult } from './changes.ts';
import { DriveApiError, type DriveClient } from '../../google/drive-client.ts';
import { watchedSharedDrives } from './filters.ts';

/** My Drive (key "root") or one watched shared drive (key = its id). */
export interface WatchedDrive {
  key: string;
  driveId?: string;
  name: string;
}

export interface PageOutcome {
  result: ChangeResult;
  /** Cache writes to commit once the page's scans are queued. */
  ops: CacheOp[];
  /** Token to continue from, and whether the list is exhausted (it is then the next poll's start). */
  nextToken: string;
  done: boolean;
  changes: number;
}

/** Drive-side half of monitoring: which drives, their start tokens, and one processed page at a time. */
export class DriveWatcher {
  constructor(
    private readonly client: DriveClient,
    private readonly cache: DriveCacheStore,
    private readonly config: DriveConfig,
    private readonly log: Logger,
    /** RCLONE.CRYPT_MAPPINGS decoding, when mappings are set. */
    private readonly decoder?: Pick<CryptDecoder, 'decode'>,
  ) {}

  /** My Drive plus the shared drives TEAMDRIVES names (only with TEAMDRIVE on), named as drives.list returns them. */
  async drives(): Promise<WatchedDrive[]> {
    const out: WatchedDrive[] = [{ key: 'root', name: 'root' }];
    if (!this.config.TEAMDRIVE) return out;
    const all = await this.client.listDrives();
    const watched = watchedSharedDrives(all, this.config);
    for (const d of watched) {
      await this.cache.setDriveName(d.id, d.name);
      out.push({ key: d.id, driveId: d.id, name: d.name });
    }
    const missing = this.config.TEAMDRIVES.filter((n) => !watched.some((d) => d.name === n || d.id === n));
    if (missing.length) this.log.warn({ missing }, `TEAMDRIVES names no shared drive this account can see: ${missing.join(', ')}`);
    this.log.info({ drives: watched.map((d) => d.name) }, `watching ${watched.length} shared drive(s)`);
    return out;
  }

  startToken(drive: WatchedDrive): Promise<string> {
    return this.client.startPageToken(drive.driveId);
  }

  /** Fetches and processes one page of changes, staging cache writes instead of committing them. */
  async page(drive: WatchedDrive, token: string, opts: { quiet?: boolean } = {}): Promise<PageOutcome> {
    const list = await this.client.changesPage(token, drive.driveId);
    const staged = new StagedItems(this.cache);
    // Each changed item and its parents, read at once where the cache is a round trip away.
    await staged.prefetch(list.changes.flatMap((c) => [c.fileId ?? c.file?.id, ...(c.file?.parents ?? [])].filter((id): id is string => !!id)));
    const result = await processChanges(list.changes, {
      items: staged,
      fetchItem: (id, driveId) => this.fetchItem(id, driveId ?? drive.driveId),
      allowed: this.config.ALLOWED,
      scanRemoved: this.config.SCAN_REMOVED,
      showCacheLogs: this.config.SHOW_CACHE_LOGS && !opts.quiet,
      log: this.log,
      // build_caches (quiet) scans nothing, so it has no use for clear names.
      decode: this.decoder && !opts.quiet ? (paths) => this.decoder!.decode(paths) : undefined,
    });
    const nextToken = list.nextPageToken ?? list.newStartPageToken;
    if (!nextToken) throw new DriveApiError('Drive API changes answer has neither nextPageToken nor newStartPageToken', 'invalid');
    return { result, ops: staged.ops(), nextToken, done: !list.nextPageToken, changes: list.changes.length };
  }

  /**
   * `build_caches`: replays the drive's whole change history (page token 1, as plex_autoscan does)
   * into the cache, scanning nothing. The monitor's saved page token is left alone.
   */
  async rebuild(drive: WatchedDrive, onPage?: (changes: number) => Promise<void> | void): Promise<number> {
    let token = '1';
    let total = 0;
    for (let page = 0; page < 1_000_000; page++) {
      const outcome = await this.page(drive, token, { quiet: true });
      await this.cache.apply(outcome.ops);
      total += outcome.changes;
      await onPage?.(total);
      if (outcome.done) break;
      token = outcome.nextToken;
    }
    return total;
  }

  /** A parent not in the cache: files.get, or drives.get for a shared drive's top folder. */
  private async fetchItem(id: string, driveId: string | undefined): Promise<CachedItem | undefined> {
    try {
      if (driveId && id === driveId) {
        const name = (await this.cache.driveName(id)) ?? (await this.client.getDrive(id)).name;
        await this.cache.setDriveName(id, name);
        return { id, name, parents: [], md5: null, mimeType: FOLDER_MIME, paths: [name] };
      }
      const f = await this.client.getFile(id);
      return { id: f.id, name: f.name, parents: f.parents ?? [], md5: f.md5Checksum ?? null, mimeType: f.mimeType ?? null, paths: [] };
    } catch (err) {
      if (err instanceof DriveApiError && err.kind === 'not-found') {
        this.log.warn({ id }, `cannot read drive item ${id} (not found or no access): its paths stay unknown`);
        return undefined;
      }
      throw err;
    }
  }
}
