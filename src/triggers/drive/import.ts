import { existsSync } from 'node:fs';
import type { Config } from '../../config/schema.ts';
import { readCacheFile, type DriveCacheStore } from './cache.ts';
import { readPlexAutoscanCache, type PlexAutoscanState } from '../../peers/plex-autoscan/drive-cache.ts';
import { writeTokenFile } from '../../google/token-file.ts';
import type { Logger } from '../../core/logger.ts';
import type { QueueIntake } from '../../queue/door.ts';
import type { QueueBackend } from '../../queue/backend.ts';
import { tokenKey } from './poller.ts';

/** Queue meta key recording that plex_autoscan's drive state was taken over (JSON: file and time). */
export const DRIVE_IMPORT_KEY = 'drive.plex_autoscan_import';

export interface DriveImportResult {
  file: string;
  /** The OAuth token was written to --tokenfile. */
  token: boolean;
  /** Page tokens taken, by scanrelay drive key. */
  pageTokens: Record<string, string>;
  /** Items copied into scanrelay's drive cache. */
  items: number;
  /** What was found but left alone, and why. */
  skipped: string[];
}

/** The token file is scanrelay's way to authenticate only without a service account or an rclone remote. */
function usesTokenFile(config: Config): boolean {
  return !config.GOOGLE.SERVICE_ACCOUNT_FILE && !config.GOOGLE.RCLONE_REMOTE;
}

/**
 * Takes over plex_autoscan's drive state: its OAuth token (when scanrelay has none), the id -> path
 * cache (when scanrelay's is empty) and each drive's page token (when scanrelay has none for that
 * drive), so monitoring carries on where plex_autoscan stopped and no change made in between is
 * missed. `replace` takes everything even where scanrelay has its own. The page tokens and the
 * import marker are committed in one queue transaction.
 */
export async function importDriveState(opts: {
  state: PlexAutoscanState;
  config: Config;
  tokenfile: string;
  cache: DriveCacheStore;
  store: Pick<QueueBackend, 'meta'>;
  intake: QueueIntake;
  replace?: boolean;
}): Promise<DriveImportResult> {
  const { state, config, tokenfile, cache, store, intake, replace = false } = opts;
  const result: DriveImportResult = { file: state.file, token: false, pageTokens: {}, items: 0, skipped: [] };

  if (state.token) {
    if (!usesTokenFile(config)) result.skipped.push('the OAuth token (SERVICE_ACCOUNT_FILE or RCLONE_REMOTE is used instead)');
    else if (!replace && existsSync(tokenfile)) result.skipped.push(`the OAuth token (${tokenfile} already exists)`);
    else {
      writeTokenFile(tokenfile, state.token);
      result.token = true;
    }
  }

  const items = state.drives.flatMap((d) => d.items);
  if (items.length) {
    if (!replace && (await cache.count()) > 0) result.skipped.push(`${items.length} cached item(s) (scanrelay's drive cache is not empty)`);
    else {
      await cache.apply(items.map((item) => ({ op: 'put', item })));
      result.items = items.length;
    }
  }
  // A shared drive's top folder is cached under the drive's id: its name is the drive's name.
  for (const d of state.drives) {
    const top = d.key !== 'root' ? d.items.find((i) => i.id === d.key) : undefined;
    if (top && !(await cache.driveName(d.key))) await cache.setDriveName(d.key, top.name);
  }

  const meta: Record<string, string | null> = {};
  for (const d of state.drives) {
    if (!d.pageToken) continue;
    const key = tokenKey(d);
    if (!replace && (await store.meta.get(key))) result.skipped.push(`the page token of ${d.table} (scanrelay has its own)`);
    else result.pageTokens[d.key] = meta[key] = d.pageToken;
  }
  meta[DRIVE_IMPORT_KEY] = JSON.stringify({ file: state.file, at: new Date().toISOString() });
  await intake.enqueue([], meta);
  return result;
}

/** One log line saying what was taken over. */
export function describeDriveImport(r: DriveImportResult, tokenfile: string): string {
  const took: string[] = [];
  if (r.token) took.push(`the OAuth token (written to ${tokenfile})`);
  for (const [key, token] of Object.entries(r.pageTokens)) took.push(`the page token of ${key === 'root' ? 'My Drive' : `shared drive ${key}`} (${token})`);
  if (r.items) took.push(`${r.items} cached drive item(s)`);
  const head = took.length ? `took over plex_autoscan's drive state from ${r.file}: ${took.join(', ')}` : `nothing to take over from plex_autoscan's drive state in ${r.file}`;
  return r.skipped.length ? `${head}; left alone: ${r.skipped.join(', ')}` : head;
}

/** What the first poll's take-overs read from and write to: the relay's cache file, the cache in use, the queue. */
export interface FirstStart {
  cachefile: string;
  cache: DriveCacheStore;
  store: Pick<QueueBackend, 'meta'>;
  intake: QueueIntake;
  log: Logger;
}

/**
 * The first start with drive monitoring: when scanrelay has never polled (no page token for My
 * Drive) and has not imported before, and the cache file holds plex_autoscan's tables, take them over.
 */
export async function importDriveStateAtFirstStart(opts: FirstStart & { config: Config; tokenfile: string }): Promise<DriveImportResult | undefined> {
  const { store, log } = opts;
  if ((await store.meta.get(DRIVE_IMPORT_KEY)) || (await store.meta.get(tokenKey({ key: 'root' })))) return undefined;
  const state = readPlexAutoscanCache(opts.cachefile);
  if (!state) return undefined;
  const result = await importDriveState({ ...opts, state });
  log.info({ ...result }, describeDriveImport(result, opts.tokenfile));
  return result;
}

/** Queue meta key recording that a cache file's items were copied into the shared database's cache (JSON). */
export const CACHE_FILE_IMPORT_KEY = 'drive.cache_file_import';

/**
 * With a shared queue (the cache in PostgreSQL): on the first poll, when that cache is empty and was never
 * filled from a file, copies the items of the relay's own `--cachefile` (a relay moved from SQLite with
 * `move-queue` keeps what it cached, so a rename is still a rename). The file is only read.
 */
export async function copyCacheFileAtFirstStart(opts: FirstStart): Promise<number | undefined> {
  const { cachefile, cache, store, log } = opts;
  if (!existsSync(cachefile) || (await store.meta.get(CACHE_FILE_IMPORT_KEY)) || (await cache.count()) > 0) return undefined;
  const file = readCacheFile(cachefile);
  if (!file) return undefined;
  let items = 0;
  try {
    for (const chunk of file.chunks) {
      await cache.apply(chunk.map((item) => ({ op: 'put', item })));
      items += chunk.length;
    }
    for (const d of file.drives) await cache.setDriveName(d.id, d.name);
  } finally {
    file.close();
  }
  await opts.intake.enqueue([], { [CACHE_FILE_IMPORT_KEY]: JSON.stringify({ file: cachefile, at: new Date().toISOString(), items }) });
  if (items) log.info({ file: cachefile, items, cache: cache.location }, `copied ${items} drive cache item(s) from ${cachefile} into the shared cache at ${cache.location}`);
  return items;
}
