import { dirname, join, resolve } from 'node:path';
import { UserError } from '../core/errors.ts';
import type { LogLevel } from '../core/logger.ts';
import { defaultStateFiles } from '../peers/plex-autoscan/layout.ts';

/** Process-level settings, named as plex_autoscan names them. */
export interface Settings {
  config: string;
  /** Where the config path came from: a --config the user typed is not replaced by a starter file silently. */
  configFrom: 'option' | 'environment' | 'default';
  logfile: string | undefined;
  loglevel: LogLevel;
  queuefile: string;
  cachefile: string;
  tokenfile: string;
  /** Which queue and cache files plex_autoscan's layout made the defaults (one line to log), when it did. */
  layout?: string;
}


export type SettingName = Exclude<keyof Settings, 'layout' | 'configFrom'>;

const ENV_SUFFIX: Record<SettingName, string> = {
  config: 'CONFIG',
  logfile: 'LOGFILE',
  loglevel: 'LOGLEVEL',
  queuefile: 'QUEUEFILE',
  cachefile: 'CACHEFILE',
  tokenfile: 'TOKENFILE',
};

export const DEFAULT_CONFIG_PATH = './config/config.json';

/** Precedence: command line, then SCANRELAY_*, then PLEX_AUTOSCAN_*, then the default. */
export function pick(name: SettingName, cli: Partial<Record<SettingName, string>>, env: NodeJS.ProcessEnv): string | undefined {
  return cli[name] ?? env[`SCANRELAY_${ENV_SUFFIX[name]}`] ?? env[`PLEX_AUTOSCAN_${ENV_SUFFIX[name]}`];
}

export function resolveSettings(
  cli: Partial<Record<SettingName, string>>,
  env: NodeJS.ProcessEnv = process.env,
): Settings {
  const config = resolve(pick('config', cli, env) ?? DEFAULT_CONFIG_PATH);
  const beside = (file: string) => join(dirname(config), file);
  // autoscan's own variables last (cmd/autoscan/main.go:87-90): AUTOSCAN_LOG and AUTOSCAN_VERBOSITY.
  const logfile = pick('logfile', cli, env) ?? env.AUTOSCAN_LOG;
  const state = defaultStateFiles(config);
  return {
    config,
    configFrom: cli.config !== undefined ? 'option' : pick('config', {}, env) !== undefined ? 'environment' : 'default',
    logfile: logfile ? resolve(logfile) : undefined,
    loglevel: parseLogLevel(pick('loglevel', cli, env) ?? autoscanVerbosity(env.AUTOSCAN_VERBOSITY) ?? 'INFO'),
    queuefile: resolve(pick('queuefile', cli, env) ?? state.queuefile),
    cachefile: resolve(pick('cachefile', cli, env) ?? state.cachefile),
    tokenfile: resolve(pick('tokenfile', cli, env) ?? beside('token.json')),
    ...(state.note && !(pick('queuefile', cli, env) && pick('cachefile', cli, env)) ? { layout: state.note } : {}),
  };
}

/** autoscan's -v count (main.go:146-153): 0 info, 1 debug, more trace. Undefined when unset or not a count. */
function autoscanVerbosity(value: string | undefined): string | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  const n = Number(value);
  return n === 0 ? 'info' : n === 1 ? 'debug' : 'trace';
}

const LEVELS: Record<string, LogLevel> = {
  error: 'error',
  critical: 'error',
  warn: 'warn',
  warning: 'warn',
  info: 'info',
  debug: 'debug',
  trace: 'trace',
};

export function parseLogLevel(value: string): LogLevel {
  const level = LEVELS[value.trim().toLowerCase()];
  if (!level) throw new UserError(`--loglevel: expected one of WARN, INFO, DEBUG, ERROR, TRACE (any case), got "${value}"`);
  return level;
}
