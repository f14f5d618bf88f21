import type { NotificationConfig } from '../config/notifications.ts';
import type { NotifyEvent, NotifyEventKind, ScannedItem, StoredEvent } from '../core/events.ts';

/** One HTTP request to a service: the sender posts it, and retries it whole. */
export interface OutMessage {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Whether a destination wants an event (EVENTS, TARGETS, TRIGGERS; names compared without case). */
export function wants(dest: Pick<NotificationConfig, 'EVENTS' | 'TARGETS' | 'TRIGGERS'> & Partial<Pick<NotificationConfig, 'TYPE' | 'FORMAT'>>, e: NotifyEvent): boolean {
  if (!dest.EVENTS.includes(e.kind)) return false;
  // A delivery whose after-steps still run is told once they end; only autopulse's document counts its end (it
  // may settle the scan: autopulse's `processed` is the targets' answer, runner.rs:270-326).
  if (e.afterSteps === 'running' && !(dest.TYPE === 'json' && dest.FORMAT === 'autopulse')) return false;
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
  retrying: 'Retrying',
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
    case 'retrying':
      return `${what}${by} · ${e.target ? `${e.target} ` : ''}tried again: ${e.reason ?? 'not taken'}`;
  }
}

/** The kinds a delivery's end writes: a batch's events of these kinds are told per scan (scanLines). */
const DELIVERY_KINDS: ReadonlySet<NotifyEventKind> = new Set(['scanned', 'removed', 'failed', 'retrying']);

/**
 * One line of a people's message: a scan, with every target's event of it in the batch; or a hold (waiting,
 * recovered) on its own. `kind`: the section it is told under (a scan that failed on one target is under Failed,
 * naming the targets that took it too).
 */
export interface TellLine {
  kind: NotifyEventKind;
  events: StoredEvent[];
  text: string;
}

/** A line at most this long (code points); a scan's folder is shortened first, the targets it names last. */
export const LINE_MAX = 500;

const uniq = (names: Iterable<string>) => [...new Set(names)];

/** How a service shows our text as text (Discord: its markdown escaped); applied after any cut, so a cut never splits an escape. */
export type Escape = (text: string) => string;

/**
 * A batch as people read it: one line per scan (not per target), in order of first appearance, naming the targets
 * that took it, failed it or try it again. A scan whose targets answer in different batches is told in each, with
 * the targets of that batch (docs/notifications.md).
 */
export function scanLines(events: readonly StoredEvent[], escape: Escape = (s) => s): TellLine[] {
  const byScan = new Map<string, StoredEvent[]>();
  events.forEach((e, i) => {
    const key = DELIVERY_KINDS.has(e.kind) && e.scan !== undefined ? `scan:${e.scan}` : `event:${i}`;
    const list = byScan.get(key);
    if (list) list.push(e);
    else byScan.set(key, [e]);
  });
  return [...byScan.values()].map((group) => {
    const first = group[0]!;
    if (!DELIVERY_KINDS.has(first.kind)) return { kind: first.kind, events: group, text: cutEscaped(eventLine(first), LINE_MAX, shortenLine, escape) };
    const kinds = new Set(group.map((e) => e.kind));
    const kind: NotifyEventKind = kinds.has('failed') ? 'failed' : kinds.has('retrying') ? 'retrying' : kinds.has('removed') ? 'removed' : 'scanned';
    return { kind, events: group, text: scanLine(group, escape) };
  });
}

/** A scan's line: what it was, its files, its trigger, how long it took; then the targets, by what they did. */
function scanLine(group: readonly StoredEvent[], escape: Escape): string {
  const done = group.filter((e) => e.kind === 'scanned' || e.kind === 'removed');
  const failed = group.filter((e) => e.kind === 'failed');
  // A target that failed, or took it after all, in this batch is not named as trying it again.
  const settled = new Set([...done, ...failed].map((e) => e.target));
  const retrying = group.filter((e) => e.kind === 'retrying' && !settled.has(e.target));
  // What Plex says the scan added names it best; the request's own title otherwise.
  const base = done.find((e) => e.items?.length) ?? done[0] ?? group[0]!;
  const fileCount = base.files?.length ? base.files.length + (base.moreFiles ?? 0) : 0;
  const files = fileCount ? ` (${fileCount} file${fileCount === 1 ? '' : 's'})` : '';
  const by = base.trigger ? ` · ${base.trigger}` : '';
  const took = done.map((e) => e.tookMs).filter((ms): ms is number => ms !== undefined);
  const when = took.length ? ` · ${duration(Math.max(...took))} after the request` : '';
  const removedItems = base.kind === 'removed' ? ` · ${base.requests ?? 1} removed item${(base.requests ?? 1) === 1 ? '' : 's'}` : '';
  const named = (list: readonly StoredEvent[]) => uniq(list.map((e) => e.target ?? 'every target'));
  const reasons = (list: readonly StoredEvent[]) => {
    const byReason = new Map<string, string[]>();
    for (const e of list) byReason.set(e.reason ?? 'no reason given', uniq([...(byReason.get(e.reason ?? 'no reason given') ?? []), e.target ?? 'every target']));
    return [...byReason].map(([reason, targets]) => `${targets.join(', ')} (${reason})`).join('; ');
  };
  const targets = [
    done.length ? ` · ${base.kind === 'removed' ? 'removed on' : 'done:'} ${named(done).join(', ')}` : '',
    failed.length ? ` · failed: ${reasons(failed)}` : '',
    retrying.length ? ` · tried again: ${reasons(retrying)}` : '',
  ].join('');
  const tail = `${files}${by}${when}${removedItems}${targets}`;
  const what = [itemsPhrase(base) ?? base.title, base.folder].filter(Boolean).join(' — ') || 'a scan';
  // The folder gives way before the targets: they are what the line is for. Each part is cut, then escaped, and the
  // escaped line is at most LINE_MAX.
  const whatOut = cutEscaped(what, Math.max(80, LINE_MAX - codePoints(escape(tail))), shorten, escape);
  return whatOut + cutEscaped(tail, LINE_MAX - codePoints(whatOut), shortenLine, escape);
}

const codePoints = (s: string) => [...s].length;

/**
 * `s` cut by `cut` so that, escaped after the cut, it is at most `max` code points: an escape is never cut in two,
 * and escaping cannot make a line longer than its limit.
 */
function cutEscaped(s: string, max: number, cut: (s: string, max: number) => string, escape: Escape): string {
  for (let room = Math.max(1, max); ; ) {
    const out = escape(cut(s, room));
    const over = codePoints(out) - max;
    if (over <= 0 || room === 1) return out;
    room = Math.max(1, room - Math.ceil(over / 2));
  }
}

/** `s` in at most `max` code points: its start and its end, an ellipsis between (a folder's last part names it). */
export function shorten(s: string, max: number): string {
  const cps = [...s];
  if (cps.length <= max) return s;
  const head = Math.ceil((max - 1) * 0.6);
  const tail = max - 1 - head;
  return safeEnd(cps.slice(0, head).join('')) + '…' + (tail > 0 ? cps.slice(cps.length - tail).join('') : '');
}

/** A cut never leaves a lone backslash (it would escape what follows in Markdown). */
const safeEnd = (s: string) => (/(^|[^\\])(\\\\)*\\$/.test(s) ? s.slice(0, -1) : s);

/** A whole line at most `max` code points, cut at its end (never inside a character). */
function shortenLine(line: string, max = LINE_MAX): string {
  const cps = [...line];
  return cps.length <= max ? line : `${safeEnd(cps.slice(0, max - 1).join(''))}…`;
}

/** What a service puts before a line of ours at most (a bullet): fitLines' own cut leaves it room. */
const PREFIX_MAX = 16;

/** Lines in sections of one kind ("Scanned", "Failed" ...), in order of first appearance. */
export function sections(lines: readonly TellLine[]): Array<{ kind: NotifyEventKind; lines: TellLine[] }> {
  const out = new Map<NotifyEventKind, TellLine[]>();
  for (const l of lines) {
    const list = out.get(l.kind);
    if (list) list.push(l);
    else out.set(l.kind, [l]);
  }
  return [...out].map(([kind, ls]) => ({ kind, lines: ls }));
}

/**
 * Whole lines joined up to `max` (measured by `size`), then "… and N more": a message never ends inside a line
 * (a scan's line is at most LINE_MAX code points already, its folder shortened; another is cut at its end).
 */
export function fitLines(lines: readonly string[], max: number, size: (s: string) => number = (s) => s.length): string {
  let out = '';
  for (let i = 0; i < lines.length; i++) {
    const line = shortenLine(lines[i]!, LINE_MAX + PREFIX_MAX);
    const next = out ? `${out}\n${line}` : line;
    const rest = lines.length - i - 1;
    const tail = rest ? `\n… and ${rest} more` : '';
    if (size(next + tail) > max) return `${out}${out ? '\n' : ''}… and ${lines.length - i} more`;
    out = next;
  }
  return out;
}

/** A short title for a batch, by scans: "3 scanned, 1 failed". */
export function batchTitle(lines: readonly TellLine[]): string {
  const counts = new Map<NotifyEventKind, number>();
  for (const l of lines) counts.set(l.kind, (counts.get(l.kind) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
}
