/** A scanrelay target or notification name from an autopulse one (its names may hold other characters). */
export const safeName = (name: string): string => name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[^A-Za-z0-9]+/, '') || 'target';

/**
 * The title a request of autopulse's trigger `name` carries, a live one or a row taken over from autopulse's queue:
 * /list's event_source and the autopulse webhook's `trigger` read the name back from it (peers/autopulse/routes.ts).
 */
export const autopulseTitle = (name: string): string => `autopulse trigger ${name}`;

/**
 * The name autopulse gives a scan's trigger (its event_source: the key under `triggers`, "radarr4k"): read back
 * from the title autopulseTitle wrote; a request from one of scanrelay's own triggers is its source, lower-cased.
 */
export function autopulseTriggerName(title: string | null | undefined, source: string): string {
  const m = /^autopulse trigger (.+)$/.exec(title ?? '');
  return m ? m[1]! : source.toLowerCase();
}
