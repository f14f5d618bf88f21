import { plexTargetSchema } from './plex/schema.ts';
import { jellyfinTargetSchema } from './jellyfin/schema.ts';
import { embyTargetSchema } from './emby/schema.ts';
import { audiobookshelfTargetSchema } from './audiobookshelf/schema.ts';
import { tdarrTargetSchema } from './tdarr/schema.ts';
import { fileflowsTargetSchema } from './fileflows/schema.ts';
import { sonarrTargetSchema } from './sonarr/schema.ts';
import { radarrTargetSchema } from './radarr/schema.ts';
import { commandTargetSchema } from './command/schema.ts';
import { relayTargetSchema } from './relay/schema.ts';

/**
 * The list of target kinds: each kind's `TARGETS` schema (targets/<kind>/schema.ts), one line a kind. The config's
 * union (config/targets.ts) is built from it, and the registry (registry.ts) must give every TYPE here its kind
 * module and no other, or the type check fails. Like every `schema.ts` under targets/, this file is config-level:
 * it imports only the foundations (a layers rule), so the config may read it.
 */
export const KIND_SCHEMAS = [
  plexTargetSchema,
  jellyfinTargetSchema,
  embyTargetSchema,
  audiobookshelfTargetSchema,
  tdarrTargetSchema,
  fileflowsTargetSchema,
  sonarrTargetSchema,
  radarrTargetSchema,
  commandTargetSchema,
  relayTargetSchema,
] as const;
