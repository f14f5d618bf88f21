import type { TargetKind } from '../target-kind.ts';
import { tdarrTargetSchema } from './schema.ts';
import { createTdarrTarget } from './target.ts';

/** Tdarr: queues the changed files of one library. */
export const type = 'tdarr';
export const schema = tdarrTargetSchema;
export const create: TargetKind<typeof type>['create'] = (name, entry, log) => createTdarrTarget(name, entry, log);
