import { UserError } from '../core/errors.ts';
import type { ScanAction } from '../core/scan.ts';
import type { Config, FileConfig, ServerKey } from './schema.ts';
import { triggerSelection, type TriggerRoute } from './targets.ts';
import { plexTargetSchema, type PlexTargetConfig } from '../targets/plex/schema.ts';
import type { TargetConfig } from './targets.ts';
import { PLEX_KEY_NAMES } from './plex-keys.ts';
import { targetRequestSchema } from './target-base.ts';
import { PARSED_ONCE } from './loose.ts';

/**
 * Every target of a config file by name: the `TARGETS` entries, and the plex_autoscan keys as the entries they
 * stand for (`PLEX_*` is `plex` while PLEX_ENABLED, `JELLYFIN` and `EMBY` are `jellyfin` and `emby` while ENABLED).
 * Built once, at load (relayConfig): everything below the config sees only this map. Two entries of one name are
 * refused by checkTargets.
 */
export function namedTargets(config: FileConfig): Map<string, TargetConfig> {
  const out = new Map<string, TargetConfig>();
  const plex = legacyPlexTarget(config);
  if (plex) out.set('plex', plex);
  for (const [name, key] of [['jellyfin', 'JELLYFIN'], ['emby', 'EMBY']] as const) {
    const section = config[key];
    if (!section.ENABLED) continue;
    // The section's keys, and the defaults of everything a TARGETS entry has beyond them.
    out.set(name, { TYPE: name, URL: section.URL, API_KEY: section.API_KEY, REWRITE: section.REWRITE, REWRITE_MODE: 'first', INCLUDE: [], EXCLUDE: [], REQUEST: targetRequestSchema.parse(undefined), REFRESH_METADATA: false, METADATA_REFRESH_MODE: 'FullRefresh', PATH_MATCH: 'case_sensitive', SCAN_MODE: section.SCAN_MODE });
  }
  for (const [name, entry] of Object.entries(config.TARGETS ?? {})) if (!out.has(name)) out.set(name, entry);
  return out;
}

/** The top-level PLEX_* keys as a Plex target's entry (undefined with PLEX_ENABLED false). */
export function legacyPlexTarget(config: FileConfig): PlexTargetConfig | undefined {
  if (!config.PLEX_ENABLED) return undefined;
  const entry: Record<string, unknown> = { TYPE: 'plex', URL: config.PLEX_LOCAL_URL, REWRITE: config.PLEX_REWRITE };
  for (const key of PLEX_KEY_NAMES) if (key !== 'VERIFY_SSL') entry[key] = config[`PLEX_${key}`];
  entry.REQUEST = config.PLEX_VERIFY_SSL === undefined ? {} : { VERIFY_SSL: config.PLEX_VERIFY_SSL };
  return plexTargetSchema.parse(entry, PARSED_ONCE);
}

/**
 * The target a key of the file stands for: every PLEX_* key is the target `plex`, JELLYFIN and EMBY the targets
 * `jellyfin` and `emby`; undefined for any other key (those stay keys of the relay's config).
 */
export function targetOfServerKey(key: string): 'plex' | 'jellyfin' | 'emby' | undefined {
  if (key.startsWith('PLEX_')) return 'plex';
  if (key === 'JELLYFIN') return 'jellyfin';
  if (key === 'EMBY') return 'emby';
  return undefined;
}

/** Every key of the file that names one of the plex_autoscan servers (PLEX_*, JELLYFIN, EMBY). */
function isServerKey(key: string): key is ServerKey {
  return targetOfServerKey(key) !== undefined;
}

/** The relay's config from the file's: the servers' keys become `targets` (namedTargets), once. */
export function relayConfig(file: FileConfig): Config {
  const rest = Object.fromEntries(Object.entries(file).filter(([key]) => !isServerKey(key))) as Omit<FileConfig, ServerKey>;
  return { ...rest, targets: namedTargets(file) };
}

/** Each trigger that may name targets, by its config key, with what it says. */
export function triggerRoutes(config: Pick<Config, 'SERVER_AUTOSCAN_TRIGGERS' | 'A_TRAIN' | 'WATCH' | 'GOOGLE'>): Array<[key: string, route: TriggerRoute]> {
  const out: Array<[string, TriggerRoute]> = [];
  for (const [name, trigger] of Object.entries(config.SERVER_AUTOSCAN_TRIGGERS)) out.push([`SERVER_AUTOSCAN_TRIGGERS.${name}`, trigger as TriggerRoute]);
  out.push(['A_TRAIN', config.A_TRAIN]);
  config.WATCH.PATHS.forEach((p, i) => {
    if (typeof p !== 'string') out.push([`WATCH.PATHS.${i}`, p]);
  });
  out.push(['GOOGLE', config.GOOGLE]);
  return out;
}

/**
 * Stops the start (UserError, exit 2, one line naming the key) for two targets of one name and for a trigger
 * naming a target that does not exist. An unknown TYPE and a pattern RE2 refuses are the schema's (targets.ts,
 * patterns.ts).
 */
export function checkTargets(config: FileConfig, source = 'config'): void {
  const legacy = [
    ...(config.PLEX_ENABLED ? [['plex', 'the top-level PLEX_* keys (PLEX_ENABLED is true)']] : []),
    ...(config.JELLYFIN.ENABLED ? [['jellyfin', 'the JELLYFIN section (JELLYFIN.ENABLED is true)']] : []),
    ...(config.EMBY.ENABLED ? [['emby', 'the EMBY section (EMBY.ENABLED is true)']] : []),
  ];
  for (const [name, by] of legacy) {
    if (name! in (config.TARGETS ?? {})) {
      throw new UserError(`${source}: TARGETS.${name}: two targets are named "${name}": this entry and ${by}; rename this one, or turn the other off`);
    }
  }
  const names = [...namedTargets(config).keys()];
  for (const [key, route] of triggerRoutes(config)) {
    for (const field of ['TARGETS', 'EXCLUDE_TARGETS'] as const) {
      const missing = (route[field] ?? []).find((n) => !names.includes(n));
      if (missing !== undefined) {
        throw new UserError(`${source}: ${key}.${field}: no target is named "${missing}" (targets: ${names.join(', ') || 'none'})`);
      }
    }
  }
}

/**
 * What a trigger's own settings add to each request it makes: the targets it sends to (absent: all) and its
 * DELAY (absent: SERVER_SCAN_DELAY). The names are checked at load (checkTargets).
 */
export function triggerRouting(config: Pick<Config, 'targets'>, route: TriggerRoute | undefined): { targets?: string[]; delay?: number; action?: ScanAction } {
  const targets = triggerSelection(route, [...config.targets.keys()]);
  return {
    ...(targets ? { targets } : {}),
    ...(route?.DELAY !== undefined ? { delay: route.DELAY } : {}),
    ...(route?.ACTION !== undefined && route.ACTION !== 'scan' ? { action: route.ACTION } : {}),
  };
}
