import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../../config/schema.ts';
import type { Logger } from '../../log.ts';
import type { PlexScanBackend } from './backend.ts';
import type { PlexDatabase } from './database.ts';

export type AnalyzeConfig = Pick<Config, 'PLEX_ANALYZE_TYPE' | 'PLEX_ANALYZE_DIRECTORY'>;

export interface LookupRetry {
  tries: number;
  delayMs: number;
}

/**
 * The metadata items to analyze for a file, as plex_autoscan's get_file_metadata_ids finds them:
 * media_parts.file -> media_items.metadata_item_id (retried: Plex may not have written the row yet);
 * with PLEX_ANALYZE_DIRECTORY its parent (basic) or every item under that parent (deep); a movie (no
 * parent) is analyzed alone. Undefined when the file is not in the database.
 */
export async function metadataIdsForFile(db: PlexDatabase, file: string, config: AnalyzeConfig, retry: LookupRetry, signal: AbortSignal): Promise<number[] | undefined> {
  let id: number | undefined;
  for (let attempt = 1; attempt <= retry.tries; attempt++) {
    id = db.metadataItemOfFile(file);
    if (id !== undefined) break;
    if (attempt < retry.tries) await sleep(retry.delayMs, undefined, { signal });
  }
  if (id === undefined) return undefined;
  if (!config.PLEX_ANALYZE_DIRECTORY) return [id];
  const parent = db.parentOf(id);
  if (parent === undefined) return [id];
  if (config.PLEX_ANALYZE_TYPE === 'basic') return [parent];
  const siblings = db.childrenOf(parent);
  return siblings.length ? siblings : [id];
}

/**
 * PLEX_ANALYZE_TYPE after a file scan: finds each scanned file's metadata items and asks the backend to
 * analyze them (API: PUT /library/metadata/{ids}/analyze; scanner: --analyze[-deeply] --item ids).
 * Returns a short outcome for the history; never throws.
 */
export async function analyzeFiles(
  deps: { config: AnalyzeConfig; db: PlexDatabase; backend: PlexScanBackend; log: Logger; retry: LookupRetry },
  files: readonly string[],
  signal: AbortSignal,
): Promise<string> {
  const { config, log } = deps;
  if (config.PLEX_ANALYZE_TYPE === 'off' || files.length === 0) return '';
  const ids = new Set<number>();
  try {
    for (const file of files) {
      const found = await metadataIdsForFile(deps.db, file, config, deps.retry, signal);
      if (!found) log.warn({ key: 'PLEX_ANALYZE_TYPE', file }, 'file not found in the Plex database; not analyzing it');
      for (const id of found ?? []) ids.add(id);
    }
  } catch (err) {
    if (signal.aborted) throw err;
    log.warn({ key: 'PLEX_ANALYZE_TYPE', err: (err as Error).message }, 'cannot read the Plex database; not analyzing');
    return 'not analyzed: Plex database unreadable';
  }
  if (ids.size === 0) return 'not analyzed: file not in the Plex database';
  const list = [...ids];
  const deep = config.PLEX_ANALYZE_TYPE === 'deep';
  try {
    await deps.backend.analyze(list, deep);
  } catch (err) {
    log.warn({ key: 'PLEX_ANALYZE_TYPE', items: list, err: (err as Error).message }, 'analyze failed');
    return `analyze of ${list.join(',')} failed`;
  }
  log.info({ key: 'PLEX_ANALYZE_TYPE', type: config.PLEX_ANALYZE_TYPE, directory: config.PLEX_ANALYZE_DIRECTORY, items: list }, 'Plex analyze requested');
  return `analyzed ${list.join(',')}`;
}
