import { UserError } from '../../core/errors.ts';
import type { Config } from '../../config/schema.ts';
import type { PlexTargetConfig } from './schema.ts';

/**
 * The relay-wide keys a Plex target's steps read, beside its own entry: the file checks before a scan, the
 * scanner's wrapper (docker or sudo) and the commands around a scan. Every Plex target shares them.
 */
const PLEX_RELAY_KEYS = [
  'SERVER_FILE_CHECKS_ENABLED',
  'SERVER_MAX_FILE_CHECKS',
  'SERVER_FILE_CHECK_DELAY',
  'SERVER_FILE_EXIST_PATH_MAPPINGS',
  'SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION',
  'SERVER_SKIP_FILES_IN_PLEX',
  'USE_DOCKER',
  'DOCKER_NAME',
  'USE_SUDO',
  'RUN_COMMAND_BEFORE_SCAN',
  'RUN_COMMAND_AFTER_SCAN',
  'RUN_COMMAND_TIMEOUT',
] as const;

/** That slice, with the one drive key (the size check of a file already in Plex) and rclone's cache refresh. */
export type PlexRelaySettings = Pick<Config, (typeof PLEX_RELAY_KEYS)[number]> & {
  GOOGLE: Pick<Config['GOOGLE'], 'DISABLE_DISK_FILE_SIZE_CHECK'>;
  RCLONE: Pick<Config['RCLONE'], 'RC_CACHE_REFRESH'>;
};

/** What one Plex target reads: its own `TARGETS` entry (the top-level PLEX_* keys for `plex`) and the relay's slice. */
export type PlexSettings = PlexTargetConfig & PlexRelaySettings;

/** A Plex target's settings from its entry and the relay's config (only the slice is kept). */
export function plexSettings(entry: PlexTargetConfig, relay: PlexRelaySettings): PlexSettings {
  const slice = Object.fromEntries(PLEX_RELAY_KEYS.map((k) => [k, relay[k]])) as Pick<Config, (typeof PLEX_RELAY_KEYS)[number]>;
  return {
    ...slice,
    GOOGLE: { DISABLE_DISK_FILE_SIZE_CHECK: relay.GOOGLE.DISABLE_DISK_FILE_SIZE_CHECK },
    RCLONE: { RC_CACHE_REFRESH: relay.RCLONE.RC_CACHE_REFRESH },
    ...entry,
  };
}

/** `auto` = the HTTP API when a token is set, else the scanner binary, as an old token-less config did. */
export function resolveScanMethod(settings: Pick<PlexTargetConfig, 'SCAN_METHOD' | 'TOKEN'>): 'api' | 'scanner' {
  if (settings.SCAN_METHOD !== 'auto') return settings.SCAN_METHOD;
  return settings.TOKEN ? 'api' : 'scanner';
}

/**
 * The Plex target the CLI's Plex commands (sections, sections+, scan) work on: `name` (--target), else the top-level
 * `plex` (the PLEX_* keys, as these commands always used), else the only Plex target there is.
 */
export function plexTargetNamed(config: Pick<Config, 'targets'> & PlexRelaySettings, name?: string): { name: string; settings: PlexSettings } {
  const plexNames = [...config.targets].filter(([, e]) => e.TYPE === 'plex').map(([n]) => n);
  const known = `Plex targets: ${plexNames.join(', ') || 'none'}`;
  let chosen = name;
  if (chosen === undefined) {
    if (config.targets.get('plex')?.TYPE === 'plex') chosen = 'plex';
    else if (plexNames.length === 1) chosen = plexNames[0]!;
    else if (plexNames.length === 0) throw new UserError('no Plex target: PLEX_ENABLED is false and TARGETS has no entry of TYPE "plex"');
    else throw new UserError(`no target is named "plex": name one with --target (${known})`);
  }
  const entry = config.targets.get(chosen);
  if (!entry) throw new UserError(`--target: no target is named "${chosen}" (${known})`);
  if (entry.TYPE !== 'plex') throw new UserError(`--target: ${chosen} is a ${entry.TYPE} target; this command works on Plex targets (${known})`);
  return { name: chosen, settings: plexSettings(entry, config) };
}

/** A Plex target's key as the user wrote it: PLEX_TOKEN for the top-level `plex`, TARGETS.<name>.TOKEN for another. */
export function plexKeyName(name: string, key: keyof PlexTargetConfig): string {
  return name === 'plex' ? `PLEX_${key === 'URL' ? 'LOCAL_URL' : key}` : `TARGETS.${name}.${key}`;
}
