import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { plexAutoscanDefaults } from '../../config/defaults.ts';
import { UserError } from '../../core/errors.ts';
import { newServerPass, parseConfig, type JsonObject } from '../../config/load.ts';
import { safeName } from './names.ts';
import { figmentValue } from '../../config/figment-value.ts';
import { isDefaultCredentials } from './default-auth.ts';

/*
 * Turns an autopulse config (config.toml, .yaml, .yml or .json, with its AUTOPULSE__ environment) into a
 * scanrelay config.json. autopulse's keys, defaults and their file:line are in docs/autopulse.md.
 */

/** notify.rs:156: autopulse's polling backend looks every 10 s. */
const AUTOPULSE_POLL_INTERVAL = 10;

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

type Rule = { from: string; to: string };

/** autopulse's defaults: settings/app.rs:54-55, opts.rs:74-85, auth.rs:19-21, conn.rs:39. */
export const AUTOPULSE_PORT = 2875;
export const AUTOPULSE_DEFAULT_TIMER = 60;
export const AUTOPULSE_DATABASE_URL = 'sqlite://data/autopulse.db';
const AUTOPULSE_REQUEST_TIMEOUT = 10; // targets/mod.rs:231
const AUTOPULSE_COMMAND_TIMEOUT = 10; // targets/command.rs:50
const AUTOPULSE_WEBHOOK_INTERVAL = 10; // opts.rs:84


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

/** Trigger types served at /triggers/<name> (triggers/mod.rs:283-295); notify watches folders instead. */
export const AUTOPULSE_ROUTE_TYPES = ['manual', 'bazarr', 'autoscan', 'sonarr', 'radarr', 'lidarr', 'readarr', 'sportarr'] as const;

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/** The file's text by its extension, as autopulse picks the parser (settings/mod.rs:283-292). */
export function parseAutopulseText(text: string, source: string): JsonObject {
  const ext = /\.([^./\\]+)$/.exec(source)?.[1]?.toLowerCase() ?? '';
  let doc: unknown;
  try {
    if (ext === 'toml') doc = parseToml(text);
    else if (ext === 'yaml' || ext === 'yml') doc = parseYaml(text);
    else if (ext === 'json') doc = JSON.parse(text);
    else throw new UserError(`${source}: unsupported config format "${ext}" (autopulse reads .toml, .yaml, .yml or .json)`);
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`${source} is not valid ${ext.toUpperCase()}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return {};
  // Plain objects (smol-toml's tables have no prototype), so the result compares and prints as JSON.
  doc = JSON.parse(JSON.stringify(doc));
  if (!isObject(doc)) throw new UserError(`${source} must hold a mapping of sections (app, auth, triggers, targets ...), not ${Array.isArray(doc) ? 'a list' : typeof doc}`);
  return doc;
}

/** figment reads an environment value with its own grammar: bare-word arrays and tables too (figment-value.ts). */
const envValue = (raw: string): unknown => figmentValue(raw);

function setPath(doc: JsonObject, path: string[], value: unknown): void {
  let at = doc;
  for (const key of path.slice(0, -1)) {
    if (!isObject(at[key])) at[key] = {};
    at = at[key] as JsonObject;
  }
  at[path[path.length - 1]!] = value as JsonObject[string];
}

/**
 * AUTOPULSE__SECTION__KEY overrides, then AUTOPULSE__...__FILE secrets (the file's text, trimmed), both
 * lower-cased and split on "__" as autopulse does (settings/mod.rs:233-255, 300-316). Returns the names used.
 */
export function applyAutopulseEnv(doc: JsonObject, env: NodeJS.ProcessEnv, readFile: (path: string) => string = (p) => readFileSync(p, 'utf8')): string[] {
  const used: string[] = [];
  const names = Object.keys(env).filter((k) => k.startsWith('AUTOPULSE__')).sort();
  const keyPath = (k: string) => k.slice('AUTOPULSE__'.length).toLowerCase().split('__').filter(Boolean);
  for (const name of names.filter((k) => !k.endsWith('__FILE'))) {
    const path = keyPath(name);
    if (!path.length) continue;
    setPath(doc, path, envValue(env[name]!));
    used.push(name);
  }
  for (const name of names.filter((k) => k.endsWith('__FILE'))) {
    const path = keyPath(name.slice(0, -'__FILE'.length));
    if (!path.length) continue;
    let text: string;
    try {
      text = readFile(env[name]!);
    } catch (err) {
      throw new UserError(`failed to read file referenced by ${name}: ${env[name]} (${(err as Error).message})`);
    }
    setPath(doc, path, text.trim());
    used.push(name);
  }
  return used;
}


export function importAutopulse(text: string, source: string, env: NodeJS.ProcessEnv = {}, readFile?: (path: string) => string): AutopulseImport {
  const doc = parseAutopulseText(text, source);
  const envUsed = applyAutopulseEnv(doc, env, readFile);

  const carried: string[] = [];
  const notes: string[] = [];
  const warnings: string[] = [];
  const problem = (key: string, message: string): never => {
    throw new UserError(`${source}: ${key}: ${message}`);
  };
  const section = (key: string): JsonObject => {
    const v = doc[key];
    if (v === undefined || v === null) return {};
    if (!isObject(v)) problem(key, 'must be a mapping');
    return v as JsonObject;
  };
  const num = (where: string, v: unknown, def: number): number => {
    if (v === undefined || v === null) return def;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) problem(where, `must be a number of seconds, got ${JSON.stringify(v)}`);
    return v as number;
  };
  const str = (where: string, v: unknown, def?: string): string => {
    if (v === undefined || v === null) {
      if (def === undefined) problem(where, 'is missing');
      return def!;
    }
    if (typeof v !== 'string') problem(where, `must be text, got ${JSON.stringify(v)}`);
    return v as string;
  };
  // autopulse's rewrite: one {from, to} or a list; every rule applies in turn (utils/src/rewrite.rs:30-85).
  const rulesOf = (where: string, v: unknown): Rule[] => {
    if (v === undefined || v === null) return [];
    const list = Array.isArray(v) ? v : [v];
    return list.map((r, i) => {
      if (!isObject(r) || typeof r.from !== 'string' || typeof r.to !== 'string') problem(`${where}.rewrite${Array.isArray(v) ? `[${i}]` : ''}`, 'must have from and to');
      return { from: (r as JsonObject).from as string, to: (r as JsonObject).to as string };
    });
  };
  // Two or more rules keep autopulse's meaning with REWRITE_MODE "all" (each in turn); one rule means the same either way.
  const rewriteOf = (rules: Rule[]): JsonObject => (rules.length === 0 ? {} : rules.length === 1 ? { REWRITE: rules } : { REWRITE: rules, REWRITE_MODE: 'all' });
  const filterOf = (where: string, v: unknown): { INCLUDE?: string[]; EXCLUDE?: string[] } => {
    if (v === undefined || v === null) return {};
    if (!isObject(v)) problem(`${where}.filter`, 'must hold include and exclude lists');
    const f = v as JsonObject;
    const list = (k: 'include' | 'exclude') => {
      const l = f[k];
      if (l === undefined || l === null) return undefined;
      if (!Array.isArray(l) || !l.every((s) => typeof s === 'string')) problem(`${where}.filter.${k}`, 'must be a list of regular expressions');
      return (l as string[]).length ? (l as string[]) : undefined;
    };
    const out: { INCLUDE?: string[]; EXCLUDE?: string[] } = {};
    const inc = list('include');
    const exc = list('exclude');
    if (inc) out.INCLUDE = inc;
    if (exc) out.EXCLUDE = exc;
    return out;
  };

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
  if (envUsed.length) carried.push(`environment: ${envUsed.join(', ')}`);

  // --- app
  const app = section('app');
  config.SERVER_IP = str('app.hostname', app.hostname, '0.0.0.0');
  const port = app.port ?? AUTOPULSE_PORT;
  if (!Number.isInteger(port) || (port as number) < 0 || (port as number) > 65535) problem('app.port', `must be a port number, got ${JSON.stringify(port)}`);
  config.SERVER_PORT = port;
  carried.push(`app.hostname, app.port -> SERVER_IP ${String(config.SERVER_IP)}, SERVER_PORT ${String(port)}`);
  const databaseUrl = str('app.database_url', app.database_url, AUTOPULSE_DATABASE_URL);
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    config.SERVER_QUEUE_URL = databaseUrl;
    carried.push('app.database_url (PostgreSQL) -> SERVER_QUEUE_URL: the queue lives in the same database, in its own tables');
  } else {
    notes.push(`app.database_url: ${databaseUrl} is autopulse's SQLite file; scanrelay keeps its own queue (queue.db beside the config). Give this file with --database to take its pending scans over`);
  }
  if (app.log_level !== undefined) notes.push(`app.log_level: not carried; start scanrelay with --loglevel ${String(app.log_level).toUpperCase()}`);
  if (app.api_logging) notes.push('app.api_logging: not carried; --loglevel DEBUG logs each request');
  // server/src/lib.rs:42-59: base_path mounts only the web UI; /triggers/, /list, /status/, /stats stay at the root.
  if (app.base_path) notes.push(`app.base_path: ${JSON.stringify(app.base_path)} moved only autopulse's web UI; its API (/triggers/, /list, /status/, /stats) was at the root, as scanrelay's is, so senders change only host and port. scanrelay's dashboard is at /<SERVER_PASS>, not under ${JSON.stringify(app.base_path)}`);
  if (app.secure_cookies !== undefined) notes.push("app.secure_cookies: not carried (scanrelay's dashboard has no session cookie)");
  if (Array.isArray(app.trusted_proxies) && app.trusted_proxies.length) {
    config.SERVER_TRUST_PROXY = app.trusted_proxies as string[];
    carried.push('app.trusted_proxies -> SERVER_TRUST_PROXY');
  }

  // --- auth
  const auth = section('auth');
  const user = str('auth.username', auth.username, 'admin');
  const pass = str('auth.password', auth.password, 'password');
  if (auth.enabled === false) {
    config.SERVER_AUTH_USER = '';
    config.SERVER_AUTH_PASS = '';
    notes.push(
      "auth.enabled: false: autopulse served its routes to anyone; scanrelay serves /triggers/ only with SERVER_AUTH_USER and SERVER_AUTH_PASS set (they carry no secret). Set both, and the same in Sonarr's/Radarr's webhook, or your routes answer 404",
    );
  } else {
    config.SERVER_AUTH_USER = user;
    config.SERVER_AUTH_PASS = pass;
    carried.push('auth.username, auth.password -> SERVER_AUTH_USER, SERVER_AUTH_PASS (Basic auth on /triggers/)');
    if (isDefaultCredentials(user, pass)) {
      warnings.push(
        "!!! auth: autopulse's DEFAULT username and password (admin / password) were carried over, so your webhooks on this machine and your home network keep working; the relay refuses them (401) from any other address and warns at every start. Run import-autopulse again with --new-password (and --force) to write a strong password and print what to change in each *arr, or set SERVER_AUTH_USER and SERVER_AUTH_PASS yourself, then the same in every webhook !!!",
      );
    }
  }

  // --- opts
  const opts = section('opts');
  const defaultWait = num('opts.default_timer_wait', opts.default_timer_wait, AUTOPULSE_DEFAULT_TIMER);
  config.SERVER_SCAN_DELAY = defaultWait;
  carried.push(`opts.default_timer_wait -> SERVER_SCAN_DELAY ${defaultWait} s`);
  const checkPath = opts.check_path === true;
  config.SERVER_FILE_CHECKS_ENABLED = checkPath;
  if (checkPath) carried.push('opts.check_path -> SERVER_FILE_CHECKS_ENABLED');
  else notes.push("opts.check_path is off (autopulse's default): SERVER_FILE_CHECKS_ENABLED is false, so scans are not held until the file exists (scanrelay's own default is true; turn it on if your paths are visible to the relay)");
  if (opts.max_retries !== undefined) notes.push(`opts.max_retries (${String(opts.max_retries)}): not carried; scanrelay retries a target that cannot scan yet with its own backoff (docs/scanning.md)`);
  if (opts.cleanup_days !== undefined) {
    // runner.rs:332-347: rows not found (or failed) are deleted after cleanup_days; here it bounds a request held for
    // its hash. Finished scans are history, pruned by count.
    config.SERVER_AUTOPULSE_CLEANUP_DAYS = num('opts.cleanup_days', opts.cleanup_days, 10);
    carried.push(`opts.cleanup_days -> SERVER_AUTOPULSE_CLEANUP_DAYS ${String(config.SERVER_AUTOPULSE_CLEANUP_DAYS)} (a request held for its hash waits that long at most)`);
    notes.push('opts.cleanup_days: finished and failed scans are not deleted by age; scanrelay keeps the last 10,000 as history');
  }
  for (const k of ['log_file', 'log_file_rollover', 'log_file_max_files'] as const) {
    if (opts[k] !== undefined) notes.push(`opts.${k}: not carried; use --logfile (rotation: your log rotator)`);
  }
  for (const k of ['webhook_retries', 'webhook_timeout'] as const) {
    if (opts[k] !== undefined) notes.push(`opts.${k}: not carried; notifications are retried until NOTIFICATIONS.<name>.GIVE_UP_AFTER`);
  }
  const batchSeconds = num('opts.webhook_interval', opts.webhook_interval, AUTOPULSE_WEBHOOK_INTERVAL);

  // --- anchors
  if (doc.anchors !== undefined && doc.anchors !== null) {
    if (!Array.isArray(doc.anchors) || !doc.anchors.every((a) => typeof a === 'string')) problem('anchors', 'must be a list of paths');
    if ((doc.anchors as string[]).length) {
      config.SERVER_ANCHOR_FILES = doc.anchors as string[];
      carried.push('anchors -> SERVER_ANCHOR_FILES');
    }
  }

  // --- targets
  const targets = section('targets');
  const TARGETS: JsonObject = {};
  const targetNames = new Map<string, string>();
  for (const [name, raw] of Object.entries(targets)) {
    const where = `targets.${name}`;
    if (!isObject(raw)) problem(where, 'must be a mapping');
    const t = raw as JsonObject;
    const type = str(`${where}.type`, t.type);
    const tname = safeName(name);
    if (tname !== name) notes.push(`${where}: named ${JSON.stringify(tname)} in TARGETS (a target name is letters, digits, ".", "_" and "-")`);
    targetNames.set(name, tname);
    const rules = rulesOf(where, t.rewrite);
    const entry: JsonObject = { TYPE: type === 'autopulse' ? 'relay' : type, ...rewriteOf(rules), ...filterOf(where, t.filter) };
    const request = isObject(t.request) ? t.request : {};
    const hasRequest = ['plex', 'jellyfin', 'emby', 'tdarr', 'sonarr', 'radarr', 'fileflows', 'audiobookshelf', 'autopulse'].includes(type);
    if (hasRequest) {
      if (request.headers !== undefined && !isObject(request.headers)) problem(`${where}.request.headers`, 'must be a mapping of header names to values');
      entry.REQUEST = {
        TIMEOUT: num(`${where}.request.timeout`, request.timeout, AUTOPULSE_REQUEST_TIMEOUT),
        VERIFY_SSL: request.insecure !== true,
        HEADERS: (request.headers as JsonObject | undefined) ?? {},
      };
    }
    const url = () => str(`${where}.url`, t.url);
    switch (type) {
      case 'plex': {
        entry.URL = url();
        entry.TOKEN = str(`${where}.token`, t.token, '');
        entry.SCAN_METHOD = 'api';
        // autopulse scans the file's folder and neither analyzes nor refreshes unless asked (plex.rs:20-24).
        entry.ANALYZE_TYPE = t.analyze === true ? 'basic' : 'off';
        entry.REFRESH_METADATA = t.refresh === true;
        entry.EMPTY_TRASH = false;
        if (t.analyze !== true) notes.push(`${where}: analyze is off, as autopulse's default (ANALYZE_TYPE "off"; scanrelay's own default is "basic")`);
        break;
      }
      case 'jellyfin':
      case 'emby': {
        entry.URL = url();
        entry.API_KEY = str(`${where}.token`, t.token, '');
        for (const k of ['metadata_refresh_mode', 'refresh_metadata'] as const) {
          if (t[k] !== undefined) notes.push(`${where}.${k}: not carried; scanrelay asks ${type} to scan the folder and leaves the refresh mode to the library's settings`);
        }
        // emby.rs:44-58, 167-170: how library locations are compared with paths, not how items are refreshed.
        if (t.path_match !== undefined) {
          const match = str(`${where}.path_match`, t.path_match);
          if (match !== 'case_sensitive' && match !== 'case_insensitive') problem(where, `path_match must be "case_sensitive" or "case_insensitive" (emby.rs:51-58), not ${JSON.stringify(match)}`);
          else {
            entry.PATH_MATCH = match;
            carried.push(`${where}.path_match -> PATH_MATCH "${match}" (library folders are compared with paths ${match === 'case_insensitive' ? 'ignoring ASCII case' : 'as written'})`);
          }
        }
        break;
      }
      case 'sonarr':
      case 'radarr':
        entry.URL = url();
        entry.API_KEY = str(`${where}.token`, t.token);
        break;
      case 'tdarr':
        entry.URL = url();
        entry.DB_ID = str(`${where}.db_id`, t.db_id);
        break;
      case 'fileflows':
        entry.URL = url();
        break;
      case 'audiobookshelf':
        entry.URL = url();
        entry.TOKEN = str(`${where}.token`, t.token);
        break;
      case 'autopulse': {
        entry.URL = url();
        entry.PEER = 'autopulse';
        entry.TRIGGER = str(`${where}.trigger`, t.trigger, 'manual');
        const a = isObject(t.auth) ? t.auth : {};
        if (a.enabled !== false) {
          entry.USERNAME = str(`${where}.auth.username`, a.username, 'admin');
          entry.PASSWORD = str(`${where}.auth.password`, a.password, 'password');
        }
        break;
      }
      case 'command': {
        if (t.path !== undefined && t.raw !== undefined) problem(where, 'has both path and raw (autopulse refuses this too: command.rs:34-36)');
        if (t.path !== undefined) {
          entry.COMMAND = [str(`${where}.path`, t.path)];
        } else if (t.raw !== undefined) {
          // autopulse runs `sh -c raw` with FILE_PATH set (command.rs:65-68); the relay appends the paths as
          // arguments, so a small loop sets FILE_PATH to each in turn.
          entry.COMMAND = ['sh', '-c', `for FILE_PATH do export FILE_PATH\n${str(`${where}.raw`, t.raw)}\ndone`, 'sh'];
        } else {
          problem(where, 'needs path or raw');
        }
        entry.TIMEOUT = num(`${where}.timeout`, t.timeout, AUTOPULSE_COMMAND_TIMEOUT);
        // command.rs:44-49, 63-68: autopulse runs it once per file, the file as the argument (path) or FILE_PATH (raw).
        notes.push(
          t.raw !== undefined
            ? `${where}.raw: runs once per file with FILE_PATH set to it, as in autopulse; a scan that named no file, or more than 1000, gives its folder instead`
            : `${where}.path: gets the scan's files (not its folder) as arguments, all in one run, where autopulse runs it once per file; a script that reads only its first argument should loop over "$@". A scan that named no file, or more than 1000, gives its folder instead`,
        );
        break;
      }
      default:
        problem(`${where}.type`, `unknown target type ${JSON.stringify(type)} (autopulse has plex, jellyfin, emby, tdarr, sonarr, radarr, command, fileflows, autopulse, audiobookshelf)`);
    }
    TARGETS[tname] = entry;
  }
  if (Object.keys(TARGETS).length) {
    config.TARGETS = TARGETS;
    carried.push(`targets -> TARGETS: ${Object.entries(TARGETS).map(([n, e]) => `${n} (${String((e as JsonObject).TYPE)})`).join(', ')}`);
  } else {
    notes.push('targets: none; add TARGETS entries (docs/targets.md) or nothing is scanned');
  }

  // --- triggers (autopulse adds manual when absent: settings/mod.rs:346-357)
  const triggers = section('triggers');
  if (!('manual' in triggers)) triggers.manual = { type: 'manual' };
  const routes: JsonObject = {};
  const watchPaths: JsonObject[] = [];
  let watchPoll = false;
  /** Each notify trigger's debounce (s): the watcher's one SETTLE. */
  const watchSettles: Array<[string, number]> = [];
  const watchInclude: string[] = [];
  const watchAnyFile: string[] = [];
  let maxDelay = defaultWait;
  const excludesOf = (where: string, v: unknown): string[] | undefined => {
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) problem(`${where}.excludes`, 'must be a list of target names');
    const known = (v as string[]).filter((n) => targetNames.has(n)).map((n) => targetNames.get(n)!);
    const unknown = (v as string[]).filter((n) => !targetNames.has(n));
    if (unknown.length) notes.push(`${where}.excludes: ${unknown.join(', ')} name no target; left out`);
    return known.length ? known : undefined;
  };
  for (const [name, raw] of Object.entries(triggers)) {
    const where = `triggers.${name}`;
    if (!isObject(raw)) problem(where, 'must be a mapping');
    const t = raw as JsonObject;
    const type = str(`${where}.type`, t.type);
    if (!/^[A-Za-z0-9._~-]+$/.test(name)) problem(where, 'the name must be one URL path segment');
    const rules = rulesOf(where, t.rewrite);
    const timer = isObject(t.timer) ? t.timer : {};
    const wait = timer.wait === undefined || timer.wait === null ? undefined : num(`${where}.timer.wait`, timer.wait, 0);
    const excluded = excludesOf(where, t.excludes);
    if (type === 'notify') {
      const paths = t.paths;
      if (!Array.isArray(paths) || !paths.length || !paths.every((p) => typeof p === 'string')) problem(`${where}.paths`, 'must be a list of folders');
      const filters = t.filters;
      if (filters !== undefined && (!Array.isArray(filters) || !filters.every((s) => typeof s === 'string'))) problem(`${where}.filters`, 'must be a list of regular expressions');
      // filter: on the rewritten path, as the entry's INCLUDE/EXCLUDE (docs/watch.md); filters: on the watched
      // path before the rewrite (notify.rs:106-119), as WATCH.INCLUDE.
      const f = filterOf(where, t.filter);
      // notify.rs:47-73: recursive (true), timer and excludes are the trigger's own: each of its folders keeps them.
      const recursive = t.recursive === undefined || t.recursive === null ? true : t.recursive === true ? true : t.recursive === false ? false : problem(`${where}.recursive`, 'must be true or false');
      const own: JsonObject = { ...(recursive ? {} : { RECURSIVE: false }), ...(wait !== undefined ? { DELAY: wait } : {}), ...(excluded ? { EXCLUDE_TARGETS: excluded } : {}) };
      for (const p of paths as string[]) watchPaths.push({ PATH: p, ...rewriteOf(rules), ...f, ...own });
      if (filters && (filters as string[]).length) watchInclude.push(...(filters as string[]));
      else watchAnyFile.push(where);
      if (t.backend === 'polling') watchPoll = true;
      if (wait !== undefined) maxDelay = Math.max(maxDelay, wait);
      // notify.rs:144: a change is reported once its file was quiet `debounce` seconds (2); the watcher has one setting.
      const debounce = t.debounce === undefined || t.debounce === null ? 2 : num(`${where}.debounce`, t.debounce, 0);
      watchSettles.push([where, debounce]);
      const parts = [recursive ? undefined : 'RECURSIVE false', wait !== undefined ? `DELAY ${wait} s` : undefined, excluded ? `EXCLUDE_TARGETS ${excluded.join(', ')}` : undefined].filter(Boolean);
      carried.push(`${where} (notify) -> WATCH.PATHS ${(paths as string[]).join(', ')}${parts.length ? ` (${parts.join(', ')})` : ''}`);
      continue;
    }
    if (!(AUTOPULSE_ROUTE_TYPES as readonly string[]).includes(type)) problem(`${where}.type`, `unknown trigger type ${JSON.stringify(type)} (autopulse has ${[...AUTOPULSE_ROUTE_TYPES, 'notify'].join(', ')})`);
    const entry: JsonObject = { TYPE: type, ...(rules.length ? { REWRITE: rules } : {}), ...filterOf(where, t.filter) };
    if (wait !== undefined) entry.DELAY = wait;
    maxDelay = Math.max(maxDelay, wait ?? defaultWait);
    if (excluded) entry.EXCLUDE_TARGETS = excluded;
    if (isObject(t.event_timers)) {
      const delays: Record<string, number> = {};
      for (const [ev, tm] of Object.entries(t.event_timers)) {
        const w = isObject(tm) ? tm.wait : undefined;
        if (w === undefined || w === null) continue;
        delays[ev.toLowerCase()] = num(`${where}.event_timers.${ev}.wait`, w, 0);
        // timer.rs:11-20: the event's wait adds to the trigger's, or stands alone when the trigger has none.
        maxDelay = Math.max(maxDelay, (wait ?? 0) + delays[ev.toLowerCase()]!);
      }
      if (Object.keys(delays).length) entry.EVENT_DELAYS = delays;
    }
    routes[name] = entry;
  }
  config.SERVER_AUTOPULSE_TRIGGERS = routes;
  carried.push(`triggers -> SERVER_AUTOPULSE_TRIGGERS (served at /triggers/<name>): ${Object.entries(routes).map(([n, e]) => `${n} (${String((e as JsonObject).TYPE)})`).join(', ')}`);
  if (watchPaths.length) {
    // notify.rs:151-156: the polling backend looks every 10 s.
    const settle = Math.max(...watchSettles.map(([, d]) => d));
    config.WATCH = {
      ENABLED: true,
      PATHS: watchPaths,
      POLL: watchPoll,
      ...(watchPoll ? { POLL_INTERVAL: AUTOPULSE_POLL_INTERVAL } : {}),
      ...(settle > 0 && settle !== 2 ? { SETTLE: settle } : {}),
      ...(watchInclude.length ? { INCLUDE: [...new Set(watchInclude)] } : {}),
    };
    if (watchPoll) carried.push(`notify backend polling -> WATCH.POLL, every ${AUTOPULSE_POLL_INTERVAL} s as autopulse (notify.rs:156)`);
    if (settle > 0 && settle !== 2) carried.push(`notify debounce -> WATCH.SETTLE ${settle} s (a changed file is taken once it was unchanged that long)`);
    const differ = watchSettles.filter(([, d]) => d !== settle);
    if (differ.length) notes.push(`${differ.map(([w, d]) => `${w}.debounce (${d} s)`).join(', ')}: the watcher has one WATCH.SETTLE for every folder; it is the longest, ${settle} s`);
    if (settle === 0) notes.push('notify debounce 0: WATCH.SETTLE stays 2 s, the shortest the watcher takes (a file still being written is not taken)');
    if (watchInclude.length && watchAnyFile.length) {
      notes.push(`${watchAnyFile.join(', ')}: no filters, but another notify trigger's filters are WATCH.INCLUDE, which applies to every watched folder; add a pattern that matches its files`);
    } else if (!watchInclude.length) {
      notes.push(`${watchAnyFile.join(', ')}: autopulse reported every file; without WATCH.INCLUDE the watcher takes only media, subtitle and metadata files (docs/watch.md). Set WATCH.INCLUDE to [".*"] for every file`);
    }
  }
  // autopulse scans at first request + wait and never later (triggers.rs:88-95); the cap keeps that.
  config.SERVER_SCAN_DELAY_MAX = maxDelay;
  notes.push(
    `timers: autopulse scans each file its timer's wait after the request, never later; scanrelay waits SERVER_SCAN_DELAY after a folder's last request, so SERVER_SCAN_DELAY_MAX is ${maxDelay} s (the longest wait) to keep that bound`,
  );

  // --- webhooks
  const webhooks = section('webhooks');
  const NOTIFICATIONS: JsonObject = {};
  const eventMap: Record<string, string | undefined> = { failed: 'failed', hash_mismatch: 'failed', retrying: 'waiting', processed: 'scanned', new: undefined, found: undefined };
  for (const [name, raw] of Object.entries(webhooks)) {
    const where = `webhooks.${name}`;
    if (!isObject(raw)) problem(where, 'must be a mapping');
    const w = raw as JsonObject;
    const type = str(`${where}.type`, w.type);
    if (!['discord', 'hookshot', 'json'].includes(type)) problem(`${where}.type`, `unknown webhook type ${JSON.stringify(type)} (autopulse has discord, hookshot, json)`);
    const entry: JsonObject = { TYPE: type, URL: str(`${where}.url`, w.url), BATCH_SECONDS: batchSeconds };
    if (typeof w.username === 'string' && w.username) entry.USERNAME = w.username;
    if (type === 'json') {
      // Its receivers parse autopulse's document: {events: [{event, action, trigger, files, file_count, timestamp}]} (json.rs:5-42).
      entry.FORMAT = 'autopulse';
    }
    if (w.avatar_url !== undefined) notes.push(`${where}.avatar_url: not carried (scanrelay's messages use Discord's default avatar)`);
    if (type === 'discord' && Array.isArray(w.mentions) && w.mentions.length) {
      const users = new Set<string>();
      const roles = new Set<string>();
      const on = new Set<string>();
      let here = false;
      let everyone = false;
      let onAll = false;
      w.mentions.forEach((m, i) => {
        if (!isObject(m) || !Array.isArray(m.targets)) problem(`${where}.mentions[${i}]`, 'must have targets');
        for (const target of (m as JsonObject).targets as unknown[]) {
          if (target === 'here') here = true;
          else if (target === 'everyone') everyone = true;
          else if (isObject(target) && typeof target.user === 'string') users.add(target.user);
          else if (isObject(target) && typeof target.role === 'string') roles.add(target.role);
          else problem(`${where}.mentions[${i}].targets`, `unknown mention ${JSON.stringify(target)} (here, everyone, {user: id} or {role: id})`);
        }
        const evs = (m as JsonObject).on;
        if (!Array.isArray(evs) || !evs.length) onAll = true;
        else for (const e of evs) if (typeof e === 'string' && eventMap[e]) on.add(eventMap[e]!);
      });
      entry.MENTIONS = {
        ON: onAll ? ['scanned', 'failed', 'waiting', 'recovered', 'removed'] : on.size ? [...on] : ['failed'],
        USERS: [...users],
        ROLES: [...roles],
        HERE: here,
        EVERYONE: everyone,
      };
      if (w.mentions.length > 1) notes.push(`${where}.mentions: ${w.mentions.length} entries merged into one MENTIONS (everyone named is mentioned on any of their events)`);
    }
    NOTIFICATIONS[safeName(name)] = entry;
  }
  if (Object.keys(NOTIFICATIONS).length) {
    config.NOTIFICATIONS = NOTIFICATIONS;
    carried.push(`webhooks -> NOTIFICATIONS: ${Object.keys(NOTIFICATIONS).join(', ')} (every ${batchSeconds} s, opts.webhook_interval)`);
    notes.push(
      "webhooks: autopulse's \"new\" and \"found\" events have no equivalent (scanrelay tells when a scan is done, failed, waiting or recovered); \"hash_mismatch\" is told as failed and \"retrying\" as waiting. Discord and hookshot messages use scanrelay's wording",
    );
  }

  for (const key of Object.keys(doc)) {
    if (!['app', 'auth', 'opts', 'triggers', 'targets', 'webhooks', 'anchors'].includes(key)) notes.push(`${key}: unknown to autopulse, not carried`);
  }

  // The result must load as it is (a pattern RE2 refuses is named here).
  try {
    parseConfig(config, {}, 'the converted config');
  } catch (err) {
    if (err instanceof UserError) throw new UserError(`${source} cannot be carried over as it is: ${err.message}`);
    throw err;
  }
  return { config, carried, notCarried: notes, warnings, databaseUrl };
}
