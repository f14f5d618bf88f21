import type { TargetKind } from '../target-kind.ts';
import { commandTargetSchema } from './schema.ts';
import { createCommandTarget } from './target.ts';

/** A program run for each scan, with the scan's paths as its arguments. */
export const type = 'command';
export const schema = commandTargetSchema;
export const create: TargetKind<typeof type>['create'] = (name, entry, log) => createCommandTarget(name, entry, log);
