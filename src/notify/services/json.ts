import type { NotificationConfig } from '../../config/notifications.ts';
import type { StoredEvent } from '../../core/events.ts';
import type { OutMessage } from '../message.ts';
import { autopulseJsonDocument } from '../../peers/autopulse/json-format.ts';

/** The `json` document's version: a receiver checks it; fields are only added within one version. */
export const JSON_VERSION = 1;
/** Events per document: a long outage's backlog goes as several posts, none too large for a small receiver. */
export const JSON_EVENTS_PER_DOCUMENT = 500;

/**
 * `json`: one document per batch, `{ version, sender, sentAt, events: [...] }`, each event as docs/notifications.md
 * describes it (the outbox's event with its id); FORMAT autopulse: autopulse's document (peers/autopulse/json-format.ts). TOKEN,
 * when set, goes as a Bearer token.
 */
export function jsonMessages(dest: NotificationConfig, events: readonly StoredEvent[], now = Date.now()): OutMessage[] {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(dest.TOKEN ? { authorization: `Bearer ${dest.TOKEN}` } : {}) };
  const out: OutMessage[] = [];
  for (let i = 0; i < events.length; i += JSON_EVENTS_PER_DOCUMENT) {
    const chunk = events.slice(i, i + JSON_EVENTS_PER_DOCUMENT);
    const document = dest.FORMAT === 'autopulse' ? autopulseJsonDocument(chunk, now) : { version: JSON_VERSION, sender: 'scanrelay', sentAt: new Date(now).toISOString(), events: chunk };
    out.push({ url: dest.URL, headers, body: JSON.stringify(document) });
  }
  return out;
}
