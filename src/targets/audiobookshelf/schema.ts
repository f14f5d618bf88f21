import { z } from 'zod';
import { targetBase } from '../../config/target-base.ts';
import { credential, httpUrl } from '../fields-schema.ts';

/** An Audiobookshelf server (docs/targets.md): its URL and an API token of an admin user (Settings -> API Keys). */
export const audiobookshelfTargetSchema = targetBase.extend({
  TYPE: z.literal('audiobookshelf'),
  URL: httpUrl(),
  TOKEN: credential(),
});
export type AudiobookshelfTarget = z.infer<typeof audiobookshelfTargetSchema>;
