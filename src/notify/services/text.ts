import type { NotificationConfig } from '../../config/notifications.ts';
import type { StoredEvent } from '../../core/events.ts';
import { batchTitle, fitLines, KIND_LABEL, scanLines, sections, type OutMessage, type TellLine } from '../message.ts';

/** The batch as plain text: a heading per kind, one line per scan, whole lines up to `max` (by `size`). */
function summary(lines: readonly TellLine[], max: number, size?: (s: string) => number): string {
  const text = sections(lines).flatMap((s) => [`${KIND_LABEL[s.kind]}:`, ...s.lines.map((l) => `• ${l.text}`)]);
  return fitLines(text, max, size);
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const worst = (lines: readonly TellLine[]) => (lines.some((l) => l.kind === 'failed') ? 'failed' : lines.some((l) => l.kind === 'waiting' || l.kind === 'retrying') ? 'waiting' : 'ok');
const bytes = (s: string) => Buffer.byteLength(s);
const toHtml = (text: string) => text.split('\n').map(escapeHtml).join('<br>');

/**
 * A Matrix event is at most 65,536 bytes with its envelope, and hookshot sends the text and its html both: the two
 * together stay below this (escaping can make the html several times the text).
 */
export const HOOKSHOT_MAX_BYTES = 56_000;

/** Matrix hookshot's generic webhook: `{ text, html, username }` posted to the webhook URL (hookshot docs, "Webhooks"). */
export function hookshotMessages(dest: NotificationConfig, events: readonly StoredEvent[]): OutMessage[] {
  const lines = scanLines(events);
  const title = `scanrelay: ${batchTitle(lines)}`;
  const head = bytes(title) * 2 + bytes('<strong></strong><br>') + 200;
  const text = summary(lines, HOOKSHOT_MAX_BYTES - head, (s) => bytes(s) + bytes(toHtml(s)));
  return [{ url: dest.URL, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: `${title}\n${text}`, html: `<strong>${escapeHtml(title)}</strong><br>${toHtml(text)}`, username: dest.USERNAME }) }];
}

/** Apprise API: `{ title, body, type, format }` posted to its /notify/<key> (or stateless /notify) URL. */
export function appriseMessages(dest: NotificationConfig, events: readonly StoredEvent[]): OutMessage[] {
  const lines = scanLines(events);
  const level = worst(lines);
  const type = level === 'failed' ? 'failure' : level === 'waiting' ? 'warning' : 'success';
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(dest.TOKEN ? { authorization: `Bearer ${dest.TOKEN}` } : {}) };
  return [{ url: dest.URL, headers, body: JSON.stringify({ title: `scanrelay: ${batchTitle(lines)}`, body: summary(lines, 30_000), type, format: 'text' }) }];
}

/** ntfy's message limit (bytes): a longer body becomes an attachment, which the phone does not show. */
export const NTFY_MAX_BYTES = 4096;

/** ntfy: the text as the body of a POST to the topic URL; Title, Tags and Priority as headers; TOKEN as Bearer. */
export function ntfyMessages(dest: NotificationConfig, events: readonly StoredEvent[]): OutMessage[] {
  const lines = scanLines(events);
  const level = worst(lines);
  const headers: Record<string, string> = {
    'content-type': 'text/plain; charset=utf-8',
    // A header carries ASCII: a title never holds a folder name.
    title: `scanrelay: ${batchTitle(lines)}`,
    tags: level === 'failed' ? 'x' : level === 'waiting' ? 'warning' : 'white_check_mark',
    priority: level === 'failed' ? 'high' : 'default',
    ...(dest.TOKEN ? { authorization: `Bearer ${dest.TOKEN}` } : {}),
  };
  return [{ url: dest.URL, headers, body: summary(lines, NTFY_MAX_BYTES, bytes) }];
}

/** Gotify: `{ title, message, priority }` posted to <server>/message with the application token in X-Gotify-Key. */
export function gotifyMessages(dest: NotificationConfig, events: readonly StoredEvent[]): OutMessage[] {
  const lines = scanLines(events);
  const level = worst(lines);
  const url = `${dest.URL.replace(/\/+$/, '')}/message`;
  return [{ url, headers: { 'content-type': 'application/json', 'x-gotify-key': dest.TOKEN }, body: JSON.stringify({ title: `scanrelay: ${batchTitle(lines)}`, message: summary(lines, 30_000), priority: level === 'failed' ? 8 : level === 'waiting' ? 6 : 4 }) }];
}
