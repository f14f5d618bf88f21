import type { TargetKind } from '../target-kind.ts';
import { relayTargetSchema } from './schema.ts';
import { createRelayTarget } from './target.ts';

/** Another relay (scanrelay, autopulse or autoscan) that scans the folder in turn. */
export const type = 'relay';
export const schema = relayTargetSchema;
export const create: TargetKind<typeof type>['create'] = (name, entry, log) => createRelayTarget(name, entry, log);
