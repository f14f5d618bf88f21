import type { Logger } from '../../log.ts';
import type { PathRewriter } from '../../paths/rewrite.ts';
import { MediaBrowserClient } from '../media-browser/client.ts';
import { MediaBrowserTarget } from '../jellyfin/target.ts';

/** Emby: the Jellyfin client and target with Emby's `/emby` path prefix. */
export function embyTarget(url: string, apiKey: string, log: Logger, rewrite?: PathRewriter): MediaBrowserTarget {
  return new MediaBrowserTarget('emby', new MediaBrowserClient('Emby', url, apiKey, '/emby'), log, rewrite);
}
