import { plexAutoscanDefaults } from '../../config/defaults.ts';
import { UserError } from '../../core/errors.ts';
import { newServerPass, parseConfig, type JsonObject } from '../../config/load.ts';
import { importApp } from './import-app.ts';
import type { ImportNotes } from './import-common.ts';
import { applyAutopulseEnv, parseAutopulseText } from './import-source.ts';
import { importTargets } from './import-targets.ts';
import { importTriggers } from './import-triggers.ts';
import { importWebhooks } from './import-webhooks.ts';
import { AUTOPULSE_PORT, AUTOPULSE_SECTIONS, parseAutopulseSettings } from './settings.ts';

/*
 * Turns an autopulse config (config.toml, .yaml, .yml or .json, with its AUTOPULSE__ environment) into a
 * scanrelay config.json: read (import-source.ts), checked against autopulse's settings (settings.ts), then one
 * section at a time (import-app, import-targets, import-triggers, import-webhooks). autopulse's keys, defaults
 * and their file:line are in docs/autopulse.md.
 */

export interface AutopulseImport {
  config: JsonObject;
  /** Lines for the printout: what was carried and how. */
  carried: string[];
  /** One line per setting with no equivalent, or whose default differs, with what to do. */
  notCarried: string[];
  /** Loud warnings (default credentials). */
  warnings: string[];
  /** autopulse's database URL (app.database_url, or its default), for the pending scans. */
  databaseUrl: string;
}

/**
 * `--new-password`: the imported config's SERVER_AUTH_PASS replaced by `password`, and one line per trigger
 * saying where its sender keeps the old one (a webhook connection of an *arr, Bazarr's or a script's URL).
 */
export function withNewPassword(config: JsonObject, password: string): string[] {
  config.SERVER_AUTH_PASS = password;
  const user = String(config.SERVER_AUTH_USER ?? '');
  const port = String(config.SERVER_PORT ?? AUTOPULSE_PORT);
  const triggers = (config.SERVER_AUTOPULSE_TRIGGERS ?? {}) as Record<string, { TYPE?: string }>;
  const where: Record<string, string> = {
    sonarr: 'Sonarr: Settings > Connect > the Webhook connection',
    sportarr: 'Sportarr: Settings > Connect > the Webhook connection',
    radarr: 'Radarr: Settings > Connect > the Webhook connection',
    lidarr: 'Lidarr: Settings > Connect > the Webhook connection',
    readarr: 'Readarr: Settings > Connect > the Webhook connection',
    bazarr: "Bazarr: Settings > Notifications (or its post-processing command), where it calls",
    manual: 'every script or tool that calls',
    autoscan: 'every tool (autoscan, A-Train) that calls',
  };
  const lines = [
    `auth: SERVER_AUTH_PASS is now a new random password: ${password}`,
    `  change the password (username ${user}) in each sender, or its requests are refused (401):`,
  ];
  for (const [name, t] of Object.entries(triggers)) {
    lines.push(`  - ${where[t.TYPE ?? ''] ?? 'the sender that calls'} http://<this host>:${port}/triggers/${name}: Username ${user}, Password ${password}`);
  }
  if (Object.keys(triggers).length === 0) lines.push('  - no trigger was imported: only clients you add later need it');
  return lines;
}

export function importAutopulse(text: string, source: string, env: NodeJS.ProcessEnv = {}, readFile?: (path: string) => string): AutopulseImport {
  const doc = parseAutopulseText(text, source);
  const envUsed = applyAutopulseEnv(doc, env, readFile);
  const settings = parseAutopulseSettings(doc, source);
  const problem = (key: string, message: string): never => {
    throw new UserError(`${source}: ${key}: ${message}`);
  };

  const out: ImportNotes = { carried: [], notes: [], warnings: [] };
  const config: JsonObject = {
    ...plexAutoscanDefaults(),
    SERVER_PASS: newServerPass(),
    SERVER_USE_SQLITE: true,
    // Its targets are named entries of TARGETS; the plex_autoscan singletons stay off.
    PLEX_ENABLED: false,
    JELLYFIN: { ENABLED: false, URL: '', API_KEY: '' },
    EMBY: { ENABLED: false, URL: '', API_KEY: '' },
    // autopulse has no autoscan routes: /triggers/ is autopulse's (docs/autopulse.md).
    SERVER_AUTOSCAN_TRIGGERS: {},
  };
  if (envUsed.length) out.carried.push(`environment: ${envUsed.join(', ')}`);

  const { databaseUrl, defaultWait, batchSeconds } = importApp(settings, config, out);
  const targetNames = importTargets(settings.targets, config, out);
  importTriggers(settings.triggers, { targetNames, defaultWait, problem }, config, out);
  importWebhooks(settings.webhooks, batchSeconds, config, out);
  for (const key of Object.keys(doc)) {
    if (!AUTOPULSE_SECTIONS.includes(key)) out.notes.push(`${key}: unknown to autopulse, not carried`);
  }

  // The result must load as it is (a pattern RE2 refuses is named here).
  try {
    parseConfig(config, {}, 'the converted config');
  } catch (err) {
    if (err instanceof UserError) throw new UserError(`${source} cannot be carried over as it is: ${err.message}`);
    throw err;
  }
  return { config, carried: out.carried, notCarried: out.notes, warnings: out.warnings, databaseUrl };
}
