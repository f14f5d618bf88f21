import type { PlexActivity } from './api.ts';

/** Plex's activity type for a running library scan (docs/protocols.md section 1). */
export const SCAN_ACTIVITY = 'library.update.section';

export function runningScans(activities: readonly PlexActivity[], sectionId?: string): PlexActivity[] {
  return activities.filter((a) => a.type === SCAN_ACTIVITY && (sectionId === undefined || a.sectionId === sectionId));
}

/**
 * In-memory record of how long each queued scan has been waiting for something (Plex to come up, other
 * scans to end), for the log, the backoff and the cap. Lost on restart: the wait then starts over.
 */
export class WaitTracker {
  private readonly waits = new Map<number, { since: number; polls: number }>();

  /** Notes one more poll for the scan; returns when its wait began and how many polls it has made. */
  poll(scanId: number, now = Date.now()): { since: number; polls: number } {
    const w = this.waits.get(scanId) ?? { since: now, polls: 0 };
    w.polls++;
    this.waits.set(scanId, w);
    return { ...w };
  }

  end(scanId: number): { since: number; polls: number } | undefined {
    const w = this.waits.get(scanId);
    this.waits.delete(scanId);
    return w;
  }
}
