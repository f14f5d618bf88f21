import type { z } from 'zod';
import type { Config } from '../config/schema.ts';
import type { TargetConfig, TargetType } from '../config/targets.ts';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import type { KIND_SCHEMAS } from './kinds-schema.ts';

/** The `TARGETS` entry of one TYPE, as its schema gives it (defaults filled in). */
export type TargetEntry<T extends TargetType> = Extract<TargetConfig, { TYPE: T }>;

/**
 * What a target kind's module (targets/<kind>/kind.ts) exports, as autopulse's targets/*.rs each implement one trait:
 * its TYPE, its schema (the very one in the list of kinds) and the factory that builds its target from an entry.
 * `relay` is the relay's config, for the relay-wide slice Plex's steps read.
 */
export interface TargetKind<T extends TargetType> {
  readonly type: T;
  readonly schema: Extract<(typeof KIND_SCHEMAS)[number], { shape: { TYPE: z.ZodLiteral<T> } }>;
  readonly create: (name: string, entry: TargetEntry<T>, log: Logger, relay: Config) => Target;
}
