import type { TargetKind } from '../target-kind.ts';
import { radarrTargetSchema } from './schema.ts';
import { createRadarrTarget } from './target.ts';

/** Radarr: rescans the movie whose files changed (over targets/arr). */
export const type = 'radarr';
export const schema = radarrTargetSchema;
export const create: TargetKind<typeof type>['create'] = (name, entry, log) => createRadarrTarget(name, entry, log);
