import type { NotificationConfig } from '../config/notifications.ts';
import type { NotifyEvent, NotifyEventKind, ScannedItem, StoredEvent } from '../core/events.ts';

/** One HTTP request to a service: the sender posts it, and retries it whole. */
export interface OutMessage {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Whether a destination wants an event (EVENTS, TARGETS, TRIGGERS; names compared without case). */
export function wants(dest: Pick<NotificationConfig, 'EVENTS' | 'TARGETS' | 'TRIGGERS'>, e: NotifyEvent): boolean {
  if (!dest.EVENTS.includes(e.kind)) return false;
  // A hold of every target (the mount guard) concerns every destination that takes its kind.
  if (dest.TARGETS.length && e.target !== undefined && !dest.TARGETS.some((t) => t.toLowerCase() === e.target!.toLowerCase())) return false;
  if (dest.TRIGGERS.length && e.trigger !== undefined && !dest.TRIGGERS.some((t) => t.toLowerCase() === e.trigger!.toLowerCase())) return false;
  return true;
}

/** Whether some destination takes `scanned` events of this target and trigger: only then are the scan's items looked up. */
export function scannedWanted(dests: ReadonlyArray<Pick<NotificationConfig, 'EVENTS' | 'TARGETS' | 'TRIGGERS'>>, target: string, trigger: string): boolean {
  return dests.some((d) => wants(d, { kind: 'scanned', at: 0, target, trigger }));
}

export const KIND_LABEL: Record<NotifyEventKind, string> = {
  scanned: 'Scanned',
  failed: 'Failed',
  waiting: 'Waiting',
  recovered: 'Recovered',
  removed: 'Removed',
};

/** "3.2 s", "4 min", "2 h 5 min". */
export function duration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const min = Math.round(ms / 60_000);
  return min < 60 ? `${min} min` : `${Math.floor(min / 60)} h ${min % 60} min`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** An item as people name it: "Dune (2021)", "Show S01E02 — Title", "Artist — Title"; `sameShow`: "S01E03 — Title". */
export function itemLabel(i: ScannedItem, sameShow = false): string {
  if (i.show !== undefined) {
    const number = i.season !== undefined && i.episode !== undefined ? `S${pad(i.season)}E${pad(i.episode)}` : '';
    return `${sameShow && number ? number : [i.show, number].filter(Boolean).join(' ')} — ${i.title}`;
  }
  if (i.artist !== undefined) return `${i.artist} — ${i.title}`;
  return i.year !== undefined ? `${i.title} (${i.year})` : i.title;
}

/**
 * The items of a `scanned` event in one phrase ("Dune (2021); Heat (1995) and 3 more"), a show named once for its
 * episodes in a row ("Show S01E02 — A; S01E03 — B"); undefined without items. Titles hold commas, so items part by ";".
 */
export function itemsPhrase(e: Pick<NotifyEvent, 'items' | 'moreItems'>): string | undefined {
  const items = e.items;
  if (!items?.length) return undefined;
  const labels = items.map((i, n) => itemLabel(i, n > 0 && i.show !== undefined && items[n - 1]!.show === i.show));
  return `${labels.join('; ')}${e.moreItems ? ` and ${e.moreItems} more` : ''}`;
}

/** One event as one line of text (the same words in every service). */
export function eventLine(e: NotifyEvent): string {
  // What Plex says the scan added names it best; the request's own title otherwise.
  const what = [itemsPhrase(e) ?? e.title, e.folder].filter(Boolean).join(' — ');
  const files = e.files?.length ? ` (${e.files.length + (e.moreFiles ?? 0)} file${e.files.length + (e.moreFiles ?? 0) === 1 ? '' : 's'})` : '';
  const by = e.trigger ? ` · ${e.trigger}` : '';
  switch (e.kind) {
    case 'scanned':
      return `${what}${files}${by}${e.tookMs !== undefined ? ` · ${duration(e.tookMs)} after the request` : ''}`;
    case 'removed':
      return `${what}${by} · ${e.requests ?? 1} removed item${(e.requests ?? 1) === 1 ? '' : 's'}`;
    case 'failed':
      return `${what}${by}: ${e.reason ?? 'failed'}`;
    case 'waiting':
      return `${e.target ? `${e.target}: ` : ''}${e.reason ?? 'scans are held'}`;
    case 'recovered':
      return `${e.target ? `${e.target}` : e.path ? `room on ${e.path}` : 'deliveries'} back${e.tookMs !== undefined ? ` after ${duration(e.tookMs)}` : ''}`;
  }
}

/** Events in groups of one kind and target, in order of first appearance. */
export function groups(events: readonly StoredEvent[]): Array<{ kind: NotifyEventKind; target: string | undefined; events: StoredEvent[] }> {
  const out = new Map<string, { kind: NotifyEventKind; target: string | undefined; events: StoredEvent[] }>();
  for (const e of events) {
    const key = `${e.kind}\0${e.target ?? ''}`;
    let g = out.get(key);
    if (!g) out.set(key, (g = { kind: e.kind, target: e.target, events: [] }));
    g.events.push(e);
  }
  return [...out.values()];
}

/** Lines joined up to `max` (measured by `size`), then "… and N more". */
export function fitLines(lines: readonly string[], max: number, size: (s: string) => number = (s) => s.length): string {
  let out = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.length > 300 ? `${lines[i]!.slice(0, 299)}…` : lines[i]!;
    const next = out ? `${out}\n${line}` : line;
    const rest = lines.length - i - 1;
    const tail = rest ? `\n… and ${rest} more` : '';
    if (size(next + tail) > max) return `${out}${out ? '\n' : ''}… and ${lines.length - i} more`;
    out = next;
  }
  return out;
}

/** A short title for a batch: "3 scanned, 1 failed". */
export function batchTitle(events: readonly NotifyEvent[]): string {
  const counts = new Map<NotifyEventKind, number>();
  for (const e of events) counts.set(e.kind, (counts.get(e.kind) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
}
