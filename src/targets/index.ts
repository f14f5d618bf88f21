import type { Config } from '../config/schema.ts';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import { createTarget } from './registry.ts';

/**
 * Every target of a config, by name (`config.targets`: the TARGETS entries and the PLEX_*, JELLYFIN and EMBY keys
 * as `plex`, `jellyfin`, `emby`, built at load). Each gets its own delivery state per queued scan.
 */
export function buildTargets(config: Config, log: Logger): Promise<Target[]> {
  return Promise.all(
    [...config.targets].map(([name, entry]) => {
      // Every line a target logs names it.
      const own = log.child({ target: name });
      if (entry.TYPE !== 'plex') own.info({ type: entry.TYPE, ...('URL' in entry ? { url: entry.URL } : {}) }, `target ${name} (${entry.TYPE}) enabled`);
      return createTarget(name, entry, own, config);
    }),
  );
}
