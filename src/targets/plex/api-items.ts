import type { PlexSettings } from './settings.ts';
import type { PlexApi } from './api.ts';
import { itemsAnswer, type ItemsAnswer } from './answers.ts';

export type AnalyzeConfig = Pick<PlexSettings, 'ANALYZE_TYPE' | 'ANALYZE_DIRECTORY'>;

/*
 * The metadata items to analyze for a file, found through Plex's HTTP API when its database cannot be
 * read (a relay in another container or on another machine). The facts used are in docs/scanning.md:
 * a section's items listed by type (`GET /library/sections/{id}/all?type=N`, newest first, in pages),
 * each with `ratingKey`, `parentRatingKey` and `Media[].Part[].file`; an item's children at
 * `GET /library/metadata/{id}/children`.
 */

/** Plex's item type numbers for the playable items a file belongs to, by section type. */
const LEAF_TYPE: Record<string, number> = { movie: 1, show: 4, artist: 10 };

export interface ApiLookupLimits {
  /** Items per page. */
  pageSize: number;
  /** Pages read at most per lookup (newest first: a file just scanned is near the start). */
  maxPages: number;
}

export const DEFAULT_API_LOOKUP: ApiLookupLimits = { pageSize: 200, maxPages: 50 };

export interface LeafItem {
  ratingKey: string;
  parentRatingKey?: string;
  /** An episode's show (a track's artist): the item PLEX_FIX_MISMATCHED matches. */
  grandparentRatingKey?: string;
  files: string[];
  /** How Plex names it (absent where Plex does not say): a notification's item (scanned-items.ts). */
  type?: string;
  title?: string;
  year?: number;
  grandparentTitle?: string;
  parentTitle?: string;
  parentIndex?: number;
  index?: number;
}

const NAMING = ['type', 'title', 'year', 'grandparentTitle', 'parentTitle', 'parentIndex', 'index'] as const;

/** `MediaContainer.Metadata[]` of a listing, reduced to what analyze and notifications need. */
export function parseLeaves(body: ItemsAnswer): { items: LeafItem[]; totalSize?: number } {
  const mc = body.MediaContainer;
  const items = mc.Metadata.map((m) => ({
    ratingKey: m.ratingKey,
    parentRatingKey: m.parentRatingKey,
    grandparentRatingKey: m.grandparentRatingKey,
    files: m.Media.flatMap((media) => media.Part.map((p) => p.file ?? '')),
    ...Object.fromEntries(NAMING.filter((k) => m[k] !== undefined).map((k) => [k, m[k]])),
  }));
  return { items, totalSize: mc.totalSize };
}

/**
 * Finds each file's item in the section, newest first, page by page, until every file is found or the
 * listing ends. Returns file -> item for the files found.
 */
export async function findLeavesByFile(api: PlexApi, section: { id: string; type: string }, files: readonly string[], limits: ApiLookupLimits = DEFAULT_API_LOOKUP): Promise<Map<string, LeafItem>> {
  const found = new Map<string, LeafItem>();
  const wanted = new Set(files);
  await eachLeaf(api, section, limits, (item) => {
    for (const f of item.files) if (wanted.has(f) && !found.has(f)) found.set(f, item);
    return found.size >= wanted.size;
  });
  return found;
}

/** The section's items with a file below `folder`, within the lookup limits (newest first). */
export async function findLeavesInFolder(api: PlexApi, section: { id: string; type: string }, folder: string, limits: ApiLookupLimits = DEFAULT_API_LOOKUP): Promise<LeafItem[]> {
  const prefix = folder.endsWith('/') ? folder : `${folder}/`;
  const found: LeafItem[] = [];
  await eachLeaf(api, section, limits, (item) => {
    if (item.files.some((f) => f.startsWith(prefix))) found.push(item);
    return false;
  });
  return found;
}

/** Visits the section's playable items, newest first, page by page, until `visit` says stop or the listing ends. */
async function eachLeaf(api: PlexApi, section: { id: string; type: string }, limits: ApiLookupLimits, visit: (item: LeafItem) => boolean): Promise<void> {
  const type = LEAF_TYPE[section.type];
  if (type === undefined) return;
  for (let page = 0; page < limits.maxPages; page++) {
    const start = page * limits.pageSize;
    const body = await api.getJson(
      `/library/sections/${encodeURIComponent(section.id)}/all?type=${type}&sort=addedAt:desc&X-Plex-Container-Start=${start}&X-Plex-Container-Size=${limits.pageSize}`,
      itemsAnswer,
      'item listing',
    );
    const { items, totalSize } = parseLeaves(body);
    for (const item of items) if (visit(item)) return;
    if (items.length < limits.pageSize || (totalSize !== undefined && start + items.length >= totalSize)) return;
  }
}

/** plex_autoscan's choice of items for one file (see metadataIdsForFile), with the API's parent and children. */
export async function itemsToAnalyze(api: PlexApi, leaf: LeafItem, config: AnalyzeConfig): Promise<number[]> {
  const own = Number(leaf.ratingKey);
  if (!config.ANALYZE_DIRECTORY || leaf.parentRatingKey === undefined) return [own];
  const parent = Number(leaf.parentRatingKey);
  if (config.ANALYZE_TYPE === 'basic') return [parent];
  const children = parseLeaves(await api.getJson(`/library/metadata/${encodeURIComponent(leaf.parentRatingKey)}/children`, itemsAnswer, 'item children')).items;
  return children.length ? children.map((c) => Number(c.ratingKey)) : [own];
}
