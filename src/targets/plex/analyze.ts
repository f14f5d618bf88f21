import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../core/logger.ts';
import { PlexApiBackend } from './backends/api.ts';
import { findLeavesByFile, itemsToAnalyze, type AnalyzeConfig } from './api-items.ts';
import type { PlexScanBackend } from './backends/backend.ts';
import type { PlexDatabase } from './database.ts';


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
  if (!config.ANALYZE_DIRECTORY) return [id];
  const parent = db.parentOf(id);
  if (parent === undefined) return [id];
  if (config.ANALYZE_TYPE === 'basic') return [parent];
  const siblings = db.childrenOf(parent);
  return siblings.length ? siblings : [id];
}

/** Databases already reported unreadable (one line per database and process, not one per scan). */
const unreadableNoted = new WeakSet<PlexDatabase>();

/** Each file's items through the HTTP API, retried like the database lookup (Plex may not list it yet). */
async function metadataIdsThroughApi(backend: PlexApiBackend, files: readonly string[], config: AnalyzeConfig, retry: LookupRetry, signal: AbortSignal, log: Logger): Promise<number[]> {
  const ids: number[] = [];
  let missing = [...files];
  for (let attempt = 1; attempt <= retry.tries && missing.length > 0; attempt++) {
    const bySection = new Map<string, { section: { id: string; type: string }; files: string[] }>();
    for (const file of missing) {
      const match = await backend.sections.resolve(file.slice(0, file.lastIndexOf('/')) || '/');
      if (!match) continue;
      const entry = bySection.get(match.section.id) ?? { section: match.section, files: [] };
      entry.files.push(file);
      bySection.set(match.section.id, entry);
    }
    const found = new Set<string>();
    for (const { section, files: inSection } of bySection.values()) {
      const leaves = await findLeavesByFile(backend.api, section, inSection);
      for (const [file, leaf] of leaves) {
        found.add(file);
        ids.push(...(await itemsToAnalyze(backend.api, leaf, config)));
      }
    }
    missing = missing.filter((f) => !found.has(f));
    if (missing.length > 0 && attempt < retry.tries) await sleep(retry.delayMs, undefined, { signal });
  }
  for (const file of missing) log.info({ key: 'PLEX_ANALYZE_TYPE', file }, 'file not found in its Plex section (HTTP API); not analyzing it');
  return ids;
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
  if (config.ANALYZE_TYPE === 'off' || files.length === 0) return '';
  const ids = new Set<number>();
  let where = 'the Plex database';
  try {
    for (const file of files) {
      const found = await metadataIdsForFile(deps.db, file, config, deps.retry, signal);
      if (!found) log.warn({ key: 'PLEX_ANALYZE_TYPE', file }, 'file not found in the Plex database; not analyzing it');
      for (const id of found ?? []) ids.add(id);
    }
  } catch (err) {
    if (signal.aborted) throw err;
    const api = deps.backend instanceof PlexApiBackend ? deps.backend : undefined;
    if (!api) {
      // Said once per database: the same cause would otherwise fill the log with one WARN per scan.
      if (!unreadableNoted.has(deps.db)) {
        unreadableNoted.add(deps.db);
        log.warn({ key: 'PLEX_ANALYZE_TYPE', err: (err as Error).message }, 'cannot read the Plex database (PLEX_DATABASE_PATH) and no HTTP API to ask instead (PLEX_TOKEN): scanned files are not analyzed until one of them works');
      }
      return 'not analyzed: Plex database unreadable';
    }
    if (!unreadableNoted.has(deps.db)) {
      unreadableNoted.add(deps.db);
      log.info({ key: 'PLEX_ANALYZE_TYPE', err: (err as Error).message }, 'cannot read the Plex database: finding the items to analyze through the Plex HTTP API instead');
    }
    where = 'Plex (HTTP API)';
    try {
      for (const id of await metadataIdsThroughApi(api, files, config, deps.retry, signal, log)) ids.add(id);
    } catch (apiErr) {
      if (signal.aborted) throw apiErr;
      log.warn({ key: 'PLEX_ANALYZE_TYPE', err: (apiErr as Error).message }, 'cannot list the items of the section through the Plex API; not analyzing');
      return 'not analyzed: Plex item lookup failed';
    }
  }
  if (ids.size === 0) return `not analyzed: file not in ${where}`;
  const list = [...ids];
  const deep = config.ANALYZE_TYPE === 'deep';
  try {
    await deps.backend.analyze(list, deep);
  } catch (err) {
    log.warn({ key: 'PLEX_ANALYZE_TYPE', items: list, err: (err as Error).message }, 'analyze failed');
    return `analyze of ${list.join(',')} failed`;
  }
  log.info({ key: 'PLEX_ANALYZE_TYPE', type: config.ANALYZE_TYPE, directory: config.ANALYZE_DIRECTORY, items: list }, 'Plex analyze requested');
  return `analyzed ${list.join(',')}`;
}
