import type { IncomingMessage } from 'node:http';
import { NotifyFake } from './notify-services.ts';

/*
 * A Discord webhook (POST /api/webhooks/<id>/<token>), no kinder than Discord: the limits are Discord's own
 * ("Execute Webhook", "Embed Limits"): content 2,000 characters, 10 embeds, an embed title 256 and a description
 * 4,096, all embeds' text together 6,000. Over any of them, invalid JSON, or an empty message: 400 with Discord's
 * error shape; so do a username with "discord" or "clyde" in it, more than 100 user or role ids in allowed_mentions, or one twice. A wrong token: 401; an unknown id: 404. Without ?wait=true a message taken is 204 No Content.
 * rateLimitNext answers 429 with Retry-After (seconds) and Discord's body (retry_after, global).
 */
const LIMITS = { content: 2000, embeds: 10, title: 256, description: 4096, total: 6000, fieldName: 256, fieldValue: 1024, fields: 25, footer: 2048, username: 80, mentionIds: 100 };

const invalidForm = (field: string, message: string) => ({
  status: 400,
  body: JSON.stringify({ code: 50035, message: 'Invalid Form Body', errors: { [field]: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message }] } } }),
});

export class DiscordFake extends NotifyFake {
  constructor(
    readonly id = '112233445566778899',
    readonly token = 'discord-webhook-token-AbCdEf',
  ) {
    super();
  }

  /** The webhook URL a user copies from Discord. */
  get webhookUrl(): string {
    return `${this.url}/api/webhooks/${this.id}/${this.token}`;
  }

  rateLimitNext(n: number, retryAfterS: number, after = 0): void {
    this.failAfter(after, n, {
      status: 429,
      headers: { 'retry-after': String(retryAfterS), 'x-ratelimit-scope': 'user' },
      body: JSON.stringify({ message: 'You are being rate limited.', retry_after: retryAfterS, global: false }),
    });
  }

  protected answer(req: IncomingMessage, path: string, _raw: string, json: any) {
    const m = /^\/api\/webhooks\/([^/]+)\/([^/]+)$/.exec(path);
    if (!m || m[1] !== this.id) return { status: 404, body: JSON.stringify({ message: 'Unknown Webhook', code: 10015 }) };
    if (m[2] !== this.token) return { status: 401, body: JSON.stringify({ message: 'Invalid Webhook Token', code: 50027 }) };
    if (req.method !== 'POST') return { status: 405, body: JSON.stringify({ message: '405: Method Not Allowed', code: 0 }) };
    if (json === undefined || typeof json !== 'object' || json === null) return { status: 400, body: JSON.stringify({ message: 'The request body contains invalid JSON.', code: 50109 }) };
    const embeds: any[] = json.embeds ?? [];
    if (!Array.isArray(embeds)) return invalidForm('embeds', 'Must be an array.');
    if (!json.content && embeds.length === 0) return { status: 400, body: JSON.stringify({ message: 'Cannot send an empty message', code: 50006 }) };
    if (typeof json.content === 'string' && [...json.content].length > LIMITS.content) return invalidForm('content', `Must be ${LIMITS.content} or fewer in length.`);
    if (typeof json.username === 'string' && [...json.username].length > LIMITS.username) return invalidForm('username', `Must be ${LIMITS.username} or fewer in length.`);
    if (typeof json.username === 'string' && /clyde|discord/i.test(json.username)) return invalidForm('username', 'Username cannot contain "discord"');
    if (embeds.length > LIMITS.embeds) return invalidForm('embeds', `Must be ${LIMITS.embeds} or fewer in length.`);
    // allowed_mentions: at most 100 user and 100 role ids, each once ("Allowed Mentions Object").
    for (const key of ['users', 'roles'] as const) {
      const ids: unknown = json.allowed_mentions?.[key];
      if (ids === undefined) continue;
      if (!Array.isArray(ids)) return invalidForm(`allowed_mentions.${key}`, 'Must be an array.');
      if (ids.length > LIMITS.mentionIds) return invalidForm(`allowed_mentions.${key}`, `Must be ${LIMITS.mentionIds} or fewer in length.`);
      if (new Set(ids).size !== ids.length) return invalidForm(`allowed_mentions.${key}`, 'Set items must be unique.');
    }
    let total = 0;
    const len = (s: unknown) => (typeof s === 'string' ? [...s].length : 0);
    for (const [i, e] of embeds.entries()) {
      if (len(e.title) > LIMITS.title) return invalidForm(`embeds.${i}.title`, `Must be ${LIMITS.title} or fewer in length.`);
      if (len(e.description) > LIMITS.description) return invalidForm(`embeds.${i}.description`, `Must be ${LIMITS.description} or fewer in length.`);
      const fields: any[] = e.fields ?? [];
      if (fields.length > LIMITS.fields) return invalidForm(`embeds.${i}.fields`, `Must be ${LIMITS.fields} or fewer in length.`);
      for (const f of fields) {
        if (len(f.name) > LIMITS.fieldName || len(f.value) > LIMITS.fieldValue) return invalidForm(`embeds.${i}.fields`, 'Must be 1024 or fewer in length.');
        total += len(f.name) + len(f.value);
      }
      if (e.color !== undefined && (!Number.isInteger(e.color) || e.color < 0 || e.color > 0xffffff)) return invalidForm(`embeds.${i}.color`, 'Int value should be less than or equal to 16777215.');
      if (e.timestamp !== undefined && Number.isNaN(Date.parse(e.timestamp))) return invalidForm(`embeds.${i}.timestamp`, 'Could not parse timestamp.');
      total += len(e.title) + len(e.description) + len(e.footer?.text) + len(e.author?.name);
    }
    if (total > LIMITS.total) return invalidForm('embeds', `Embed size exceeds maximum size of ${LIMITS.total}`);
    return { status: 204 };
  }
}
