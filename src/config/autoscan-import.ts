import { parse as parseYaml, YAMLParseError } from 'yaml';
import { plexAutoscanDefaults } from './defaults.ts';
import { UserError } from './errors.ts';
import { newServerPass, parseConfig, type JsonObject } from './load.ts';

/*
 * Turns an autoscan config.yml into a scanrelay config.json. The facts about autoscan's format (key names,
 * defaults, duration syntax, priority order, rewrite semantics) are in docs/autoscan.md.
 */

export interface AutoscanImport {
  config: JsonObject;
  /** One line per setting that could not be carried over (or changed meaning), for the user to read. */
  notCarried: string[];
}

type Rule = { from: string; to: string };

const ARR_KINDS = ['sonarr', 'radarr', 'lidarr', 'readarr'] as const;
/** autoscan's defaults (cmd/autoscan main.go): port 3030, minimum-age 10m. */
const AUTOSCAN_PORT = 3030;
const AUTOSCAN_MINIMUM_AGE = '10m';

const UNIT_SECONDS: Record<string, number> = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, 'μs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/**
 * A Go duration ("10m", "2m30s", "1.5h", "300ms") in seconds. A bare number is nanoseconds, as Go's YAML
 * decoder reads an integer into a time.Duration. Undefined when the text is not a duration.
 */
export function goDurationSeconds(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? Math.round(value / 1e6) / 1000 : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text === '0' || text === '+0' || text === '-0') return 0;
  const m = /^([+-]?)((?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(text);
  if (!m) return undefined;
  let total = 0;
  for (const part of m[2]!.matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(part[1]) * UNIT_SECONDS[part[2]!]!;
  // Whole milliseconds at most: float sums such as 0.1+0.2 should not show up in a config file.
  total = Math.round(total * 1000) / 1000;
  return m[1] === '-' ? -total : total;
}

/** autoscan: higher priorities go first (default 0). scanrelay: the lowest number goes first, unmatched 0. */
export function scanrelayPriority(autoscanPriority: number): number {
  return autoscanPriority === 0 ? 0 : -autoscanPriority;
}

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

export function importAutoscan(yamlText: string, source = 'config.yml'): AutoscanImport {
  let doc: unknown;
  try {
    doc = parseYaml(yamlText);
  } catch (err) {
    if (err instanceof YAMLParseError) throw new UserError(`${source} is not valid YAML: ${err.message.split('\n')[0]}`);
    throw err;
  }
  if (doc === null || doc === undefined) doc = {};
  if (!isObject(doc)) throw new UserError(`${source} must hold a YAML mapping (autoscan's config.yml), not ${Array.isArray(doc) ? 'a list' : typeof doc}`);

  const notes: string[] = [];
  const problem = (key: string, message: string): never => {
    throw new UserError(`${source}: ${key}: ${message}`);
  };

  const config: JsonObject = {
    ...plexAutoscanDefaults(),
    SERVER_PASS: newServerPass(),
    SERVER_IP: '0.0.0.0',
    // autoscan's manual trigger is always on; it never checks that files exist (its README: minimum age).
    SERVER_ALLOW_MANUAL_SCAN: true,
    SERVER_FILE_CHECKS_ENABLED: false,
    SERVER_USE_SQLITE: true,
  };

  // --- general
  const port = doc.port ?? AUTOSCAN_PORT;
  if (!Number.isInteger(port) || (port as number) < 0 || (port as number) > 65535) problem('port', `must be a port number, got ${JSON.stringify(port)}`);
  config.SERVER_PORT = port;

  if (doc.host !== undefined) {
    const hosts = Array.isArray(doc.host) ? doc.host : [doc.host];
    const first = String(hosts[0] ?? '');
    const colon = first.lastIndexOf(':');
    const host = colon >= 0 && !first.endsWith(']') ? first.slice(0, colon) : first;
    if (host) config.SERVER_IP = host.replace(/^\[|\]$/g, '');
    if (hosts.length > 1) notes.push(`host: scanrelay listens on one address; using ${JSON.stringify(config.SERVER_IP)}, not ${hosts.slice(1).map((h) => JSON.stringify(h)).join(', ')}`);
    if (colon >= 0 && !first.endsWith(']')) notes.push(`host: the port in ${JSON.stringify(first)} is not carried; SERVER_PORT is ${port}`);
  }

  const minimumAge = doc['minimum-age'] ?? AUTOSCAN_MINIMUM_AGE;
  const delay = goDurationSeconds(minimumAge);
  if (delay === undefined || delay < 0) problem('minimum-age', `must be a duration such as "10m" or "2m30s", got ${JSON.stringify(minimumAge)}`);
  if (typeof minimumAge === 'number') notes.push(`minimum-age: ${minimumAge} has no unit, which Go reads as nanoseconds; SERVER_SCAN_DELAY is ${delay} s (add "s" or "m" if you meant otherwise)`);
  config.SERVER_SCAN_DELAY = delay;

  for (const key of ['scan-delay', 'scan-stats'] as const) {
    if (doc[key] !== undefined) notes.push(`${key}: not carried (scanrelay sends scans as they come due; see the dashboard and /metrics for counts)`);
  }

  if (doc.anchors !== undefined) {
    if (!Array.isArray(doc.anchors) || !doc.anchors.every((a) => typeof a === 'string')) problem('anchors', 'must be a list of file paths');
    config.SERVER_ANCHOR_FILES = doc.anchors;
  }

  const auth = doc.authentication;
  if (auth !== undefined && !isObject(auth)) problem('authentication', 'must hold username and password');
  const user = isObject(auth) && auth.username != null ? String(auth.username) : '';
  const pass = isObject(auth) && auth.password != null ? String(auth.password) : '';
  config.SERVER_AUTH_USER = user;
  config.SERVER_AUTH_PASS = pass;
  if (!user || !pass) {
    notes.push(
      "authentication: autoscan's /triggers/ URLs carry no secret, so scanrelay serves them only with SERVER_AUTH_USER and SERVER_AUTH_PASS set; " +
        'set both (and in each webhook), or point the webhooks at the secret URL http://<host>:<port>/<SERVER_PASS>',
    );
  }

  // --- triggers
  const rewrites: Rule[] = [];
  const ruleSets: string[] = [];
  const addRules = (where: string, value: unknown) => {
    if (value === undefined || value === null) return;
    if (!Array.isArray(value)) problem(`${where}.rewrite`, 'must be a list of {from, to}');
    const rules = (value as unknown[]).map((r, i) => {
      if (!isObject(r) || typeof r.from !== 'string' || (r.to !== undefined && typeof r.to !== 'string')) problem(`${where}.rewrite[${i}]`, 'must have a from (and a to) string');
      return { from: (r as JsonObject).from as string, to: ((r as JsonObject).to as string | undefined) ?? '' };
    });
    if (rules.length) ruleSets.push(JSON.stringify(rules));
    for (const rule of rules) if (!rewrites.some((r) => r.from === rule.from && r.to === rule.to)) rewrites.push(rule);
  };
  const priorityOf = (where: string, value: unknown): number => {
    if (value === undefined || value === null) return 0;
    if (!Number.isInteger(value)) problem(`${where}.priority`, `must be a whole number, got ${JSON.stringify(value)}`);
    return scanrelayPriority(value as number);
  };

  const triggers = doc.triggers ?? {};
  if (!isObject(triggers)) problem('triggers', 'must be a mapping');
  const t = triggers as JsonObject;
  const names: Record<string, number> = {};
  let verbosity = false;

  if (t.manual !== undefined && t.manual !== null) {
    if (!isObject(t.manual)) problem('triggers.manual', 'must be a mapping');
    const manual = t.manual as JsonObject;
    const p = priorityOf('triggers.manual', manual.priority);
    if (p !== 0) names.manual = p;
    addRules('triggers.manual', manual.rewrite);
    verbosity ||= manual.verbosity !== undefined;
  }
  let arrCount = 0;
  for (const kind of ARR_KINDS) {
    const list = t[kind];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) problem(`triggers.${kind}`, 'must be a list of triggers (each with a name)');
    (list as unknown[]).forEach((entry, i) => {
      const where = `triggers.${kind}[${i}]`;
      if (!isObject(entry)) problem(where, 'must be a mapping');
      const e = entry as JsonObject;
      const name = typeof e.name === 'string' ? e.name : '';
      if (!/^[A-Za-z0-9._~-]+$/.test(name)) problem(`${where}.name`, `must be one URL path segment (letters, digits, ".", "_", "~", "-"), got ${JSON.stringify(e.name)}`);
      if (name === 'manual') problem(`${where}.name`, '"manual" is the manual trigger\'s route');
      if (name in names) notes.push(`${where}: a second trigger named ${JSON.stringify(name)}; its route is served once, with the first one's priority`);
      else names[name] = priorityOf(where, e.priority);
      addRules(where, e.rewrite);
      verbosity ||= e.verbosity !== undefined;
      arrCount++;
    });
  }
  if (arrCount > 0 || 'manual' in names) {
    // No *arr trigger listed: keep the default names (sonarr, radarr, lidarr, readarr).
    const arr = arrCount > 0 ? names : { sonarr: 0, radarr: 0, lidarr: 0, readarr: 0, ...names };
    config.SERVER_AUTOSCAN_TRIGGERS = arr;
  }
  if (new Set(ruleSets).size > 1) {
    notes.push(
      "triggers' rewrite: autoscan applied each trigger's rules to that trigger's paths only; SERVER_PATH_REWRITES applies all of them, in order, to every path (check them with `scanrelay map <path>`)",
    );
  }
  for (const key of ['a-train', 'bernard', 'inotify']) {
    if (t[key] !== undefined && t[key] !== null) notes.push(`triggers.${key}: not carried (scanrelay has no such trigger; see its own drive monitoring and folder watching in the README)`);
  }
  for (const key of Object.keys(t)) {
    if (!['manual', 'a-train', 'bernard', 'inotify', ...ARR_KINDS].includes(key)) notes.push(`triggers.${key}: unknown to autoscan, not carried`);
  }

  // --- targets
  const targets = doc.targets ?? {};
  if (!isObject(targets)) problem('targets', 'must be a mapping');
  const tg = targets as JsonObject;
  const targetList = (kind: string): JsonObject[] => {
    const list = tg[kind];
    if (list === undefined || list === null) return [];
    if (!Array.isArray(list) || !list.every(isObject)) problem(`targets.${kind}`, 'must be a list of {url, token, rewrite}');
    return list as JsonObject[];
  };
  const targetRules: Array<{ where: string; rules: unknown }> = [];
  const takeFirst = (kind: 'plex' | 'jellyfin' | 'emby'): JsonObject | undefined => {
    const list = targetList(kind);
    list.forEach((entry, i) => {
      verbosity ||= entry.verbosity !== undefined;
      if (i > 0) notes.push(`targets.${kind}[${i}] (${String(entry.url ?? '')}): not carried; scanrelay sends to one ${kind} server`);
    });
    if (list[0]) targetRules.push({ where: `targets.${kind}[0]`, rules: list[0].rewrite });
    return list[0];
  };

  const plex = takeFirst('plex');
  if (plex) {
    config.PLEX_ENABLED = true;
    config.PLEX_LOCAL_URL = String(plex.url ?? '');
    config.PLEX_TOKEN = String(plex.token ?? '');
    config.PLEX_SCAN_METHOD = 'api';
  } else {
    config.PLEX_ENABLED = false;
  }
  for (const kind of ['jellyfin', 'emby'] as const) {
    const target = takeFirst(kind);
    config[kind.toUpperCase()] = target ? { ENABLED: true, URL: String(target.url ?? ''), API_KEY: String(target.token ?? '') } : { ENABLED: false, URL: '', API_KEY: '' };
  }
  if (targetList('autoscan').length) notes.push('targets.autoscan: not carried (scanrelay has no autoscan target)');
  for (const key of Object.keys(tg)) {
    if (!['plex', 'jellyfin', 'emby', 'autoscan'].includes(key)) notes.push(`targets.${key}: unknown to autoscan, not carried`);
  }

  // scanrelay gives every target the same path: the first target's rewrites are carried (after the
  // triggers' ones), a different set on another target cannot be.
  const withRules = targetRules.filter((r) => Array.isArray(r.rules) && r.rules.length > 0);
  if (withRules[0]) {
    addRules(withRules[0].where, withRules[0].rules);
    for (const other of withRules.slice(1)) {
      if (JSON.stringify(other.rules) !== JSON.stringify(withRules[0].rules)) {
        notes.push(`${other.where}.rewrite: not carried; scanrelay sends every target the same path (the rules of ${withRules[0].where} are used)`);
      }
    }
  }
  if (rewrites.length) config.SERVER_PATH_REWRITES = rewrites;
  if (verbosity) notes.push('verbosity: not carried (use --loglevel)');

  for (const key of Object.keys(doc)) {
    if (!['port', 'host', 'minimum-age', 'scan-delay', 'scan-stats', 'anchors', 'authentication', 'triggers', 'targets'].includes(key)) {
      notes.push(`${key}: unknown to autoscan, not carried`);
    }
  }

  // The result must load as it is; a rewrite autoscan's Go regexp accepted but JavaScript does not is named here.
  try {
    parseConfig(config, {}, 'the converted config');
  } catch (err) {
    if (err instanceof UserError) throw new UserError(`${source} cannot be carried over as it is: ${err.message}`);
    throw err;
  }
  return { config, notCarried: notes };
}
