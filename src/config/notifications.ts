import { z } from 'zod';
import { DEFAULT_EVENT_KINDS, notifyEventKindSchema } from '../core/events.ts';
import { positiveSeconds, seconds } from './durations.ts';

/** The services a NOTIFICATIONS entry can send to (docs/notifications.md has each one's set-up). */
export const notificationTypeSchema = z.enum(['discord', 'json', 'hookshot', 'apprise', 'ntfy', 'gotify']);
export type NotificationType = z.infer<typeof notificationTypeSchema>;


/** Discord takes at most 100 user and 100 role ids in allowed_mentions, each once (else 400): checked here, not at the first failure. */
const mentionIds = (what: string) =>
  z
    .array(z.string().regex(/^\d+$/, `a Discord ${what} id is digits`))
    .max(100, `Discord mentions at most 100 ${what}s in one message`)
    .transform((ids) => [...new Set(ids)])
    .default([]);

/**
 * Who a Discord message mentions when it tells of one of `ON` (autopulse's mentions: crates/service/src/settings/
 * webhooks/discord.rs:34-44). Ids are Discord's snowflakes.
 */
const mentionSchema = z
  .object({
    ON: z.array(notifyEventKindSchema).default(['failed']),
    USERS: mentionIds('user'),
    ROLES: mentionIds('role'),
    HERE: z.boolean().default(false),
    EVERYONE: z.boolean().default(false),
  })
  .strict();
export type MentionConfig = z.infer<typeof mentionSchema>;

/**
 * MENTIONS: one entry, or a list of them, each with its own ON (autopulse's `mentions` list: an entry applies to a
 * message when the message tells of one of its events, discord.rs:239-241). Always a list once read.
 */
const mentionsSchema = z.preprocess((v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? [v] : v), z.array(mentionSchema).min(1));

/** scanrelay: one notification destination (NOTIFICATIONS.<name>). */
export const notificationSchema = z
  .object({
    TYPE: notificationTypeSchema,
    /** The webhook (Discord, hookshot, json), the topic (ntfy), the server (gotify) or its /notify URL (apprise). A credential: never shown whole. */
    URL: z.url({ protocol: /^https?$/, error: 'URL must be an http:// or https:// address' }),
    /** ntfy: an access token (Bearer); gotify: the application token; json: sent as a Bearer token. */
    TOKEN: z.string().default(''),
    /** Events sent; default scanned, failed, waiting, recovered, removed (`retrying`, one per failed try, only when named). */
    EVENTS: z.array(notifyEventKindSchema).min(1).default([...DEFAULT_EVENT_KINDS]),
    /** Only for these targets (by name); empty: every target. */
    TARGETS: z.array(z.string().min(1)).default([]),
    /** Only for requests from these triggers (Sonarr, Radarr, Manual, Drive ...; any case); empty: every trigger. */
    TRIGGERS: z.array(z.string().min(1)).default([]),
    /** Events are gathered this long into one message. */
    BATCH_SECONDS: seconds(10),
    /** Events the service kept refusing this long since their first try are dropped, with a log line. 0 would drop everything untried. */
    GIVE_UP_AFTER: positiveSeconds(6 * 3600, 'must be above 0 seconds: 0 would drop every event (the default is 21600, 6 hours)'),
    /** The name the message shows (Discord, hookshot). */
    USERNAME: z.string().min(1).max(80).default('scanrelay'),
    /** discord: the picture the message shows (autopulse's avatar_url); absent, Discord's webhook's own. */
    AVATAR_URL: z.url({ protocol: /^https?$/, error: 'AVATAR_URL must be an http:// or https:// address' }).optional(),
    MENTIONS: mentionsSchema.optional(),
    /**
     * json only: the document's shape. `scanrelay` (default) is docs/notifications.md's; `autopulse` is the one
     * autopulse's json webhook posts, for receivers written for it (import-autopulse writes it; docs/autopulse.md).
     */
    FORMAT: z.enum(['scanrelay', 'autopulse']).default('scanrelay'),
  })
  .strict()
  .superRefine((n, ctx) => {
    if (n.TYPE === 'gotify' && !n.TOKEN) ctx.addIssue({ code: 'custom', path: ['TOKEN'], message: 'gotify needs the application token (TOKEN)' });
    if (n.FORMAT !== 'scanrelay' && n.TYPE !== 'json') ctx.addIssue({ code: 'custom', path: ['FORMAT'], message: 'FORMAT is for json destinations' });
    if (n.MENTIONS && n.TYPE !== 'discord') ctx.addIssue({ code: 'custom', path: ['MENTIONS'], message: 'MENTIONS is for discord destinations' });
    if (n.AVATAR_URL && n.TYPE !== 'discord') ctx.addIssue({ code: 'custom', path: ['AVATAR_URL'], message: 'AVATAR_URL is for discord destinations' });
    // One message may mention every entry's ids together: Discord's limit holds for them all.
    for (const what of ['USERS', 'ROLES'] as const) {
      const all = new Set((n.MENTIONS ?? []).flatMap((m) => m[what]));
      if (all.size > 100) ctx.addIssue({ code: 'custom', path: ['MENTIONS'], message: `Discord mentions at most 100 ${what === 'USERS' ? 'user' : 'role'}s in one message (MENTIONS name ${all.size})` });
    }
    // Discord answers 400 to every message from a webhook name with these in it (its "Create Webhook" rules).
    if (n.TYPE === 'discord' && /clyde|discord/i.test(n.USERNAME)) ctx.addIssue({ code: 'custom', path: ['USERNAME'], message: 'Discord refuses a name with "discord" or "clyde" in it' });
  });
export type NotificationConfig = z.infer<typeof notificationSchema>;

/**
 * NOTIFICATIONS entries whose TARGETS name no target of this relay, one warning each: a misspelt name silently
 * filters everything out. Not an error: on a shared queue (SERVER_QUEUE_URL) another relay's target is a fair name.
 */
export function unknownNotificationTargets(notifications: NotificationsConfig, targets: readonly string[]): string[] {
  const known = new Set(targets.map((t) => t.toLowerCase()));
  return Object.entries(notifications).flatMap(([name, n]) =>
    n.TARGETS.filter((t) => !known.has(t.toLowerCase())).map(
      (t) => `NOTIFICATIONS.${name}.TARGETS: no target of this relay is named "${t}" (targets: ${targets.join(', ') || 'none'}); its events reach this destination only from a relay sharing the queue that has it`,
    ),
  );
}

/** Discord's webhook URLs: discord.com (its ptb. and canary. clients' too) or the older discordapp.com, /api[/v<n>]/webhooks/<id>/<token>. */
const DISCORD_WEBHOOK = /^(?:(?:ptb|canary)\.)?discord(?:app)?\.com$/;
const DISCORD_WEBHOOK_PATH = /^\/api(?:\/v\d+)?\/webhooks\/\d+\/[\w-]+\/?$/;

/**
 * `discord` destinations whose URL is not a Discord webhook URL, one warning each (a URL copied from elsewhere, a
 * channel link): every message would fail. Not an error: a local Discord stand-in (a test, a bridge) is fair. The
 * URL is a credential: the warning names its host only.
 */
export function notDiscordWebhooks(notifications: NotificationsConfig): string[] {
  return Object.entries(notifications).flatMap(([name, n]) => {
    if (n.TYPE !== 'discord') return [];
    const u = new URL(n.URL);
    if (u.protocol === 'https:' && DISCORD_WEBHOOK.test(u.hostname) && DISCORD_WEBHOOK_PATH.test(u.pathname)) return [];
    return [
      `NOTIFICATIONS.${name}.URL: ${u.protocol}//${u.host}/… is not a Discord webhook URL (https://discord.com/api/webhooks/<id>/<token>, from Server settings → Integrations → Webhooks → Copy Webhook URL); messages go there as they would to Discord`,
    ];
  });
}

/** scanrelay: NOTIFICATIONS, a map from a name (used in logs and `notify-test <name>`) to a destination. */
export const notificationsSchema = z
  .record(z.string().regex(/^[A-Za-z0-9._-]+$/, 'notification names are letters, digits, ".", "_" and "-"'), notificationSchema)
  .default({});
export type NotificationsConfig = z.infer<typeof notificationsSchema>;
