import { z } from 'zod';
import { targetBase } from '../../config/target-base.ts';
import { credential, httpUrl } from '../fields-schema.ts';

/** A Radarr that should rescan a movie when its files change (docs/targets.md). */
export const radarrTargetSchema = targetBase.extend({
  TYPE: z.literal('radarr'),
  /** With the URL base, if Radarr has one: http://localhost:7878/radarr. */
  URL: httpUrl(),
  API_KEY: credential(),
});
export type RadarrTarget = z.infer<typeof radarrTargetSchema>;
