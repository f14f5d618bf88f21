import type { ScannedItem } from '../../core/events.ts';
import { findLeavesByFile, findLeavesInFolder, type ApiLookupLimits, type LeafItem } from './api-items.ts';
import type { PlexApi } from './api.ts';
import type { SectionCache } from './sections.ts';

/**
 * How far the lookup for a notification reads a section's listing (newest first): an item the scan just added is
 * on the first page; an older item whose file was replaced may be further, and beyond this it is left out (the
 * event then names the folder only). A notification is not worth reading a whole large library for.
 */
export const NOTIFY_LOOKUP: ApiLookupLimits = { pageSize: 100, maxPages: 3 };

/**
 * The items a scan of section `sectionId` added or updated, for its `scanned` event: the items at its files, or for
 * a folder scan the items with a file in the folder, found through the HTTP item lookup (api-items.ts) once the scan
 * ended. One look, no retries: it runs off Plex's turn and only feeds a notification. Throws what the API threw.
 */
export async function scannedItems(
  deps: { api: PlexApi; sections: SectionCache },
  sectionId: string,
  folder: string,
  files: readonly string[],
  limits: ApiLookupLimits = NOTIFY_LOOKUP,
): Promise<ScannedItem[]> {
  // The scanned section itself: a folder under two libraries (Movies and Movies 4K) is an item in each.
  const section = (await deps.sections.all()).find((s) => s.id === sectionId);
  if (!section) return [];
  const leaves = files.length ? [...(await findLeavesByFile(deps.api, section, files, limits)).values()] : await findLeavesInFolder(deps.api, section, folder, limits);
  const seen = new Set<string>();
  return leaves.filter((l) => !seen.has(l.ratingKey) && seen.add(l.ratingKey)).map(asScannedItem);
}

/** Plex's names for an item, in the event's words (core/events.ts scannedItemSchema). */
export function asScannedItem(leaf: LeafItem): ScannedItem {
  const type = leaf.type ?? 'item';
  return {
    key: leaf.ratingKey,
    type,
    title: leaf.title ?? leaf.files[0]?.split('/').pop() ?? `item ${leaf.ratingKey}`,
    ...(leaf.year !== undefined ? { year: leaf.year } : {}),
    ...(type === 'episode' && leaf.grandparentTitle !== undefined ? { show: leaf.grandparentTitle } : {}),
    ...(type === 'episode' && leaf.parentIndex !== undefined ? { season: leaf.parentIndex } : {}),
    ...(type === 'episode' && leaf.index !== undefined ? { episode: leaf.index } : {}),
    ...(type === 'track' && leaf.grandparentTitle !== undefined ? { artist: leaf.grandparentTitle } : {}),
    ...(type === 'track' && leaf.parentTitle !== undefined ? { album: leaf.parentTitle } : {}),
  };
}
