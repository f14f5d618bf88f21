import { z } from 'zod';
import { targetBase } from '../../config/target-base.ts';
import { credential, httpUrl } from '../fields-schema.ts';

/** A Sonarr that should rescan a series when its files change (docs/targets.md). */
export const sonarrTargetSchema = targetBase.extend({
  TYPE: z.literal('sonarr'),
  /** With the URL base, if Sonarr has one: http://localhost:8989/sonarr. */
  URL: httpUrl(),
  API_KEY: credential(),
});
export type SonarrTarget = z.infer<typeof sonarrTargetSchema>;
