import { longestPrefix } from '../../paths/mapping.ts';
import type { PlexSection } from './api.ts';

export interface SectionMatch {
  section: PlexSection;
  location: string;
}

/** The section whose location holds the folder: longest location on whole segments wins. */
export function sectionFor(sections: readonly PlexSection[], folder: string): SectionMatch | undefined {
  const pairs = sections.flatMap((section) => section.locations.map((location) => ({ section, location })));
  return longestPrefix(folder, pairs, (p) => p.location);
}

/** Caches Plex's section list; a folder in no cached section triggers one refresh of the list. */
export class SectionCache {
  private cached: PlexSection[] | undefined;
  private fetchedAt = 0;

  constructor(
    private readonly load: () => Promise<PlexSection[]>,
    private readonly maxAgeMs = 10 * 60_000,
  ) {}

  async resolve(folder: string): Promise<SectionMatch | undefined> {
    const fresh = !this.cached || Date.now() - this.fetchedAt > this.maxAgeMs;
    if (fresh) await this.reload();
    const hit = sectionFor(this.cached!, folder);
    if (hit || fresh) return hit;
    await this.reload();
    return sectionFor(this.cached!, folder);
  }

  async all(fresh = false): Promise<PlexSection[]> {
    if (fresh || !this.cached || Date.now() - this.fetchedAt > this.maxAgeMs) await this.reload();
    return this.cached!;
  }

  private async reload(): Promise<void> {
    this.cached = await this.load();
    this.fetchedAt = Date.now();
  }
}
