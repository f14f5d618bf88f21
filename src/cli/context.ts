import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { starterConfig } from '../config/defaults.ts';
import { UserError } from '../core/errors.ts';
import { configExists, loadConfigFile, PASS_FOR_THIS_RUN, writeConfigFile, type LoadedConfig } from '../config/load.ts';
import { writeServerPass } from '../config/write-pass.ts';
import { resolveSettings, type SettingName, type Settings } from '../config/settings.ts';
import { explainPermission } from '../fs/permission.ts';
import { createLogger } from '../log.ts';
import type { Logger } from '../core/logger.ts';
import { QueueUnavailableError } from '../queue/backend.ts';

/** Settings from the global options of the command being run (command line > env > default). */
export function settingsOf(cmd: Command): Settings {
  const o = cmd.optsWithGlobals() as Partial<Record<SettingName, string>>;
  return resolveSettings(o);
}

export function loggerFor(settings: Settings, opts: { pretty?: boolean; first?: Record<string, unknown> } = {}): Promise<Logger> {
  return createLogger({ level: settings.loglevel, file: settings.logfile, pretty: opts.pretty, first: opts.first });
}

/**
 * Loads the config; writes a starter file first when there is none. At the default path or one from the
 * environment (npm start, the Docker image) the relay then starts at once. A --config that names no file
 * is more likely a typo: the starter file is written there and the command stops, as plex_autoscan does
 * (config.py:287-289 writes the default config, config.py:313-314 exits), instead of serving a new secret.
 */
export function loadOrCreateConfig(settings: Settings, log: Logger): LoadedConfig & { created: boolean } {
  const created = !configExists(settings.config);
  if (created) {
    writeConfigFile(settings.config, starterConfig());
    if (settings.configFrom === 'option') {
      throw new UserError(
        `--config ${settings.config} did not exist: wrote a starter config there and stopped. ` +
          `If you meant an existing file, check the path; otherwise set PLEX_TOKEN, PLEX_LOCAL_URL and SERVER_PATH_MAPPINGS in it and start again.`,
      );
    }
    log.info({ config: settings.config }, `no config file found: wrote a new one to ${settings.config}`);
  }
  const loaded = loadConfigFile(settings.config);
  for (const n of loaded.notices) log.info(n);
  const kept = loaded.passGenerated ? keepGeneratedPass(settings.config, loaded.config.SERVER_PASS, log) : false;
  for (const w of loaded.warnings) if (!(kept && w === PASS_FOR_THIS_RUN)) log.warn(w);
  // A secret written now is new to the user: the full scan URL is logged once, as for a new file.
  return { ...loaded, created: created || kept };
}

/**
 * A file without SERVER_PASS: the secret made up for this run is written into it (write-pass.ts), so the scan
 * URL the log shows is the one in the file and survives a restart. False when the file cannot be written
 * (read-only, a single-file bind mount): then the secret holds for this run only, with the usual warning.
 */
function keepGeneratedPass(path: string, pass: string, log: Logger): boolean {
  try {
    const mode = writeServerPass(path, pass);
    log.info({ config: path, mode: `0${mode.toString(8)}` }, `SERVER_PASS was not set: wrote a new random one into ${path} (its mode 0${mode.toString(8)} kept), so the scan URL stays the same across restarts`);
    return true;
  } catch (err) {
    log.warn({ config: path, err: (err as Error).message }, `SERVER_PASS is not set and could not be written into ${path} (${(err as Error).message})`);
    return false;
  }
}

/** Loads an existing config without creating one (commands other than server). */
export function loadExistingConfig(settings: Settings): LoadedConfig {
  if (!configExists(settings.config)) {
    throw new UserError(`config file ${settings.config} does not exist: run "scanrelay server" once to create it, or pass --config`);
  }
  return loadConfigFile(settings.config);
}

/** The text of a file the user named to a command (another program's config to import), or one line saying why not. */
export function readNamedFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

/** Runs a command action, turning user errors (and permission errors) into one line on stderr and their exit status. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (caught) {
      const err = explainPermission(caught);
      // The shared queue's database went away while the command ran: its message names the URL without password.
      if (err instanceof UserError || err instanceof QueueUnavailableError) {
        process.stderr.write(`scanrelay: ${err.message}\n`);
        process.exit(err instanceof UserError ? err.exitCode : 2);
      }
      throw err;
    }
  };
}
