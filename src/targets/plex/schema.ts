import { z } from 'zod';
import { plexKeys } from '../../config/plex-keys.ts';
import { targetBase, targetRequestSchema } from '../../config/target-base.ts';

/**
 * A Plex server in `TARGETS`: what the top-level `PLEX_*` keys offer, by the same names without the prefix
 * (config/plex-keys.ts), with `URL` for PLEX_LOCAL_URL. The top-level keys themselves are the target named `plex`.
 * REQUEST.VERIFY_SSL is PLEX_VERIFY_SSL: absent, Plex's own policy (checked for a public address only).
 */
export const plexTargetSchema = targetBase.extend({
  TYPE: z.literal('plex'),
  URL: z.string().default('http://localhost:32400'),
  ...plexKeys,
  REQUEST: targetRequestSchema.unwrap().extend({ VERIFY_SSL: plexKeys.VERIFY_SSL }).prefault({}),
}).omit({ VERIFY_SSL: true });
export type PlexTargetConfig = z.infer<typeof plexTargetSchema>;
