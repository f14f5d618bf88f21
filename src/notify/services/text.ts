import type { NotificationConfig } from '../../config/notifications.ts';
import type { StoredEvent } from '../../core/events.ts';
import { batchTitle, eventLine, fitLines, groups, KIND_LABEL, type OutMessage } from '../message.ts';

/** The batch as plain text: a heading per kind and target, one line per event, cut at `max` (by `size`). */
function summary(events: readonly StoredEvent[], max: number, size?: (s: string) => number): string {
  const lines = groups(events).flatMap((g) => [`${KIND_LABEL[g.kind]}${g.target ? ` · ${g.target}` : ''}:`, ...g.events.map((e) => `• ${eventLine(e)}`)]);
  return fitLines(lines, max, size);
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const worst = (events: readonly StoredEvent[]) => (events.some((e) => e.kind === 'failed') ? 'failed' : events.some((e) => e.kind === 'waiting') ? 'waiting' : 'ok');
const bytes = (s: string) => Buffer.byteLength(s);

/** Matrix hookshot's generic webhook: `{ text, html, username }` posted to the webhook URL (hookshot docs, "Webhooks"). */
export function hookshotMessages(dest: NotificationConfig, events: readonly StoredEvent[]): OutMessage[] {
  // A Matrix event is at most 65,536 bytes with its envelope; text and html together stay well below.
  const text = summary(events, 24_000, bytes);
  const html = text.split('\n').map((l) => escapeHtml(l)).join('<br>');
  return [{ url: dest.URL, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: `scanrelay: ${batchTitle(events)}\n${text}`, html: `<strong>scanrelay: ${escapeHtml(batchTitle(events))}</strong><br>${html}`, username: dest.USERNAME }) }];
}

/** Apprise API: `{ title, body, type, format }` posted to its /notify/<key> (or stateless /notify) URL. */
export function appriseMessages(dest: NotificationConfig, events: readonly StoredEvent[]): OutMessage[] {
  const level = worst(events);
  const type = level === 'failed' ? 'failure' : level === 'waiting' ? 'warning' : 'success';
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(dest.TOKEN ? { authorization: `Bearer ${dest.TOKEN}` } : {}) };
  return [{ url: dest.URL, headers, body: JSON.stringify({ title: `scanrelay: ${batchTitle(events)}`, body: summary(events, 30_000), type, format: 'text' }) }];
}

/** ntfy's message limit (bytes): a longer body becomes an attachment, which the phone does not show. */
export const NTFY_MAX_BYTES = 4096;

/** ntfy: the text as the body of a POST to the topic URL; Title, Tags and Priority as headers; TOKEN as Bearer. */
export function ntfyMessages(dest: NotificationConfig, events: readonly StoredEvent[]): OutMessage[] {
  const level = worst(events);
  const headers: Record<string, string> = {
    'content-type': 'text/plain; charset=utf-8',
    // A header carries ASCII: a title never holds a folder name.
    title: `scanrelay: ${batchTitle(events)}`,
    tags: level === 'failed' ? 'x' : level === 'waiting' ? 'warning' : 'white_check_mark',
    priority: level === 'failed' ? 'high' : 'default',
    ...(dest.TOKEN ? { authorization: `Bearer ${dest.TOKEN}` } : {}),
  };
  return [{ url: dest.URL, headers, body: summary(events, NTFY_MAX_BYTES, bytes) }];
}

/** Gotify: `{ title, message, priority }` posted to <server>/message with the application token in X-Gotify-Key. */
export function gotifyMessages(dest: NotificationConfig, events: readonly StoredEvent[]): OutMessage[] {
  const level = worst(events);
  const url = `${dest.URL.replace(/\/+$/, '')}/message`;
  return [{ url, headers: { 'content-type': 'application/json', 'x-gotify-key': dest.TOKEN }, body: JSON.stringify({ title: `scanrelay: ${batchTitle(events)}`, message: summary(events, 30_000), priority: level === 'failed' ? 8 : level === 'waiting' ? 6 : 4 }) }];
}
