import type { JsonObject } from '../../config/load.ts';
import type { ImportNotes } from './import-common.ts';
import { safeName } from './names.ts';
import type { AutopulseWebhook } from './settings.ts';

/** autopulse's Discord avatar when avatar_url is not set (discord.rs:164-167). */
const AUTOPULSE_AVATAR = 'https://raw.githubusercontent.com/dan-online/autopulse/main/assets/logo.webp';

// autopulse's events as the relay's (manager.rs:14-27): `new` and `found` have no counterpart; a hash mismatch
// holds the request, and is told if it fails.
const EVENT_MAP: Record<string, string[]> = { failed: ['failed'], hash_mismatch: ['failed'], retrying: ['retrying'], processed: ['scanned', 'removed'], new: [], found: [] };
// autopulse sends every webhook every event, `retrying` included (manager.rs:89-116); waiting and recovered are
// scanrelay's own holds, kept.
const EVERY_EVENT = ['scanned', 'removed', 'failed', 'retrying', 'waiting', 'recovered'];

/** Each webhook as a NOTIFICATIONS entry, batched every opts.webhook_interval seconds. */
export function importWebhooks(webhooks: Record<string, AutopulseWebhook>, batchSeconds: number, config: JsonObject, { carried, notes }: ImportNotes): void {
  const NOTIFICATIONS: JsonObject = {};
  for (const [name, w] of Object.entries(webhooks)) {
    const where = `webhooks.${name}`;
    const entry: JsonObject = { TYPE: w.type, URL: w.url, BATCH_SECONDS: batchSeconds, EVENTS: EVERY_EVENT };
    // The sender's name and picture stay autopulse's, its defaults included (discord.rs:159-167, hookshot.rs:44-47).
    if (w.type !== 'json') entry.USERNAME = w.username ? w.username : 'autopulse';
    if (w.type === 'discord') entry.AVATAR_URL = typeof w.avatar_url === 'string' && w.avatar_url ? w.avatar_url : AUTOPULSE_AVATAR;
    if (w.type === 'json') {
      // Its receivers parse autopulse's document: {events: [{event, action, trigger, files, file_count, timestamp}]} (json.rs:5-42).
      entry.FORMAT = 'autopulse';
    }
    if (w.type === 'discord' && w.mentions.length) {
      const list = mentionsOf(w.mentions, where, notes);
      if (list.length) entry.MENTIONS = list;
    }
    NOTIFICATIONS[safeName(name)] = entry;
  }
  if (Object.keys(NOTIFICATIONS).length) {
    config.NOTIFICATIONS = NOTIFICATIONS;
    carried.push(`webhooks -> NOTIFICATIONS: ${Object.keys(NOTIFICATIONS).join(', ')} (every ${batchSeconds} s, opts.webhook_interval)`);
    notes.push(
      "webhooks: autopulse's \"new\" and \"found\" events have no equivalent (scanrelay tells when a scan is done, failed, retried, waiting or recovered); \"hash_mismatch\" is told as failed. Discord and hookshot messages use scanrelay's wording, one line per scan naming its targets",
    );
  }
}

/**
 * Discord's mentions as a MENTIONS list: each entry keeps its own `on`, so it mentions its targets only on a
 * message of those events (discord.rs:239-241). An entry none of whose events scanrelay has is printed and dropped.
 */
function mentionsOf(mentions: Extract<AutopulseWebhook, { type: 'discord' }>['mentions'], where: string, notes: string[]): JsonObject[] {
  const list: JsonObject[] = [];
  mentions.forEach((m, i) => {
    const mention = { USERS: [] as string[], ROLES: [] as string[], HERE: false, EVERYONE: false };
    for (const target of m.targets) {
      if (target === 'here') mention.HERE = true;
      else if (target === 'everyone') mention.EVERYONE = true;
      else if ('user' in target && typeof target.user === 'string') mention.USERS.push(target.user);
      else if ('role' in target) mention.ROLES.push(target.role);
    }
    // An empty or absent `on`: every event (discord.rs:40-43).
    const on = !m.on?.length ? EVERY_EVENT : [...new Set(m.on.flatMap((e) => (typeof e === 'string' ? (EVENT_MAP[e] ?? []) : [])))];
    if (!on.length) {
      notes.push(`${where}.mentions[${i}]: its events (${m.on!.map(String).join(', ')}) have no counterpart in scanrelay; it never mentions`);
      return;
    }
    list.push({ ON: on, ...mention });
  });
  return list;
}
