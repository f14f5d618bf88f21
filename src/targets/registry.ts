import type { Config } from '../config/schema.ts';
import type { TargetConfig, TargetType } from '../config/targets.ts';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import type { TargetKind } from './target-kind.ts';
import * as plex from './plex/kind.ts';
import * as jellyfin from './jellyfin/kind.ts';
import * as emby from './emby/kind.ts';
import * as audiobookshelf from './audiobookshelf/kind.ts';
import * as tdarr from './tdarr/kind.ts';
import * as fileflows from './fileflows/kind.ts';
import * as sonarr from './sonarr/kind.ts';
import * as radarr from './radarr/kind.ts';
import * as command from './command/kind.ts';
import * as relay from './relay/kind.ts';
import { redactingLogger, redactorFor, redactTargetErrors, targetSecrets } from './redact.ts';

/**
 * TYPE -> the kind's module, `{ type, schema, create }` (targets/<kind>/kind.ts). The kinds are listed once, in
 * kinds-schema.ts; this map is typed by that list, so a kind left out, a TYPE the list lacks, or a kind whose schema
 * is not the list's fails the type check.
 */
export const TARGET_KINDS: { readonly [T in TargetType]: TargetKind<T> } = { plex, jellyfin, emby, audiobookshelf, tdarr, fileflows, sonarr, radarr, command, relay };

/** The target for one named entry, by its TYPE. Every target it builds describes itself (its TYPE, its server's URL). */
export function createTarget(name: string, entry: TargetConfig, log: Logger, config: Config): Target {
  const kind = TARGET_KINDS[entry.TYPE] as TargetKind<TargetType>;
  // Whatever the kind, its error texts and log lines never carry its secrets (redact.ts, docs/targets.md).
  const redact = redactorFor(targetSecrets(entry as Record<string, unknown>));
  const target = kind.create(name, entry as never, redactingLogger(log, redact), config);
  if (!target.describe) {
    const description = { type: entry.TYPE, ...('URL' in entry && entry.URL ? { url: entry.URL } : {}) };
    target.describe = () => description;
  }
  return redactTargetErrors(target, redact);
}
