import type { PlexActivity, PlexApi } from './api.ts';

/**
 * One reader of Plex's /activities shared by every scan that needs it (the wait for other scans, each
 * scan's completion watch). A snapshot younger than `maxAgeMs` is reused and concurrent readers share one
 * request, so a drain of thousands of scans reads /activities about once a second, not once per scan.
 */
export class ActivityFeed {
  private last: { at: number; activities: PlexActivity[] } | undefined;
  private pending: Promise<PlexActivity[]> | undefined;

  constructor(
    private readonly api: Pick<PlexApi, 'activities'>,
    private readonly maxAgeMs = 1000,
  ) {}

  /** Plex's current activities (at most `maxAgeMs` old); rejects when Plex cannot be read. */
  current(now = Date.now()): Promise<PlexActivity[]> {
    if (this.last && now - this.last.at < this.maxAgeMs) return Promise.resolve(this.last.activities);
    this.pending ??= this.api
      .activities()
      .then((activities) => {
        this.last = { at: Date.now(), activities };
        return activities;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }
}
