import { parse as parseYaml, YAMLParseError } from 'yaml';
import { plexAutoscanDefaults } from '../../config/defaults.ts';
import { UserError } from '../../core/errors.ts';
import { newServerPass, parseConfig, type JsonObject } from '../../config/load.ts';

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

/**
 * autoscan's Plex target only asks Plex to refresh the folder: GET /library/sections/{id}/refresh?path=<folder>
 * for each library holding it, and nothing after (targets/plex/plex.go:77-107, targets/plex/api.go:149-167).
 * plex_autoscan's defaults, which the converted file starts from, do more: the import writes autoscan's
 * behaviour for each, and prints the line so the user sees what the plex_autoscan default would have done.
 */
const AUTOSCAN_PLEX_BEHAVIOUR: ReadonlyArray<{ key: string; value: unknown; line: string }> = [
  {
    key: 'PLEX_ANALYZE_TYPE',
    value: 'off',
    line: 'PLEX_ANALYZE_TYPE: "off", as autoscan never asks Plex to analyze (plex_autoscan\'s default "basic" analyzes each new file after its scan; set "basic" or "deep" for that)',
  },
  {
    key: 'PLEX_ANALYZE_DIRECTORY',
    value: false,
    line: "PLEX_ANALYZE_DIRECTORY: false, as autoscan (plex_autoscan's default true analyzes every item of the scanned folder, with PLEX_ANALYZE_TYPE on)",
  },
  {
    key: 'PLEX_WAIT_FOR_EXTERNAL_SCANNERS',
    value: false,
    line: "PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, as autoscan sends a scan while Plex runs its own (plex_autoscan's default true waits until Plex's own library scan ends)",
  },
];

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
      "authentication: autoscan served /triggers/ without a password when none was set; scanrelay keeps them closed (404) because these URLs carry no secret. " +
        'To open them, set SERVER_AUTH_USER and SERVER_AUTH_PASS in the config and the same username and password in each webhook; ' +
        'or point the webhooks at the secret URL http://<host>:<port>/<SERVER_PASS> instead',
    );
  }

  // --- triggers: each keeps its own rules (autoscan's per-trigger rewrite, first match wins)
  const rulesOf = (where: string, value: unknown): Rule[] => {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) problem(`${where}.rewrite`, 'must be a list of {from, to}');
    return (value as unknown[]).map((r, i) => {
      if (!isObject(r) || typeof r.from !== 'string' || (r.to !== undefined && typeof r.to !== 'string')) problem(`${where}.rewrite[${i}]`, 'must have a from (and a to) string');
      return { from: (r as JsonObject).from as string, to: ((r as JsonObject).to as string | undefined) ?? '' };
    });
  };
  const patternsOf = (where: string, value: unknown): string[] => {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) problem(where, 'must be a list of regular expressions');
    return value as string[];
  };
  const priorityOf = (where: string, value: unknown): number => {
    if (value === undefined || value === null) return 0;
    if (!Number.isInteger(value)) problem(`${where}.priority`, `must be a whole number, got ${JSON.stringify(value)}`);
    return scanrelayPriority(value as number);
  };
  /** A trigger's entry: the bare priority when it has no rules (the short form), else both. */
  const triggerEntry = (priority: number, rules: Rule[]) => (rules.length ? { PRIORITY: priority, REWRITE: rules } : priority);
  const verbosityAt: string[] = [];
  const noteVerbosity = (where: string, entry: JsonObject) => {
    if (entry.verbosity !== undefined && entry.verbosity !== null && entry.verbosity !== '') verbosityAt.push(`${where} (${String(entry.verbosity)})`);
  };

  const triggers = doc.triggers ?? {};
  if (!isObject(triggers)) problem('triggers', 'must be a mapping');
  const t = triggers as JsonObject;
  const names: Record<string, number | { PRIORITY: number; REWRITE: Rule[] }> = {};

  if (t.manual !== undefined && t.manual !== null) {
    if (!isObject(t.manual)) problem('triggers.manual', 'must be a mapping');
    const manual = t.manual as JsonObject;
    const p = priorityOf('triggers.manual', manual.priority);
    const rules = rulesOf('triggers.manual', manual.rewrite);
    if (p !== 0 || rules.length) names.manual = triggerEntry(p, rules);
    noteVerbosity('triggers.manual', manual);
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
      if (name === 'manual' || name === 'a-train') problem(`${where}.name`, `"${name}" is the ${name} trigger's route`);
      const rules = rulesOf(where, e.rewrite);
      if (name in names) notes.push(`${where}: a second trigger named ${JSON.stringify(name)}; its route is served once, with the first one's priority and rewrite`);
      else names[name] = triggerEntry(priorityOf(where, e.priority), rules);
      noteVerbosity(where, e);
      arrCount++;
    });
  }
  if (arrCount > 0 || 'manual' in names) {
    // No *arr trigger listed: keep the default names (sonarr, radarr, lidarr, readarr).
    const arr = arrCount > 0 ? names : { sonarr: 0, radarr: 0, lidarr: 0, readarr: 0, ...names };
    config.SERVER_AUTOSCAN_TRIGGERS = arr;
  }

  const aTrain = t['a-train'];
  if (aTrain !== undefined && aTrain !== null) {
    if (!isObject(aTrain)) problem('triggers.a-train', 'must be a mapping');
    const a = aTrain as JsonObject;
    const drives = a.drives ?? [];
    if (!Array.isArray(drives) || !drives.every(isObject)) problem('triggers.a-train.drives', 'must be a list of {id, rewrite}');
    config.A_TRAIN = {
      PRIORITY: priorityOf('triggers.a-train', a.priority),
      REWRITE: rulesOf('triggers.a-train', a.rewrite),
      DRIVES: (drives as JsonObject[]).map((d, i) => {
        if (typeof d.id !== 'string' || !d.id) problem(`triggers.a-train.drives[${i}].id`, 'must be the shared drive id');
        return { ID: d.id as string, REWRITE: rulesOf(`triggers.a-train.drives[${i}]`, d.rewrite) };
      }),
    };
    noteVerbosity('triggers.a-train', a);
  }

  importInotify(t.inotify, config, notes, { rulesOf, patternsOf, priorityOf, problem, noteVerbosity });
  importBernard(t.bernard, config, notes, { rulesOf, patternsOf, priorityOf, problem, noteVerbosity });
  for (const key of Object.keys(t)) {
    if (!['manual', 'a-train', 'bernard', 'inotify', ...ARR_KINDS].includes(key)) notes.push(`triggers.${key}: unknown to autoscan, not carried`);
  }

  // --- targets: each keeps its own rewrite (autoscan's targets/*: t.rewrite(scan.Folder))
  const targets = doc.targets ?? {};
  if (!isObject(targets)) problem('targets', 'must be a mapping');
  const tg = targets as JsonObject;
  const targetList = (kind: string): JsonObject[] => {
    const list = tg[kind];
    if (list === undefined || list === null) return [];
    if (!Array.isArray(list) || !list.every(isObject)) problem(`targets.${kind}`, 'must be a list of {url, token, rewrite}');
    return list as JsonObject[];
  };
  const takeFirst = (kind: 'plex' | 'jellyfin' | 'emby'): { entry: JsonObject; rules: Rule[] } | undefined => {
    const list = targetList(kind);
    list.forEach((entry, i) => {
      noteVerbosity(`targets.${kind}[${i}]`, entry);
      if (i > 0) notes.push(`targets.${kind}[${i}] (${String(entry.url ?? '')}): not carried; scanrelay sends to one ${kind} server`);
    });
    return list[0] && { entry: list[0], rules: rulesOf(`targets.${kind}[0]`, list[0].rewrite) };
  };

  for (const { key, value } of AUTOSCAN_PLEX_BEHAVIOUR) config[key] = value;
  const plex = takeFirst('plex');
  if (plex) {
    notes.push(...AUTOSCAN_PLEX_BEHAVIOUR.map((b) => b.line));
    notes.push(
      "Plex gets one scan at a time: scanrelay sends the next once Plex reports the previous one ended (its notification stream, or /activities); autoscan sent the next as soon as Plex answered the refresh",
    );
    config.PLEX_ENABLED = true;
    config.PLEX_LOCAL_URL = String(plex.entry.url ?? '');
    config.PLEX_TOKEN = String(plex.entry.token ?? '');
    config.PLEX_SCAN_METHOD = 'api';
    if (plex.rules.length) config.PLEX_REWRITE = plex.rules;
  } else {
    config.PLEX_ENABLED = false;
  }
  for (const kind of ['jellyfin', 'emby'] as const) {
    const target = takeFirst(kind);
    config[kind.toUpperCase()] = target
      ? { ENABLED: true, URL: String(target.entry.url ?? ''), API_KEY: String(target.entry.token ?? ''), ...(target.rules.length ? { REWRITE: target.rules } : {}) }
      : { ENABLED: false, URL: '', API_KEY: '' };
  }
  if (targetList('autoscan').length) notes.push('targets.autoscan: not carried (scanrelay has no autoscan target)');
  for (const key of Object.keys(tg)) {
    if (!['plex', 'jellyfin', 'emby', 'autoscan'].includes(key)) notes.push(`targets.${key}: unknown to autoscan, not carried`);
  }

  // --- what differs on purpose
  if (delay) {
    notes.push(
      `minimum-age: scanrelay scans a folder ${delay} s after its last request, as autoscan did, but never later than 3x that (${delay * 3} s) after the first, so a busy folder is still scanned; set SERVER_SCAN_DELAY_MAX to 0 for autoscan's behaviour`,
    );
  }
  if (verbosityAt.length) {
    notes.push(`verbosity: autoscan set it per trigger and target (${verbosityAt.join(', ')}); scanrelay has one log level for everything: use --loglevel DEBUG (or TRACE) when you need more`);
  }

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

interface ImportHelpers {
  rulesOf(where: string, value: unknown): Rule[];
  patternsOf(where: string, value: unknown): string[];
  priorityOf(where: string, value: unknown): number;
  problem(key: string, message: string): never;
  noteVerbosity(where: string, entry: JsonObject): void;
}

const listOf = (value: unknown, where: string, h: ImportHelpers): JsonObject[] => {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every(isObject)) h.problem(where, 'must be a list of mappings');
  return value as JsonObject[];
};

/**
 * autoscan's inotify triggers (triggers/inotify/inotify.go:17-89) -> WATCH: each watched path keeps its own
 * rules, which autoscan builds as the path's then the trigger's (append(p.Rewrite, c.Rewrite...)), and its
 * include/exclude filters, tried on the rewritten path.
 */
function importInotify(value: unknown, config: JsonObject, notes: string[], h: ImportHelpers): void {
  const list = listOf(value, 'triggers.inotify', h);
  if (!list.length) return;
  const paths: JsonObject[] = [];
  list.forEach((c, i) => {
    const where = `triggers.inotify[${i}]`;
    h.noteVerbosity(where, c);
    const priority = h.priorityOf(where, c.priority);
    const rules = h.rulesOf(where, c.rewrite);
    const include = h.patternsOf(`${where}.include`, c.include);
    const exclude = h.patternsOf(`${where}.exclude`, c.exclude);
    listOf(c.paths, `${where}.paths`, h).forEach((p, j) => {
      if (typeof p.path !== 'string' || !p.path) h.problem(`${where}.paths[${j}].path`, 'must be a folder');
      paths.push({
        PATH: p.path as string,
        REWRITE: [...h.rulesOf(`${where}.paths[${j}]`, p.rewrite), ...rules],
        INCLUDE: [...h.patternsOf(`${where}.paths[${j}].include`, p.include), ...include],
        EXCLUDE: [...h.patternsOf(`${where}.paths[${j}].exclude`, p.exclude), ...exclude],
        PRIORITY: priority,
      });
    });
  });
  if (!paths.length) {
    notes.push('triggers.inotify: no paths listed, nothing to watch; not carried');
    return;
  }
  config.WATCH = { ENABLED: true, PATHS: paths };
  notes.push(
    'triggers.inotify: carried into WATCH (each path with its rewrite, include and exclude). Beyond your filters, scanrelay leaves alone files without a media, subtitle or metadata extension ' +
      'and unfinished downloads (.part, .!qb, ...), which autoscan would have scanned; add WATCH.INCLUDE [".*"] to scan every file',
  );
}

/**
 * autoscan's bernard triggers (triggers/bernard/bernard.go:24-118): a service account and shared drive ids.
 * The drive monitor takes both (TEAMDRIVES accepts ids). Bernard's page cache in autoscan.db is not taken.
 */
function importBernard(value: unknown, config: JsonObject, notes: string[], h: ImportHelpers): void {
  const list = listOf(value, 'triggers.bernard', h);
  if (!list.length) return;
  const ids: string[] = [];
  const accounts = new Set<string>();
  list.forEach((c, i) => {
    const where = `triggers.bernard[${i}]`;
    h.noteVerbosity(where, c);
    if (typeof c.account === 'string' && c.account) accounts.add(c.account);
    const global = h.rulesOf(where, c.rewrite);
    const globalFilters = [...h.patternsOf(`${where}.include`, c.include), ...h.patternsOf(`${where}.exclude`, c.exclude)];
    if (c.cron !== undefined) notes.push(`${where}.cron: ${JSON.stringify(c.cron)} is not carried; the drive monitor polls every GOOGLE.POLL_INTERVAL seconds (default 120)`);
    if (h.priorityOf(where, c.priority) !== 0) notes.push(`${where}.priority: not carried; drive changes take SERVER_SCAN_PRIORITIES by path (add the folders there)`);
    listOf(c.drives, `${where}.drives`, h).forEach((d, j) => {
      if (typeof d.id !== 'string' || !d.id) h.problem(`${where}.drives[${j}].id`, 'must be the shared drive id');
      const id = d.id as string;
      ids.push(id);
      for (const rule of [...h.rulesOf(`${where}.drives[${j}]`, d.rewrite), ...global]) {
        notes.push(
          `${where}.drives[${j}] rewrite ${JSON.stringify(rule.from)} -> ${JSON.stringify(rule.to)}: not carried; the drive monitor names a shared drive's paths "<drive name>/..." (bernard: "/..."), ` +
            `so add to SERVER_PATH_MAPPINGS an entry whose key is the folder "${rule.to}" stands for and whose value is the drive path, e.g. {"${rule.to}": ["<name of shared drive ${id}>${rule.from.replace(/^\^/, '')}"]}`,
        );
      }
      const filters = [...h.patternsOf(`${where}.drives[${j}].include`, d.include), ...h.patternsOf(`${where}.drives[${j}].exclude`, d.exclude), ...globalFilters];
      if (filters.length) notes.push(`${where}.drives[${j}] include/exclude: not carried; the drive monitor filters with GOOGLE.ALLOWED (FILE_PATHS prefixes, FILE_EXTENSIONS_LIST), and SERVER_IGNORE_LIST for any path`);
    });
  });
  const [account] = [...accounts];
  config.GOOGLE = { ENABLED: true, SERVICE_ACCOUNT_FILE: account ?? '', TEAMDRIVE: true, TEAMDRIVES: [...new Set(ids)], POLL_INTERVAL: 120 };
  if (accounts.size > 1) notes.push(`triggers.bernard: ${accounts.size} service accounts; scanrelay uses one (${account}): share every drive with it`);
  if (!account) notes.push('triggers.bernard: no account; set GOOGLE.SERVICE_ACCOUNT_FILE to the service account key file (or authorize with `scanrelay authorize`)');
  notes.push(
    "triggers.bernard: carried into GOOGLE (the service account and the shared drive ids in TEAMDRIVES). Bernard's page cache in autoscan.db is not taken: " +
      'the drive monitor starts from the changes made after its first start',
  );
}
