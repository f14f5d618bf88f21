import type { TargetKind } from '../target-kind.ts';
import { fileflowsTargetSchema } from './schema.ts';
import { createFileflowsTarget } from './target.ts';

/** FileFlows: rescans the library that holds the change. */
export const type = 'fileflows';
export const schema = fileflowsTargetSchema;
export const create: TargetKind<typeof type>['create'] = (name, entry, log) => createFileflowsTarget(name, entry, log);
