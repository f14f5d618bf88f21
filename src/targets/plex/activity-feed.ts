import type { PlexApi } from './api.ts';
import { runningScans } from './wait.ts';

/** A library scan Plex shows as running. */
export interface RunningScan {
  uuid?: string;
  sectionId?: string;
  title?: string;
}

export interface ScanSnapshot {
  /** When the read was sent. */
  at: number;
  scans: RunningScan[];
}

/**
 * Plex's running scans by polling, shared by every reader (the wait for other scans, the completion watch
 * while the notification stream is away): `/activities` (its library scans) and `refreshing` on
 * `/library/sections`, read together; either alone is enough (an old server has no `/activities`). A
 * snapshot younger than `maxAgeMs` is reused and concurrent readers share one read.
 */
export class ActivityFeed {
  private last: ScanSnapshot | undefined;
  private pending: Promise<ScanSnapshot> | undefined;

  constructor(
    private readonly api: Pick<PlexApi, 'activities' | 'sections'>,
    private readonly maxAgeMs = 1000,
  ) {}

  /** Plex's running scans (at most `maxAgeMs` old); rejects when Plex answers neither read. */
  async current(now = Date.now()): Promise<RunningScan[]> {
    return (await this.snapshot(now)).scans;
  }

  /** The same, with the time the read was sent: what Plex showed at or after that moment. */
  snapshot(now = Date.now()): Promise<ScanSnapshot> {
    if (this.last && now - this.last.at < this.maxAgeMs) return Promise.resolve(this.last);
    const at = Date.now();
    this.pending ??= this.read()
      .then((scans) => {
        this.last = { at, scans };
        return this.last;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  private async read(): Promise<RunningScan[]> {
    const [activities, sections] = await Promise.allSettled([this.api.activities(), this.api.sections()]);
    if (activities.status === 'rejected' && sections.status === 'rejected') throw activities.reason;
    const scans: RunningScan[] = activities.status === 'fulfilled' ? runningScans(activities.value).map((a) => ({ uuid: a.uuid, sectionId: a.sectionId, title: a.title })) : [];
    if (sections.status === 'fulfilled') {
      for (const s of sections.value) {
        if (s.refreshing && !scans.some((r) => r.sectionId === s.id)) scans.push({ sectionId: s.id, title: `${s.title} (refreshing)` });
      }
    }
    return scans;
  }
}
