import { z } from 'zod';
import { UserError } from '../../core/errors.ts';

/*
 * autopulse's settings as its serde structs read them (github:dan-online/autopulse at 55124fd,
 * crates/service/src/settings/*), for `import-autopulse`. Each section's schema names the struct it follows.
 * Where serde fills a default, so does the schema. Two kinds of field are read loosely, as the importer always
 * read them: a flag of the wrong type counts as unset (`flag`), and a setting the relay only names in a note
 * (`notedOnly`) is kept as written. A YAML key with no value (null) is an absent one, except where noted.
 */

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const unset = (v: unknown) => (v === null ? undefined : v);
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

const text = z.string({ error: (i) => (i.input === undefined || i.input === null ? 'is missing' : `must be text, got ${JSON.stringify(i.input)}`) });
const seconds = z
  .number({ error: (i) => `must be a number of seconds, got ${JSON.stringify(i.input)}` })
  .min(0, { error: (i) => `must be a number of seconds, got ${JSON.stringify(i.input)}` });
/** A field serde fills with its default when absent. */
const withDefault = <T extends z.ZodType>(schema: T, def: z.output<T>) => z.preprocess(unset, schema.optional()).transform((v) => (v ?? def) as z.output<T>);
/** Absent, or present with a value; null is refused as the importer did (`is missing`). */
const optionalText = text.optional();
const optionalSeconds = z.preprocess(unset, seconds.optional());
const flag = z.boolean().optional().catch(undefined);
const notedOnly = z.unknown().optional();
const stringList = (message: string) => z.custom<string[]>(isStringList, { error: message });
/** A sub-table read as empty when it is not a mapping, as the importer always read it. */
const looseTable = <T extends z.ZodRawShape>(shape: T) => z.preprocess((v) => (isObject(v) ? v : {}), z.object(shape));
/** A section or a map of entries: absent is empty (`#[serde(default)]`, settings/mod.rs:116-118). */
const section = <T extends z.ZodType>(schema: T) => z.preprocess((v) => v ?? {}, schema);

/* The defaults: settings/app.rs:51-64, opts.rs:72-87, targets/mod.rs:229-231, targets/command.rs:50. */
export const AUTOPULSE_PORT = 2875;
export const AUTOPULSE_DEFAULT_TIMER = 60;
export const AUTOPULSE_DATABASE_URL = 'sqlite://data/autopulse.db';
const REQUEST_TIMEOUT = 10;
const COMMAND_TIMEOUT = 10;
export const AUTOPULSE_WEBHOOK_INTERVAL = 10;
/** triggers/notify.rs:71-72: a change is reported once its file was quiet this long. */
export const AUTOPULSE_DEBOUNCE = 2;

const notAPort = (i: { input?: unknown }) => `must be a port number, got ${JSON.stringify(i.input)}`;

/** app.rs:23-49. */
const appSchema = z.object(
  {
    hostname: withDefault(text, '0.0.0.0'),
    port: withDefault(z.number({ error: notAPort }).int({ error: notAPort }).min(0, { error: notAPort }).max(65535, { error: notAPort }), AUTOPULSE_PORT), // u16
    database_url: withDefault(text, AUTOPULSE_DATABASE_URL),
    log_level: notedOnly, // LogLevel: trace, debug, info, warn, error
    api_logging: notedOnly, // bool
    base_path: notedOnly, // String, normalized (app.rs:7-21)
    secure_cookies: notedOnly, // bool
    trusted_proxies: notedOnly, // Vec<IpAddr>: carried as written, SERVER_TRUST_PROXY's schema checks it
  },
  { error: 'must be a mapping' },
);

/** auth.rs:4-24: on, admin / password unless changed. */
const authSchema = z.object(
  { enabled: flag, username: withDefault(text, 'admin'), password: withDefault(text, 'password') },
  { error: 'must be a mapping' },
);

/** opts.rs:38-70. */
const optsSchema = z.object(
  {
    check_path: flag,
    max_retries: notedOnly, // i32
    default_timer_wait: withDefault(seconds, AUTOPULSE_DEFAULT_TIMER),
    // u64, default 10 days; present-but-empty still counts as given (the importer notes it).
    cleanup_days: z.unknown().optional().transform((v, ctx) => {
      if (v === undefined || v === null) return v;
      const r = seconds.safeParse(v);
      if (!r.success) r.error.issues.forEach((i) => ctx.addIssue({ code: 'custom', message: i.message }));
      return r.data;
    }),
    log_file: notedOnly, // Option<PathBuf>
    log_file_rollover: notedOnly, // LogRotation
    log_file_max_files: notedOnly, // usize
    webhook_retries: notedOnly, // u8
    webhook_timeout: notedOnly, // u64
    webhook_interval: withDefault(seconds, AUTOPULSE_WEBHOOK_INTERVAL),
  },
  { error: 'must be a mapping' },
);

export type RewriteRule = { from: string; to: string };
const isRule = (r: unknown): r is RewriteRule => isObject(r) && typeof r.from === 'string' && typeof r.to === 'string';
/** utils/src/rewrite.rs:30-66: one {from, to} or a list of them (an untagged enum). */
const rewriteSchema = z
  .unknown()
  .optional()
  .superRefine((v, ctx) => {
    if (v === undefined || v === null) return;
    if (!Array.isArray(v)) {
      if (!isRule(v)) ctx.addIssue({ code: 'custom', message: 'must have from and to' });
      return;
    }
    const bad = v.findIndex((r) => !isRule(r));
    if (bad >= 0) ctx.addIssue({ code: 'custom', path: [bad], message: 'must have from and to' });
  })
  .transform((v): RewriteRule[] => (v === undefined || v === null ? [] : (Array.isArray(v) ? v : [v]).map((r: RewriteRule) => ({ from: r.from, to: r.to }))));

const patterns = z.preprocess(unset, stringList('must be a list of regular expressions').optional());
/** path_filter.rs:4-12: include and exclude, lists of regular expressions. */
const filterSchema = z.preprocess(unset, z.object({ include: patterns, exclude: patterns }, { error: 'must hold include and exclude lists' }).optional());

/** targets/mod.rs:215-227; the importer reads a `request` that is not a mapping as absent. */
const requestSchema = looseTable({
  insecure: flag,
  timeout: withDefault(seconds, REQUEST_TIMEOUT),
  // HashMap<String, String>: the relay's REQUEST.HEADERS schema checks the values.
  headers: z.record(z.string(), z.unknown(), { error: 'must be a mapping of header names to values' }).optional(),
});

const targetBase = { rewrite: rewriteSchema, filter: filterSchema };
const httpTarget = { ...targetBase, url: text, request: requestSchema };
const PATH_MATCHES = ['case_sensitive', 'case_insensitive'];

/** targets/mod.rs:279-292: tagged by `type`, one struct a kind. */
const TARGET_KINDS = [
  z.object({ type: z.literal('plex'), ...httpTarget, token: withDefault(text, ''), refresh: flag, analyze: flag }), // plex.rs:14-33
  z
    .object({
      type: z.literal(['jellyfin', 'emby']), // emby.rs:24-46, for both
      ...httpTarget,
      token: withDefault(text, ''),
      metadata_refresh_mode: notedOnly,
      refresh_metadata: notedOnly,
      path_match: optionalText, // emby.rs:50-57
    })
    .superRefine((t, ctx) => {
      if (t.path_match !== undefined && !PATH_MATCHES.includes(t.path_match)) {
        ctx.addIssue({ code: 'custom', message: `path_match must be "case_sensitive" or "case_insensitive" (emby.rs:51-58), not ${JSON.stringify(t.path_match)}` });
      }
    }),
  z.object({ type: z.literal(['sonarr', 'radarr']), ...httpTarget, token: text }), // sonarr.rs:14-27, radarr.rs:14-27
  z.object({ type: z.literal('tdarr'), ...httpTarget, db_id: text }), // tdarr.rs:11-24
  z.object({ type: z.literal('fileflows'), ...httpTarget }), // fileflows.rs:15-26
  z.object({ type: z.literal('audiobookshelf'), ...httpTarget, token: text }), // audiobookshelf.rs:12-27
  // autopulse.rs:12-27: another autopulse, with its auth (auth.rs) and the trigger to call (manual).
  z.object({ type: z.literal('autopulse'), ...httpTarget, auth: looseTable(authSchema.shape), trigger: withDefault(text, 'manual') }),
  // command.rs:12-30: path or raw, never both (command.rs:34-36); no request.
  z
    .object({ type: z.literal('command'), ...targetBase, path: optionalText, raw: optionalText, timeout: withDefault(seconds, COMMAND_TIMEOUT) })
    .superRefine((t, ctx) => {
      if (t.path !== undefined && t.raw !== undefined) ctx.addIssue({ code: 'custom', message: 'has both path and raw (autopulse refuses this too: command.rs:34-36)' });
      else if (t.path === undefined && t.raw === undefined) ctx.addIssue({ code: 'custom', message: 'needs path or raw' });
    }),
] as const;

/** A tagged entry's error: the entry is not a mapping, or its `type` is missing, not text, or unknown. */
const tagged = (what: string, known: readonly string[]) => (i: { code: string; input?: unknown }) => {
  if (i.code === 'invalid_type') return 'must be a mapping';
  const type = isObject(i.input) ? i.input.type : undefined;
  if (type === undefined || type === null) return 'is missing';
  if (typeof type !== 'string') return `must be text, got ${JSON.stringify(type)}`;
  return `unknown ${what} type ${JSON.stringify(type)} (autopulse has ${known.join(', ')})`;
};

export const TARGET_TYPES = ['plex', 'jellyfin', 'emby', 'tdarr', 'sonarr', 'radarr', 'command', 'fileflows', 'autopulse', 'audiobookshelf'] as const;
const targetSchema = z.discriminatedUnion('type', TARGET_KINDS, { error: tagged('target', TARGET_TYPES) });
export type AutopulseTarget = z.output<typeof targetSchema>;

/** timer.rs:4-8; a `timer` that is not a mapping is read as none. */
const timerSchema = looseTable({ wait: optionalSeconds });
/** timer.rs:63-88: a timer per event, by its name in lower case. */
const eventTimersSchema = z.preprocess(
  (v) => (isObject(v) ? v : undefined),
  z.record(z.string(), timerSchema).transform((m) => Object.entries(m).map(([event, t]) => ({ event, wait: t.wait }))).optional(),
);
const triggerBase = {
  rewrite: rewriteSchema,
  timer: timerSchema,
  excludes: z.preprocess(unset, stringList('must be a list of target names').optional()),
  filter: filterSchema,
};

/** triggers/mod.rs:283-295: tagged by `type`. manual and bazarr share manual.rs:8-19, autoscan is autoscan.rs:8-19. */
export const ROUTE_TRIGGER_TYPES = ['manual', 'bazarr', 'autoscan', 'sonarr', 'radarr', 'lidarr', 'readarr', 'sportarr'] as const;
const TRIGGER_KINDS = [
  // No event_timers: autopulse reads them only on the *arr kinds, so none on these counts toward the longest wait.
  z.object({ type: z.literal(['manual', 'bazarr', 'autoscan']), ...triggerBase }),
  // sonarr.rs:9-22, radarr.rs:9-22, lidarr.rs:11-24, readarr.rs:8-21, sportarr.rs:9-22: with event_timers.
  z.object({ type: z.literal(['sonarr', 'radarr', 'lidarr', 'readarr', 'sportarr']), ...triggerBase, event_timers: eventTimersSchema }),
  // notify.rs:48-73: folders watched instead of a route. `filters` given empty (null) is refused, as before.
  z.object({
    type: z.literal('notify'),
    ...triggerBase,
    paths: z.custom<string[]>((v) => isStringList(v) && v.length > 0, { error: 'must be a list of folders' }),
    recursive: withDefault(z.boolean({ error: 'must be true or false' }), true),
    backend: z.enum(['recommended', 'polling']).optional().catch(undefined),
    filters: stringList('must be a list of regular expressions').optional(),
    debounce: withDefault(seconds, AUTOPULSE_DEBOUNCE),
  }),
] as const;
const triggerSchema = z.discriminatedUnion('type', TRIGGER_KINDS, { error: tagged('trigger', [...ROUTE_TRIGGER_TYPES, 'notify']) });
export type AutopulseTrigger = z.output<typeof triggerSchema>;

/** discord.rs:27-32: "here", "everyone", {user: id} or {role: id}. */
type MentionTarget = 'here' | 'everyone' | { user: string } | { role: string };
const isMentionTarget = (t: unknown): t is MentionTarget =>
  t === 'here' || t === 'everyone' || (isObject(t) && (typeof t.user === 'string' || typeof t.role === 'string'));
/** discord.rs:34-44: its targets, and the events it is for (none: every event). */
const mentionSchema = z.custom<{ targets: unknown[]; on?: unknown }>((m) => isObject(m) && Array.isArray(m.targets), { error: 'must have targets' }).pipe(
  z.object({
    targets: z
      .array(z.unknown())
      .superRefine((ts, ctx) => {
        const bad = ts.find((t) => !isMentionTarget(t));
        if (bad !== undefined) ctx.addIssue({ code: 'custom', message: `unknown mention ${JSON.stringify(bad)} (here, everyone, {user: id} or {role: id})` });
      })
      .transform((ts) => ts as MentionTarget[]),
    // Vec<EventType>; not a list: every event.
    on: z.array(z.unknown()).optional().catch(undefined),
  }),
);
const webhookName = z.string().optional().catch(undefined);
/** webhooks/mod.rs:75-81: tagged by `type`. */
export const WEBHOOK_TYPES = ['discord', 'hookshot', 'json'] as const;
const WEBHOOK_KINDS = [
  // discord.rs:118-143; `mentions` that is not a list is read as none.
  z.object({
    type: z.literal('discord'),
    url: text,
    avatar_url: notedOnly,
    username: webhookName,
    mentions: z.preprocess((v) => (Array.isArray(v) ? v : []), z.array(mentionSchema)),
  }),
  z.object({ type: z.literal('hookshot'), url: text, avatar_url: notedOnly, username: webhookName }), // hookshot.rs:14-19
  z.object({ type: z.literal('json'), url: text, avatar_url: notedOnly }), // json.rs:21-24: no username
] as const;
const webhookSchema = z.discriminatedUnion('type', WEBHOOK_KINDS, { error: tagged('webhook', WEBHOOK_TYPES) });
export type AutopulseWebhook = z.output<typeof webhookSchema>;

/** settings/mod.rs:346-357: a `manual` trigger is added when the file has none. */
const withManual = (v: unknown) => (isObject(v) && !('manual' in v) ? { ...v, manual: { type: 'manual' } } : v);

/** settings/mod.rs:116-142: every section may be left out. */
export const autopulseSettingsSchema = z.object({
  app: section(appSchema),
  auth: section(authSchema),
  opts: section(optsSchema),
  anchors: z.preprocess(unset, stringList('must be a list of paths').optional()),
  targets: section(z.record(z.string(), targetSchema, { error: 'must be a mapping' })),
  triggers: section(z.preprocess(withManual, z.record(z.string(), triggerSchema, { error: 'must be a mapping' }))),
  webhooks: section(z.record(z.string(), webhookSchema, { error: 'must be a mapping' })),
});
export type AutopulseSettings = z.output<typeof autopulseSettingsSchema>;
/** The sections autopulse reads; any other is noted as unknown. */
export const AUTOPULSE_SECTIONS: readonly string[] = Object.keys(autopulseSettingsSchema.shape);

/** "targets.x.rewrite[0]": the key of a setting as the user wrote it. */
const keyOf = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((key, part) => (typeof part === 'number' ? `${key}[${part}]` : key ? `${key}.${String(part)}` : String(part)), '');

/** The settings, or the first setting that is wrong, named by its key: `<source>: <key>: <what is wrong>`. */
export function parseAutopulseSettings(doc: Record<string, unknown>, source: string): AutopulseSettings {
  const parsed = autopulseSettingsSchema.safeParse(doc);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new UserError(`${source}: ${keyOf(issue.path)}: ${issue.message}`);
}
