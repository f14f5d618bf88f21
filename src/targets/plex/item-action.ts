import type { Logger } from '../../core/logger.ts';
import { findLeavesByFile, findLeavesInFolder } from './api-items.ts';
import type { PlexApi } from './api.ts';
import { MAX_REFRESHED_ITEMS } from './metadata-refresh.ts';
import type { SectionCache } from './sections.ts';

/**
 * A refresh or analyze of exactly the items at a request's files (issue 39 item 5), for a file changed in place
 * (new subtitles, a transcode) that a partial scan would find nothing new in. The items are found through the
 * HTTP item lookup (api-items.ts: the section's listing, matched on Media.Part.file), then each gets
 * `PUT /library/metadata/{ratingKey}/refresh` (its agents' metadata, and Plex re-reads its local subtitles) or
 * `PUT /library/metadata/{ratingKey}/analyze` (its streams, after a transcode). A request without files acts on
 * the items with a file in its folder. Returns undefined when no item is there: the caller scans instead (a new
 * file needs a scan before it is an item). Throws what the API threw (retried like a scan).
 */
export async function actOnItems(
  deps: { api: PlexApi; sections: SectionCache; log: Logger },
  action: 'refresh' | 'analyze',
  folder: string,
  files: readonly string[],
): Promise<string | undefined> {
  const match = await deps.sections.resolve(folder);
  if (!match) return undefined;
  const { section } = match;
  const leaves = files.length ? [...(await findLeavesByFile(deps.api, section, files)).values()] : await findLeavesInFolder(deps.api, section, folder);
  let keys = [...new Set(leaves.map((l) => l.ratingKey))];
  if (keys.length === 0) return undefined;
  if (keys.length > MAX_REFRESHED_ITEMS) {
    deps.log.warn({ items: keys.length, max: MAX_REFRESHED_ITEMS }, `more items than are acted on at once; the newest ${MAX_REFRESHED_ITEMS} get the ${action}`);
    keys = keys.slice(0, MAX_REFRESHED_ITEMS);
  }
  for (const key of keys) {
    if (action === 'refresh') await deps.api.refreshMetadata(key);
    else await deps.api.analyze([key]);
  }
  return `${action} of ${keys.length} item(s) (${keys.join(', ')}) in section ${section.id} (${section.title})`;
}
