import { z } from 'zod';
import { mediaBrowserBase } from '../media-browser/schema.ts';

/** A Jellyfin server in `TARGETS`; the top-level `JELLYFIN` section is the target named `jellyfin`. */
export const jellyfinTargetSchema = mediaBrowserBase.extend({ TYPE: z.literal('jellyfin') });
export type JellyfinTargetConfig = z.infer<typeof jellyfinTargetSchema>;
