import type { TargetKind } from '../target-kind.ts';
import { jellyfinTargetSchema } from './schema.ts';
import { createMediaBrowserTarget } from '../media-browser/target.ts';

/** Jellyfin, through the client it shares with Emby (targets/media-browser); the top-level JELLYFIN is the target `jellyfin`. */
export const type = 'jellyfin';
export const schema = jellyfinTargetSchema;
export const create: TargetKind<typeof type>['create'] = (name, entry, log) => createMediaBrowserTarget(name, entry, log);
