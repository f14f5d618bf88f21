import type { TargetKind } from '../target-kind.ts';
import { plexTargetSchema } from './schema.ts';
import { createPlexTarget } from './create.ts';

/** Plex (targets/plex): the API or the scanner, with its steps after a scan; the top-level PLEX_* keys are the target `plex`. */
export const type = 'plex';
export const schema = plexTargetSchema;
export const create: TargetKind<typeof type>['create'] = (name, entry, log, relay) => createPlexTarget(name, entry, log, relay);
