import { z } from 'zod';
import { mediaBrowserBase } from '../media-browser/schema.ts';

/** An Emby server in `TARGETS`; the top-level `EMBY` section is the target named `emby`. */
export const embyTargetSchema = mediaBrowserBase.extend({ TYPE: z.literal('emby') });
export type EmbyTargetConfig = z.infer<typeof embyTargetSchema>;
