/*
 * NOTIFICATIONS.<name>.FORMAT "autopulse" on a json destination (written by import-autopulse): the document
 * autopulse's json webhook posts, so its receivers keep parsing it (crates/service/src/settings/webhooks/json.rs:5-42,
 * manager.rs:45-65): {"events": [{event, action, trigger, files, file_count, timestamp}]}, one entry per event
 * kind and trigger, one POST per batch. The relay's event kinds map onto autopulse's: scanned -> processed,
 * removed -> processed, failed -> failed, waiting -> retrying; recovered has no autopulse event and is left out.
 */

/** The relay's event, as much of it as this document needs (core/events.ts on the notifications branch). */
export interface RelayEventLike {
  kind: 'scanned' | 'failed' | 'waiting' | 'recovered' | 'removed';
  trigger?: string;
  folder?: string;
  files?: string[];
}

const EVENT = { scanned: 'processed', removed: 'processed', failed: 'failed', waiting: 'retrying' } as const;
const ACTION = { processed: 'processed', failed: 'failed', retrying: 'retrying' } as const;

export interface AutopulseJsonEvent {
  event: string;
  action: string;
  trigger: string | null;
  files: string[];
  file_count: number;
  timestamp: string;
}

/** One batch as autopulse's json webhook sends it (all entries share the batch's timestamp, RFC 3339). */
export function autopulseJsonDocument(events: readonly RelayEventLike[], now = Date.now()): { events: AutopulseJsonEvent[] } {
  const timestamp = new Date(now).toISOString();
  const groups = new Map<string, AutopulseJsonEvent>();
  for (const e of events) {
    if (e.kind === 'recovered') continue;
    const event = EVENT[e.kind];
    const trigger = e.trigger ?? null;
    const key = `${event}\u0000${trigger ?? ''}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { event, action: ACTION[event], trigger, files: [], file_count: 0, timestamp }));
    const files = e.files?.length ? e.files : e.folder ? [e.folder] : [];
    g.files.push(...files);
    g.file_count = g.files.length;
  }
  return { events: [...groups.values()] };
}
