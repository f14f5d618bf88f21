import type { TargetKind } from '../target-kind.ts';
import { audiobookshelfTargetSchema } from './schema.ts';
import { createAudiobookshelfTarget } from './target.ts';

/** Audiobookshelf: scans the library folder that holds the change. */
export const type = 'audiobookshelf';
export const schema = audiobookshelfTargetSchema;
export const create: TargetKind<typeof type>['create'] = (name, entry, log) => createAudiobookshelfTarget(name, entry, log);
