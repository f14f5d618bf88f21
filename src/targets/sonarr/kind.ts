import type { TargetKind } from '../target-kind.ts';
import { sonarrTargetSchema } from './schema.ts';
import { createSonarrTarget } from './target.ts';

/** Sonarr: rescans the series whose files changed (over targets/arr). */
export const type = 'sonarr';
export const schema = sonarrTargetSchema;
export const create: TargetKind<typeof type>['create'] = (name, entry, log) => createSonarrTarget(name, entry, log);
