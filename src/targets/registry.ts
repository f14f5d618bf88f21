import type { Config } from '../config/schema.ts';
import type { TargetConfig, TargetType } from '../config/targets.ts';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import type { TargetKind } from './target-kind.ts';
import * as plex from './plex/kind.ts';
import { redactingLogger, redactorFor, redactTargetErrors, targetSecrets } from './redact.ts';

/**
 * TYPE -> its kind's module, `{ type, schema, create }` (targets/<kind>/kind.ts). Plex's is loaded with the registry;
 * the others (other-kinds.ts) the first time a config names one: node keeps the source of every module it loads, and
 * a Plex-only relay never runs theirs (bench/README.md "Memory"). The kinds are listed once, in kinds-schema.ts; this
 * map is typed by that list, so a kind left out, a TYPE the list lacks, or a kind whose schema is not the list's
 * fails the type check.
 */
export const TARGET_KINDS: { readonly [T in TargetType]: () => Promise<TargetKind<T>> } = {
  plex: async () => plex,
  jellyfin: async () => (await otherKinds()).jellyfin,
  emby: async () => (await otherKinds()).emby,
  audiobookshelf: async () => (await otherKinds()).audiobookshelf,
  tdarr: async () => (await otherKinds()).tdarr,
  fileflows: async () => (await otherKinds()).fileflows,
  sonarr: async () => (await otherKinds()).sonarr,
  radarr: async () => (await otherKinds()).radarr,
  command: async () => (await otherKinds()).command,
  relay: async () => (await otherKinds()).relay,
};

function otherKinds() {
  return import('./other-kinds.ts');
}

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
