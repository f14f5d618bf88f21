import type { JsonObject } from '../../config/load.ts';
import type { ImportNotes } from './import-common.ts';
import { safeName } from './names.ts';
import type { AutopulseWebhook } from './settings.ts';

/** autopulse's events (webhooks/mod.rs EventType) as the relay's; "new" and "found" have none. */
const EVENT_MAP: Record<string, string | undefined> = { failed: 'failed', hash_mismatch: 'failed', retrying: 'waiting', processed: 'scanned', new: undefined, found: undefined };

/** Each webhook as a NOTIFICATIONS entry, batched every opts.webhook_interval seconds. */
export function importWebhooks(webhooks: Record<string, AutopulseWebhook>, batchSeconds: number, config: JsonObject, { carried, notes }: ImportNotes): void {
  const NOTIFICATIONS: JsonObject = {};
  for (const [name, w] of Object.entries(webhooks)) {
    const where = `webhooks.${name}`;
    const entry: JsonObject = { TYPE: w.type, URL: w.url, BATCH_SECONDS: batchSeconds };
    if ('username' in w && w.username) entry.USERNAME = w.username;
    if (w.type === 'json') {
      // Its receivers parse autopulse's document: {events: [{event, action, trigger, files, file_count, timestamp}]} (json.rs:5-42).
      entry.FORMAT = 'autopulse';
    }
    if (w.avatar_url !== undefined) notes.push(`${where}.avatar_url: not carried (scanrelay's messages use Discord's default avatar)`);
    if (w.type === 'discord' && w.mentions.length) {
      entry.MENTIONS = mentionsOf(w.mentions);
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
}

/** Discord's mentions, merged into one MENTIONS: everyone named, on any of their events. */
function mentionsOf(mentions: Extract<AutopulseWebhook, { type: 'discord' }>['mentions']): JsonObject {
  const users = new Set<string>();
  const roles = new Set<string>();
  const on = new Set<string>();
  let here = false;
  let everyone = false;
  let onAll = false;
  for (const m of mentions) {
    for (const target of m.targets) {
      if (target === 'here') here = true;
      else if (target === 'everyone') everyone = true;
      else if ('user' in target && typeof target.user === 'string') users.add(target.user);
      else if ('role' in target) roles.add(target.role);
    }
    if (!m.on?.length) onAll = true;
    else for (const e of m.on) if (typeof e === 'string' && EVENT_MAP[e]) on.add(EVENT_MAP[e]!);
  }
  return {
    ON: onAll ? ['scanned', 'failed', 'waiting', 'recovered', 'removed'] : on.size ? [...on] : ['failed'],
    USERS: [...users],
    ROLES: [...roles],
    HERE: here,
    EVERYONE: everyone,
  };
}
