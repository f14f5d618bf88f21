import { z } from 'zod';
import { pathMappingsSchema, type PathMappings } from '../paths/mapping.ts';
import { regexList, rewriteMode, rewriteRules, rewriteRulesSchema } from './patterns.ts';
import { pythonInt } from './python-int.ts';
import { notificationsSchema } from './notifications.ts';
import { trustProxySchema } from './trust-proxy.ts';
import { plexKeys } from './plex-keys.ts';
import { ONE_SELECTION, oneSelection, targetsSchema, triggerRouteFields, type TargetConfig } from './targets.ts';
import { scanModeSchema } from '../targets/media-browser/schema.ts';
import { nullableSeconds, positiveSeconds, seconds } from './durations.ts';
import { DRIVE_API_URL, GOOGLE_AUTH_URL, GOOGLE_TOKEN_URL } from '../google/endpoints.ts';

/*
 * The config file is a plex_autoscan config.json. Every key plex_autoscan's `base_config` knows is
 * here with plex_autoscan's default, so a key missing from a user's file means what it meant there.
 * Keys scanrelay adds are marked "scanrelay:". Types are inferred from this schema, never written twice.
 */

const str = (def: string) => z.string().default(def);
const bool = (def: boolean) => z.boolean().default(def);
const stringList = () => z.array(z.string()).default([]);
const pathMappings = () => pathMappingsSchema.default({});

/**
 * The relay's own first path segments: a SERVER_PASS starting with one would lose its scan URL to that route
 * (autopulse's /list, /stats and /status/ are served beside the dashboard: `GET /list` would answer their page).
 */
export const RESERVED_PATHS = ['metrics', 'healthz', 'health', 'api', 'triggers', 'list', 'stats', 'status'];

export { PLEX_DATABASE_PATH_DEFAULT, PLEX_SCANNER_DEFAULT, PLEX_SUPPORT_DIR_DEFAULT } from './plex-keys.ts';

export const RCLONE_BINARY_DEFAULT = '/usr/bin/rclone';

export const rcloneSchema = z
  .object({
    RC_CACHE_REFRESH: z
      .object({
        ENABLED: bool(false),
        FILE_EXISTS_TO_REMOTE_MAPPINGS: pathMappings(),
        RC_URL: str('http://localhost:5572'),
      })
      .prefault({}),
    BINARY: str(RCLONE_BINARY_DEFAULT),
    // A drive folder -> the crypt remotes that decode what lies below it (rclone.py:17-44). A lone
    // remote written as a string is taken as a list of one.
    CRYPT_MAPPINGS: z.record(z.string(), z.union([z.string().transform((s) => [s]), z.array(z.string())])).default({}),
    CONFIG: str(''),
  })
  .prefault({});

export const driveSchema = z
  .object({
    ENABLED: bool(false),
    CLIENT_ID: str(''),
    CLIENT_SECRET: str(''),
    ALLOWED: z
      .object({
        FILE_PATHS: stringList(),
        FILE_EXTENSIONS: bool(false),
        FILE_EXTENSIONS_LIST: stringList(),
        MIME_TYPES: bool(false),
        MIME_TYPES_LIST: stringList(),
      })
      .prefault({}),
    POLL_INTERVAL: positiveSeconds(120),
    DISABLE_DISK_FILE_SIZE_CHECK: bool(false),
    TEAMDRIVE: bool(false),
    TEAMDRIVES: z.array(z.string()).default([]),
    SHOW_CACHE_LOGS: bool(true),
    // scanrelay: other ways to authenticate, removed-file scans, and endpoints tests can point at fakes.
    SERVICE_ACCOUNT_FILE: str(''),
    RCLONE_REMOTE: str(''),
    SCAN_REMOVED: bool(false),
    OAUTH_AUTH_URL: str(GOOGLE_AUTH_URL),
    OAUTH_TOKEN_URL: str(GOOGLE_TOKEN_URL),
    DRIVE_API_URL: str(DRIVE_API_URL),
    // scanrelay: where the drive's scans go (config/targets.ts).
    ...triggerRouteFields,
  })
  .prefault({})
  .refine(oneSelection, ONE_SELECTION);


/** One WATCH.PATHS entry: a folder, or a folder with its own rules (autoscan's inotify `paths`). */
const watchPathSchema = z.union([
  z.string(),
  z
    .object({
      PATH: z.string().min(1),
      REWRITE: rewriteRules(),
      REWRITE_MODE: rewriteMode(),
      INCLUDE: regexList(),
      EXCLUDE: regexList(),
      PRIORITY: z.number().int().default(0),
      /** false: only what is directly in PATH, not in its sub-folders (autopulse's notify `recursive`, notify.rs:169-178). Absent: true. */
      RECURSIVE: z.boolean().optional(),
      ...triggerRouteFields,
    })
    .refine(oneSelection, ONE_SELECTION),
]);

/** scanrelay: the folder watcher (src/triggers/watch). */
export const watchSchema = z
  .object({
    ENABLED: bool(false),
    PATHS: z.array(watchPathSchema).default([]),
    INCLUDE: regexList(),
    EXCLUDE: regexList(),
    POLL: bool(false),
    POLL_INTERVAL: positiveSeconds(60),
    /** A new or changed file is taken once it stayed unchanged this long (autopulse's notify `debounce`, 2 s: notify.rs:144). */
    SETTLE: positiveSeconds(2),
  })
  .prefault({})
  .refine((w) => !w.ENABLED || w.PATHS.length > 0, { message: 'ENABLED needs at least one folder in PATHS', path: ['PATHS'] });

/**
 * SERVER_SCAN_PRIORITIES {"<n>": [substrings]}, as entries in the file's order: plex_autoscan takes the first
 * entry that matches, in the order Python read them (utils.py:170-174). JavaScript iterates integer-like keys
 * in numeric order, so the loader puts the entries back in the text's order (load.ts). `priority` is undefined
 * for a key Python's int() refuses: a path it matches gets priority 0 and no later entry is tried (utils.py:176-178).
 */
export const scanPrioritiesSchema = z
  .record(z.string(), z.array(z.string()))
  .default({})
  .transform((r) => Object.entries(r).map(([key, paths]) => ({ key, priority: pythonInt(key), paths })));

const mediaServerSchema = z
  // REWRITE: the target's own rules, from the relay's path to this server's (autoscan's per-target rewrite).
  // SCAN_MODE: as a TARGETS entry's (targets/media-browser/schema.ts).
  .object({ ENABLED: bool(false), URL: str(''), API_KEY: str(''), REWRITE: rewriteRules(), SCAN_MODE: scanModeSchema })
  .prefault({});

/** A trigger's settings on autoscan's routes: its priority and the rules that take its paths to the relay's own. */
// A number is its PRIORITY alone. Read as the object form (not a union), so a bad key inside the object is named
// in the error (`SERVER_AUTOSCAN_TRIGGERS.bazarr.ACTION: ...`) instead of a union's "Invalid input".
const autoscanTriggerSchema = z.preprocess(
  (v) => (typeof v === 'number' && Number.isInteger(v) ? { PRIORITY: v } : v),
  z.object({ PRIORITY: z.number().int().default(0), REWRITE: rewriteRules(), ...triggerRouteFields }).refine(oneSelection, ONE_SELECTION),
);

/**
 * scanrelay: autopulse's routes (docs/autopulse.md), one entry a trigger of autopulse's config, served at
 * /triggers/<name> as autopulse serves them. When any is set, /triggers/ is autopulse's and autoscan's routes
 * are not served. REWRITE: every rule in turn (autopulse's rewrite.rs), not the first that matches.
 * INCLUDE/EXCLUDE: on the rewritten path. DELAY: seconds before the scan (autopulse's timer.wait), absent =
 * SERVER_SCAN_DELAY; EVENT_DELAYS adds seconds per webhook event (eventType, lower case).
 */
export const autopulseTriggerSchema = z.object({
  TYPE: z.enum(['manual', 'bazarr', 'autoscan', 'sonarr', 'radarr', 'lidarr', 'readarr', 'sportarr']),
  REWRITE: rewriteRules(),
  INCLUDE: regexList(),
  EXCLUDE: regexList(),
  DELAY: z.number().min(0).max(Math.floor((2 ** 31 - 1) / 1000)).optional(),
  EVENT_DELAYS: z.record(z.string(), z.number().min(0)).default({}),
  TARGETS: z.array(z.string().min(1)).optional(),
  EXCLUDE_TARGETS: z.array(z.string().min(1)).optional(),
});
export type AutopulseTrigger = z.infer<typeof autopulseTriggerSchema>;

/** scanrelay: autoscan's A-Train trigger (POST /triggers/a-train/{drive}). */
export const aTrainSchema = z
  .object({
    PRIORITY: z.number().int().default(0),
    REWRITE: rewriteRules(),
    DRIVES: z.array(z.object({ ID: z.string().min(1), REWRITE: rewriteRules() })).default([]),
    ...triggerRouteFields,
  })
  .prefault({})
  .refine(oneSelection, ONE_SELECTION);

export const configSchema = z.object({
  PLEX_USER: plexKeys.USER,
  PLEX_SCANNER: plexKeys.SCANNER,
  PLEX_SUPPORT_DIR: plexKeys.SUPPORT_DIR,
  PLEX_LD_LIBRARY_PATH: plexKeys.LD_LIBRARY_PATH,
  PLEX_DATABASE_PATH: plexKeys.DATABASE_PATH,
  PLEX_LOCAL_URL: str('http://localhost:32400'),
  PLEX_EMPTY_TRASH: plexKeys.EMPTY_TRASH,
  PLEX_EMPTY_TRASH_MAX_FILES: plexKeys.EMPTY_TRASH_MAX_FILES,
  PLEX_EMPTY_TRASH_CONTROL_FILES: plexKeys.EMPTY_TRASH_CONTROL_FILES,
  PLEX_EMPTY_TRASH_ZERO_DELETED: plexKeys.EMPTY_TRASH_ZERO_DELETED,
  PLEX_WAIT_FOR_EXTERNAL_SCANNERS: plexKeys.WAIT_FOR_EXTERNAL_SCANNERS,
  PLEX_ANALYZE_TYPE: plexKeys.ANALYZE_TYPE,
  PLEX_ANALYZE_DIRECTORY: plexKeys.ANALYZE_DIRECTORY,
  PLEX_FIX_MISMATCHED: plexKeys.FIX_MISMATCHED,
  PLEX_FIX_MISMATCHED_LANG: plexKeys.FIX_MISMATCHED_LANG,
  PLEX_TOKEN: plexKeys.TOKEN,
  PLEX_CHECK_BEFORE_SCAN: plexKeys.CHECK_BEFORE_SCAN,
  SERVER_IP: str('0.0.0.0'),
  SERVER_PORT: z.number().int().min(0).max(65535).default(3467),
  // plex_autoscan generates a random one when missing; a file without it gets one at load time. Any
  // text works, as in Flask (a space or "/" is percent-encoded or typed as it is: see config/loose.ts).
  SERVER_PASS: z
    .string()
    .min(1, 'must not be empty')
    .refine((pass) => !RESERVED_PATHS.includes(pass.split('/')[0]!), {
      error: (issue) => `"${String(issue.input)}" would be taken by the relay's own route /${String(issue.input).split('/')[0]} (reserved: ${RESERVED_PATHS.join(', ')}): pick another secret`,
    })
    .optional(),
  SERVER_PATH_MAPPINGS: pathMappings(),
  SERVER_SCAN_DELAY: seconds(180),
  SERVER_MAX_FILE_CHECKS: z.number().int().min(0).default(10),
  SERVER_FILE_CHECK_DELAY: seconds(60),
  SERVER_FILE_EXIST_PATH_MAPPINGS: pathMappings(),
  SERVER_ALLOW_MANUAL_SCAN: bool(false),
  SERVER_IGNORE_LIST: stringList(),
  SERVER_USE_SQLITE: bool(false),
  SERVER_SCAN_PRIORITIES: scanPrioritiesSchema,
  SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION: bool(false),
  RCLONE: rcloneSchema,
  DOCKER_NAME: str('plex'),
  RUN_COMMAND_BEFORE_SCAN: str(''),
  RUN_COMMAND_AFTER_SCAN: str(''),
  USE_DOCKER: bool(false),
  USE_SUDO: bool(true),
  GOOGLE: driveSchema,

  // scanrelay: new keys (README "config reference").
  PLEX_ENABLED: bool(true),
  /** Check the TLS certificate of an https PLEX_LOCAL_URL (plex-keys.ts VERIFY_SSL). */
  PLEX_VERIFY_SSL: plexKeys.VERIFY_SSL,
  PLEX_REFRESH_METADATA: plexKeys.REFRESH_METADATA,
  PLEX_SCAN_METHOD: plexKeys.SCAN_METHOD,
  PLEX_SCANNER_TIMEOUT: plexKeys.SCANNER_TIMEOUT,
  PLEX_SCANNER_MAX_RETRIES: plexKeys.SCANNER_MAX_RETRIES,
  /** scanrelay: seconds before RUN_COMMAND_BEFORE_SCAN / RUN_COMMAND_AFTER_SCAN is killed (plex_autoscan had no limit). */
  RUN_COMMAND_TIMEOUT: seconds(3600),
  /** Longest wait after the first request for a folder; null = 3x SERVER_SCAN_DELAY, 0 = no cap. */
  SERVER_SCAN_DELAY_MAX: nullableSeconds(),
  SERVER_AUTH_USER: str(''),
  SERVER_AUTH_PASS: str(''),
  SERVER_RATE_LIMIT: z.number().int().min(0).default(0),
  /** scanrelay: behind a reverse proxy, which hops may name the client (rate limits, logs): see trust-proxy.ts. */
  SERVER_TRUST_PROXY: trustProxySchema,
  SERVER_METRICS: bool(true),
  NOTIFICATIONS: notificationsSchema,
  SERVER_SKIP_FILES_IN_PLEX: bool(false),
  /**
   * scanrelay: scan the nearest existing folder above one that is gone (a movie or series deleted or renamed
   * away; for a movie, its library root) so the media server drops its items. false: nothing, as in plex_autoscan.
   */
  SERVER_SCAN_REMOVED: bool(true),
  /**
   * false skips the file-exists checks entirely, for a relay that cannot see the media files. plex_autoscan
   * had no way to do this: its SERVER_MAX_FILE_CHECKS 0 still checks once (kept as it was).
   */
  SERVER_FILE_CHECKS_ENABLED: bool(true),
  /**
   * scanrelay: no target gets a scan before its files are on the relay's disk (autopulse's opts.check_path; docs/
   * scanning.md). Looked for where SERVER_FILE_EXIST_PATH_MAPPINGS says the relay sees them, only inside a library
   * folder the relay knows; first again after FIRST_CHECK_DELAY seconds, then backing off (doubling) up to
   * MAX_CHECK_DELAY; a scan none of whose files appeared within GIVE_UP_AFTER seconds fails, told as a failed
   * delivery. Off: plex_autoscan's behaviour (only Plex looks, with SERVER_MAX_FILE_CHECKS).
   */
  SERVER_WAIT_FOR_FILES: z
    .object({
      ENABLED: bool(false),
      FIRST_CHECK_DELAY: positiveSeconds(1),
      MAX_CHECK_DELAY: positiveSeconds(60),
      GIVE_UP_AFTER: z.number().positive().default(86_400),
    })
    .prefault({}),
  /** scanrelay: files that must all exist (one per mount) for any scan to be sent (autoscan's `anchors`); see MountGuard. */
  SERVER_ANCHOR_FILES: stringList(),
  /**
   * scanrelay: megabytes free below which a disk counts as full (the anchors' disks hold scans, the queue file's
   * is told); room again at twice this, so a disk at the line does not flap. 0: not checked (docs/scanning.md).
   */
  SERVER_DISK_MIN_FREE: z.number().int().min(0).default(100),
  /**
   * scanrelay: a postgres://user:pass@host:port/db URL puts the queue in PostgreSQL, shared by every relay with the
   * same URL (docs/postgres.md). Empty: the SQLite queue file (--queuefile).
   */
  SERVER_QUEUE_URL: z
    .string()
    .refine((v) => v === '' || /^postgres(ql)?:\/\/[^/]/.test(v), 'must be a postgres://user:password@host:port/database URL, or empty for the SQLite queue file')
    .default(''),
  /** scanrelay: with SERVER_QUEUE_URL, seconds a relay's claim on a delivery (and the drive lease) holds before another relay may take it over. */
  SERVER_QUEUE_LEASE: z.number().min(1).default(30),
  /** scanrelay: with SERVER_QUEUE_URL, pooled database connections a relay opens at most (besides its one listening connection). */
  SERVER_QUEUE_POOL: z.number().int().min(1).max(100).default(6),
  /** scanrelay: this relay's name in a shared queue (dashboard, logs, /metrics); empty = <hostname>:<SERVER_PORT>. */
  SERVER_RELAY_ID: str(''),
  JELLYFIN: mediaServerSchema,
  EMBY: mediaServerSchema,
  // scanrelay: autoscan-style regular-expression rewrites, all applied in order before SERVER_PATH_MAPPINGS.
  SERVER_PATH_REWRITES: rewriteRules(),
  /** scanrelay: the Plex target's own rewrite, from the relay's path to Plex's (autoscan's targets.plex[].rewrite). */
  PLEX_REWRITE: rewriteRules(),
  // scanrelay: autoscan's webhook routes POST /triggers/<name> (name -> priority, lowest first; "manual" sets
  // the manual trigger's). Served only with SERVER_AUTH_USER and SERVER_AUTH_PASS set.
  SERVER_AUTOSCAN_TRIGGERS: z
    .record(z.string().regex(/^[A-Za-z0-9._~-]+$/, 'trigger names must be one URL path segment (letters, digits, ".", "_", "~", "-")'), autoscanTriggerSchema)
    .default({ sonarr: { PRIORITY: 0, REWRITE: [] }, radarr: { PRIORITY: 0, REWRITE: [] }, lidarr: { PRIORITY: 0, REWRITE: [] }, readarr: { PRIORITY: 0, REWRITE: [] } }),
  A_TRAIN: aTrainSchema,
  WATCH: watchSchema,
  /**
   * scanrelay: named targets (docs/targets.md), name -> one server or tool by its TYPE. The PLEX_* keys, JELLYFIN
   * and EMBY are the targets `plex`, `jellyfin` and `emby` beside these (config/named-targets.ts).
   */
  TARGETS: targetsSchema,
  SERVER_AUTOPULSE_TRIGGERS: z
    .record(z.string().regex(/^[A-Za-z0-9._~-]+$/, 'trigger names must be one URL path segment (letters, digits, ".", "_", "~", "-")'), autopulseTriggerSchema)
    .default({}),
  /**
   * scanrelay: days a manual request held for its `hash` is kept waiting for its file to match (autopulse's
   * opts.cleanup_days, which deletes its rows not found after that long); then it is dropped with a warning.
   */
  SERVER_AUTOPULSE_CLEANUP_DAYS: z.number().min(0).default(10),
});

export { rewriteRulesSchema };
export type RawConfig = z.infer<typeof configSchema>;
/** The file as read and checked (a SERVER_PASS made up when it had none): what config/ works on. */
export type FileConfig = Omit<RawConfig, 'SERVER_PASS'> & { SERVER_PASS: string };

/** The keys of the three plex_autoscan servers: turned into `targets` at load (named-targets.ts), never read below config. */
export type ServerKey = Extract<keyof RawConfig, `PLEX_${string}`> | 'JELLYFIN' | 'EMBY';

/**
 * The relay's config, as everything below config/ sees it: the file's keys, with the plex_autoscan servers' keys
 * (PLEX_*, JELLYFIN, EMBY) replaced by `targets`, every target by name, built once at load.
 */
export type Config = Omit<FileConfig, ServerKey> & { targets: ReadonlyMap<string, TargetConfig> };
export type DriveConfig = z.infer<typeof driveSchema>;
export type RcloneConfig = z.infer<typeof rcloneSchema>;
export type WatchConfig = z.infer<typeof watchSchema>;
export type WatchPath = z.infer<typeof watchPathSchema>;
export type ATrainConfig = z.infer<typeof aTrainSchema>;
export type { PathMappings };

/** Keys of plex_autoscan's base_config: the ones `update_config` adds and environment variables override. */
export const PLEX_AUTOSCAN_KEYS = [
  'PLEX_USER', 'PLEX_SCANNER', 'PLEX_SUPPORT_DIR', 'PLEX_LD_LIBRARY_PATH', 'PLEX_DATABASE_PATH', 'PLEX_LOCAL_URL',
  'PLEX_EMPTY_TRASH', 'PLEX_EMPTY_TRASH_MAX_FILES', 'PLEX_EMPTY_TRASH_CONTROL_FILES', 'PLEX_EMPTY_TRASH_ZERO_DELETED',
  'PLEX_WAIT_FOR_EXTERNAL_SCANNERS', 'PLEX_ANALYZE_TYPE', 'PLEX_ANALYZE_DIRECTORY', 'PLEX_FIX_MISMATCHED',
  'PLEX_FIX_MISMATCHED_LANG', 'PLEX_TOKEN', 'PLEX_CHECK_BEFORE_SCAN', 'SERVER_IP', 'SERVER_PORT', 'SERVER_PASS',
  'SERVER_PATH_MAPPINGS', 'SERVER_SCAN_DELAY', 'SERVER_MAX_FILE_CHECKS', 'SERVER_FILE_CHECK_DELAY',
  'SERVER_FILE_EXIST_PATH_MAPPINGS', 'SERVER_ALLOW_MANUAL_SCAN', 'SERVER_IGNORE_LIST', 'SERVER_USE_SQLITE',
  'SERVER_SCAN_PRIORITIES', 'SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION', 'RCLONE', 'DOCKER_NAME',
  'RUN_COMMAND_BEFORE_SCAN', 'RUN_COMMAND_AFTER_SCAN', 'USE_DOCKER', 'USE_SUDO', 'GOOGLE',
] as const;

/** Keys old plex_autoscan files may still carry; accepted and ignored with one warning. */
export const RETIRED_KEYS: Record<string, string> = {
  PLEX_SECTION_PATH_MAPPINGS:
    'PLEX_SECTION_PATH_MAPPINGS is ignored (plex_autoscan removed it in 2019): sections always come from Plex',
};

export const KNOWN_KEYS: ReadonlySet<string> = new Set([...Object.keys(configSchema.shape), 'CLOUD']);

/** The effective SERVER_SCAN_DELAY_MAX in seconds (0 = no cap). */
export function scanDelayMax(config: Pick<Config, 'SERVER_SCAN_DELAY' | 'SERVER_SCAN_DELAY_MAX'>): number {
  return config.SERVER_SCAN_DELAY_MAX ?? config.SERVER_SCAN_DELAY * 3;
}

