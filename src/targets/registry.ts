import type { Config } from '../config/schema.ts';
import type { TargetConfig, TargetType } from '../config/targets.ts';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import type { TargetKind } from './target-kind.ts';
import { redactingLogger, redactorFor, redactTargetErrors, targetSecrets } from './redact.ts';

/**
 * TYPE -> the kind's module, `{ type, schema, create }` (targets/<kind>/kind.ts), loaded the first time a config
 * names the kind: a Plex-only relay never loads Jellyfin's, Tdarr's or the command target's code (node keeps the
 * source of every module it loads; bench/README.md "Memory"). The kinds are listed once, in kinds-schema.ts; this
 * map is typed by that list, so a kind left out, a TYPE the list lacks, or a kind whose schema is not the list's
 * fails the type check.
 */
export const TARGET_KINDS: { readonly [T in TargetType]: () => Promise<TargetKind<T>> } = {
  plex: () => import('./plex/kind.ts'),
  jellyfin: () => import('./jellyfin/kind.ts'),
  emby: () => import('./emby/kind.ts'),
  audiobookshelf: () => import('./audiobookshelf/kind.ts'),
  tdarr: () => import('./tdarr/kind.ts'),
  fileflows: () => import('./fileflows/kind.ts'),
  sonarr: () => import('./sonarr/kind.ts'),
  radarr: () => import('./radarr/kind.ts'),
  command: () => import('./command/kind.ts'),
  relay: () => import('./relay/kind.ts'),
};

/** The target for one named entry, by its TYPE. Every target it builds describes itself (its TYPE, its server's URL). */
export async function createTarget(name: string, entry: TargetConfig, log: Logger, config: Config): Promise<Target> {
  const kind = (await TARGET_KINDS[entry.TYPE]()) as TargetKind<TargetType>;
  // Whatever the kind, its error texts and log lines never carry its secrets (redact.ts, docs/targets.md).
  const redact = redactorFor(targetSecrets(entry as Record<string, unknown>));
  const target = kind.create(name, entry as never, redactingLogger(log, redact), config);
  if (!target.describe) {
    const description = { type: entry.TYPE, ...('URL' in entry && entry.URL ? { url: entry.URL } : {}) };
    target.describe = () => description;
  }
  return redactTargetErrors(target, redact);
}
