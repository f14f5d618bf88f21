import type { Logger } from '../../log.ts';
import type { PathRewriter } from '../../paths/rewrite.ts';
import { MediaBrowserClient, type MetadataRefreshMode } from '../media-browser/client.ts';
import { MediaBrowserTarget } from '../jellyfin/target.ts';
import { placeRewriter } from '../../paths/rewrite.ts';
import type { EmbyTargetConfig } from '../../config/target-kinds/emby.ts';
import type { TargetRequest } from '../../config/target-base.ts';

/** Emby: the Jellyfin client and target with Emby's `/emby` path prefix. */
export function embyTarget(
  url: string,
  apiKey: string,
  log: Logger,
  rewrite?: PathRewriter,
  name = 'emby',
  request?: TargetRequest,
  refresh?: { always: boolean; mode: MetadataRefreshMode },
): MediaBrowserTarget {
  return new MediaBrowserTarget(name, new MediaBrowserClient('Emby', url, apiKey, '/emby', request), log, rewrite, refresh);
}

/** An Emby `TARGETS` entry (or the EMBY section, named `emby`). */
export function createEmbyTarget(name: string, entry: EmbyTargetConfig, log: Logger): MediaBrowserTarget {
  return embyTarget(entry.URL, entry.API_KEY, log, placeRewriter(entry.REWRITE, entry.REWRITE_MODE), name, entry.REQUEST, { always: entry.REFRESH_METADATA, mode: entry.METADATA_REFRESH_MODE });
}
