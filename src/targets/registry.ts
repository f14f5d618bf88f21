import type { Config } from '../config/schema.ts';
import type { TargetConfig, TargetType } from '../config/targets.ts';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import { createAudiobookshelfTarget } from './audiobookshelf/target.ts';
import { createTdarrTarget } from './tdarr/target.ts';
import { createFileflowsTarget } from './fileflows/target.ts';
import { createSonarrTarget } from './sonarr/target.ts';
import { createRadarrTarget } from './radarr/target.ts';
import { createCommandTarget } from './command/target.ts';
import { createRelayTarget } from './relay/target.ts';
import { createMediaBrowserTarget } from './media-browser/target.ts';
import { createPlexTarget } from './plex/create.ts';
import { redactingLogger, redactorFor, redactTargetErrors, targetSecrets } from './redact.ts';

/** Builds one kind's target from its `TARGETS` entry; `config` is the relay's (Plex's steps read a relay-wide slice). */
type Factory<T extends TargetType> = (name: string, entry: Extract<TargetConfig, { TYPE: T }>, log: Logger, config: Config) => Target;

/**
 * TYPE -> the kind's module (autopulse's targets/*.rs: one file a kind against one trait). One line per kind, the
 * same list as the schema's union (config/targets.ts).
 */
export const TARGET_KINDS: { [T in TargetType]: Factory<T> } = {
  plex: (name, entry, log, config) => createPlexTarget(name, entry, log, config),
  jellyfin: (name, entry, log) => createMediaBrowserTarget(name, entry, log),
  emby: (name, entry, log) => createMediaBrowserTarget(name, entry, log),
  audiobookshelf: (name, entry, log) => createAudiobookshelfTarget(name, entry, log),
  tdarr: (name, entry, log) => createTdarrTarget(name, entry, log),
  fileflows: (name, entry, log) => createFileflowsTarget(name, entry, log),
  sonarr: (name, entry, log) => createSonarrTarget(name, entry, log),
  radarr: (name, entry, log) => createRadarrTarget(name, entry, log),
  command: (name, entry, log) => createCommandTarget(name, entry, log),
  relay: (name, entry, log) => createRelayTarget(name, entry, log),
};

/** The target for one named entry, by its TYPE. Every target it builds describes itself (its TYPE, its server's URL). */
export function createTarget(name: string, entry: TargetConfig, log: Logger, config: Config): Target {
  const factory = TARGET_KINDS[entry.TYPE] as Factory<TargetType>;
  // Whatever the kind, its error texts and log lines never carry its secrets (redact.ts, docs/targets.md).
  const redact = redactorFor(targetSecrets(entry as Record<string, unknown>));
  const target = factory(name, entry as never, redactingLogger(log, redact), config);
  if (!target.describe) {
    const description = { type: entry.TYPE, ...('URL' in entry && entry.URL ? { url: entry.URL } : {}) };
    target.describe = () => description;
  }
  return redactTargetErrors(target, redact);
}
