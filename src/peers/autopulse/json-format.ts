import { autopulseTriggerName } from './names.ts';
import type { NotifyEvent } from '../../core/events.ts';

/*
 * NOTIFICATIONS.<name>.FORMAT "autopulse" on a json destination (written by import-autopulse): the document
 * autopulse's json webhook posts, so its receivers keep parsing it (crates/service/src/settings/webhooks/json.rs:
 * 27-42, manager.rs:82-102): {"events": [{event, action, trigger, files, file_count, timestamp}]}, one entry per
 * event kind and trigger, one POST per batch, entries in autopulse's order of kinds (retrying, processed, failed).
 *
 * autopulse tells a file (runner.rs:173-239, 299-326): `retrying` each time a target failed it and it is tried
 * again; `processed` once, when every target has taken it (a retry goes only to the targets not yet hit); `failed`
 * once, when it gave up. The relay writes an event per target; the store stamps each delivery's end with the
 * scan's deliveries still open (scanOpen), so exactly one event settles a scan: that one is the scan's `processed`
 * (no target failed) or `failed`. `retrying` is each failed try. Holds (waiting, recovered) have no autopulse event.
 */

const ORDER = ['retrying', 'processed', 'failed'] as const;
type AutopulseKind = (typeof ORDER)[number];

export interface AutopulseJsonEvent {
  event: AutopulseKind;
  action: AutopulseKind;
  trigger: string | null;
  files: string[];
  file_count: number;
  timestamp: string;
}

/** The autopulse event an outbox event stands for, if any (see above). */
export function autopulseKind(e: NotifyEvent): AutopulseKind | undefined {
  if (e.kind === 'retrying') return 'retrying';
  if (e.kind !== 'scanned' && e.kind !== 'removed' && e.kind !== 'failed') return undefined;
  // The same delivery told again once its after-steps ended; and a delivery before the scan's last.
  if (e.afterSteps === 'ended' || (e.scanOpen ?? 0) > 0) return undefined;
  return e.kind === 'failed' || (e.scanFailed ?? 0) > 0 ? 'failed' : 'processed';
}

/** One batch as autopulse's json webhook sends it (all entries share the batch's timestamp, RFC 3339). */
export function autopulseJsonDocument(events: readonly NotifyEvent[], now = Date.now()): { events: AutopulseJsonEvent[] } {
  const timestamp = new Date(now).toISOString();
  const groups = new Map<string, AutopulseJsonEvent & { seen: Set<string> }>();
  for (const e of events) {
    const event = autopulseKind(e);
    if (!event) continue;
    const trigger = e.trigger === undefined ? null : autopulseTriggerName(e.title, e.trigger);
    const key = `${event}\u0000${trigger ?? ''}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { event, action: event, trigger, files: [], file_count: 0, timestamp, seen: new Set() }));
    // Each file once per entry: two targets' retries of one scan in a batch are one `retrying` of its files.
    for (const f of e.files?.length ? e.files : e.folder ? [e.folder] : []) {
      if (g.seen.has(f)) continue;
      g.seen.add(f);
      g.files.push(f);
    }
    g.file_count = g.files.length;
  }
  const out = [...groups.values()].map(({ seen: _seen, ...entry }) => entry);
  return { events: out.sort((a, b) => ORDER.indexOf(a.event) - ORDER.indexOf(b.event)) };
}
