import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../core/logger.ts';
import { findLeavesByFile, findLeavesInFolder } from './api-items.ts';
import type { PlexApi } from './api.ts';
import type { SectionCache } from './sections.ts';

/** At most this many items are refreshed after one scan (a whole library folder would be thousands). */
export const MAX_REFRESHED_ITEMS = 100;

export interface MetadataRefreshDeps {
  api: PlexApi;
  sections: SectionCache;
  log: Logger;
  /** Plex may list a file it just scanned a moment later: tries and the pause between them. */
  retry: { tries: number; delayMs: number };
}

/**
 * PLEX_REFRESH_METADATA: after the scan ended, `PUT /library/metadata/{ratingKey}/refresh` for the items it
 * touched, found through the HTTP item lookup (api-items.ts): the scanned files' items, or for a folder scan
 * the items with a file in the folder. Returns a short outcome for the history; never throws.
 */
export async function refreshScannedItems(deps: MetadataRefreshDeps, folder: string, files: readonly string[], signal: AbortSignal): Promise<string> {
  const { api, log } = deps;
  const ctx = { key: 'PLEX_REFRESH_METADATA' };
  let keys: string[];
  try {
    const match = await deps.sections.resolve(folder);
    if (!match) return 'metadata not refreshed: folder in no Plex section';
    const section = match.section;
    const found = new Set<string>();
    for (let attempt = 1; attempt <= deps.retry.tries; attempt++) {
      if (files.length > 0) {
        for (const leaf of (await findLeavesByFile(api, section, files)).values()) found.add(leaf.ratingKey);
        if (found.size > 0) break;
      } else {
        for (const leaf of await findLeavesInFolder(api, section, folder)) found.add(leaf.ratingKey);
        if (found.size > 0) break;
      }
      if (attempt < deps.retry.tries) await sleep(deps.retry.delayMs, undefined, { signal });
    }
    keys = [...found];
  } catch (err) {
    if (signal.aborted) throw err;
    log.warn({ ...ctx, err: (err as Error).message }, 'cannot list the section items to refresh; metadata not refreshed');
    return 'metadata not refreshed: Plex item lookup failed';
  }
  if (keys.length === 0) {
    log.info({ ...ctx, folder }, 'no Plex item found for the scanned files; metadata not refreshed');
    return 'metadata not refreshed: no item found';
  }
  if (keys.length > MAX_REFRESHED_ITEMS) {
    log.warn({ ...ctx, items: keys.length, max: MAX_REFRESHED_ITEMS }, `the scan touched more items than are refreshed at once; refreshing the newest ${MAX_REFRESHED_ITEMS}`);
    keys = keys.slice(0, MAX_REFRESHED_ITEMS);
  }
  const failed: string[] = [];
  for (const key of keys) {
    try {
      await api.refreshMetadata(key);
    } catch (err) {
      failed.push(key);
      log.warn({ ...ctx, item: key, err: (err as Error).message }, 'metadata refresh failed');
    }
  }
  const ok = keys.filter((k) => !failed.includes(k));
  log.info({ ...ctx, items: ok }, 'Plex metadata refresh requested');
  return failed.length ? `metadata refreshed ${ok.join(',') || 'none'}; failed ${failed.join(',')}` : `metadata refreshed ${ok.join(',')}`;
}
