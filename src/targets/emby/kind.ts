import type { TargetKind } from '../target-kind.ts';
import { embyTargetSchema } from './schema.ts';
import { createMediaBrowserTarget } from '../media-browser/target.ts';

/** Emby, through the client it shares with Jellyfin (targets/media-browser); the top-level EMBY is the target `emby`. */
export const type = 'emby';
export const schema = embyTargetSchema;
export const create: TargetKind<typeof type>['create'] = (name, entry, log) => createMediaBrowserTarget(name, entry, log);
