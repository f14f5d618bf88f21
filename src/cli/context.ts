import type { Command } from 'commander';
import { starterConfig } from '../config/defaults.ts';
import { UserError } from '../config/errors.ts';
import { configExists, loadConfigFile, writeConfigFile, type LoadedConfig } from '../config/load.ts';
import { resolveSettings, type SettingName, type Settings } from '../config/settings.ts';
import { createLogger, type Logger } from '../log.ts';

/** Settings from the global options of the command being run (command line > env > default). */
export function settingsOf(cmd: Command): Settings {
  const o = cmd.optsWithGlobals() as Partial<Record<SettingName, string>>;
  return resolveSettings(o);
}

export function loggerFor(settings: Settings, opts: { pretty?: boolean } = {}): Promise<Logger> {
  return createLogger({ level: settings.loglevel, file: settings.logfile, pretty: opts.pretty });
}

/** Loads the config; writes a starter file first when there is none (plex_autoscan exits there instead). */
export function loadOrCreateConfig(settings: Settings, log: Logger): LoadedConfig & { created: boolean } {
  const created = !configExists(settings.config);
  if (created) {
    writeConfigFile(settings.config, starterConfig());
    log.info({ config: settings.config }, `no config file found: wrote a new one to ${settings.config}`);
  }
  const loaded = loadConfigFile(settings.config);
  for (const n of loaded.notices) log.info(n);
  for (const w of loaded.warnings) log.warn(w);
  return { ...loaded, created };
}

/** Loads an existing config without creating one (commands other than server). */
export function loadExistingConfig(settings: Settings): LoadedConfig {
  if (!configExists(settings.config)) {
    throw new UserError(`config file ${settings.config} does not exist: run "scanrelay server" once to create it, or pass --config`);
  }
  return loadConfigFile(settings.config);
}

/** Runs a command action, turning user errors into one line on stderr and their exit status. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof UserError) {
        process.stderr.write(`scanrelay: ${err.message}\n`);
        process.exit(err.exitCode);
      }
      throw err;
    }
  };
}
