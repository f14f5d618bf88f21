import type { Config } from '../config/schema.ts';
import type { TargetConfig, TargetType } from '../config/targets.ts';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../log.ts';
import { createEmbyTarget } from './emby/target.ts';
import { createJellyfinTarget } from './jellyfin/target.ts';
import { createPlexTarget } from './plex/create.ts';

/** Builds one kind's target from its `TARGETS` entry; `config` is the relay's (Plex's steps read relay-wide keys). */
type Factory<T extends TargetType> = (name: string, entry: Extract<TargetConfig, { TYPE: T }>, log: Logger, config: Config) => Target;

/**
 * TYPE -> the kind's module (autopulse's targets/*.rs: one file a kind against one trait). One line per kind, the
 * same list as the schema's union (config/targets.ts).
 */
export const TARGET_KINDS: { [T in TargetType]: Factory<T> } = {
  plex: (name, entry, log, config) => createPlexTarget(name, entry, log, config),
  jellyfin: (name, entry, log) => createJellyfinTarget(name, entry, log),
  emby: (name, entry, log) => createEmbyTarget(name, entry, log),
  // New kinds (issue 39, branch "kinds"): audiobookshelf, tdarr, fileflows, sonarr, radarr, command, relay.
};

/** The target for one named entry, by its TYPE. */
export function createTarget(name: string, entry: TargetConfig, log: Logger, config: Config): Target {
  const factory = TARGET_KINDS[entry.TYPE] as Factory<TargetType>;
  return factory(name, entry as never, log, config);
}
