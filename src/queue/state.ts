import type { ScanAction } from '../core/scan.ts';
import type { QueueEntry } from './types.ts';

/*
 * What a scan is doing, as the dashboard, the JSON API and `scanrelay queue` say it. The queue's own status
 * "active" covers a scan being sent and one waiting between attempts after an error; shown as "in progress",
 * the second hid that it waits (for a token, for Plex to come back) and why.
 */

export type ScanState = 'pending' | 'sending' | 'waiting to retry' | 'waiting for its turn' | 'done' | 'failed';

/** The first clause of an error, for a label: "Plex refused the token (401)" of "...: check PLEX_TOKEN; ...". */
export function shortReason(error: string): string {
  const cut = /(?:: |; )/.exec(error.slice(12));
  const head = cut ? error.slice(0, 12 + cut.index) : error;
  return head.length > 140 ? `${head.slice(0, 139)}…` : head;
}

/** The scan's state, and the line that says it: "waiting to retry (Plex refused the token (401))". */
export function scanState(e: Pick<QueueEntry, 'status' | 'deliveries'>): { state: ScanState; text: string; reason: string | null } {
  if (e.status === 'pending' || e.status === 'done' || e.status === 'failed') return { state: e.status, text: e.status, reason: null };
  if (e.deliveries.some((d) => d.status === 'sending')) return { state: 'sending', text: 'being sent', reason: null };
  const failing = e.deliveries.filter((d) => d.status === 'waiting' && d.last_error);
  if (failing.length) {
    const named = e.deliveries.length > 1;
    const reason = failing.map((d) => `${named ? `${d.label ?? d.target}: ` : ''}${shortReason(d.last_error!)}`).join('; ');
    return { state: 'waiting to retry', text: `waiting to retry (${reason})`, reason };
  }
  return { state: 'waiting for its turn', text: 'waiting for its turn', reason: null };
}

/**
 * What an item action asks, as a line says it (the dashboard, `scanrelay queue`); null for a plain scan, which
 * needs no word. Kinds without the action scan instead (docs/targets.md).
 */
export function actionText(action: ScanAction | undefined): string | null {
  if (action === 'refresh') return 'refresh the metadata of the items at its files';
  if (action === 'analyze') return 'analyze the media of the items at its files';
  return null;
}

/**
 * A stored route as people read it (the dashboard, `scanrelay queue`): null when it names exactly the targets the
 * relay has (`every`), which says nothing a reader needs, as before routes were stored; else its names.
 */
export function shownRoute(route: readonly string[] | undefined, every: readonly string[]): string[] | null {
  if (!route) return null;
  const all = every.length > 0 && route.length === every.length && every.every((n) => route.includes(n));
  return all ? null : [...route];
}
