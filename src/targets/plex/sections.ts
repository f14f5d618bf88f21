import { longestPrefix, relativeTo } from '../../paths/mapping.ts';
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

/** A section location as a scan target: the section's id and title, and the location. */
export interface LocatedSection {
  id: string;
  title: string;
  location: string;
}

/**
 * Every section with a location that holds the folder (whole path segments), each once with its longest
 * such location, the closest first. autoscan sends a folder to every library whose location holds it
 * (targets/plex/plex.go:109-123, getScanLibrary), so "Movies" and "Movies 4K" over one folder both scan.
 */
export function allSectionsFor(locations: readonly LocatedSection[], folder: string): LocatedSection[] {
  const best = new Map<string, LocatedSection>();
  for (const l of locations) {
    if (relativeTo(folder, l.location) === undefined) continue;
    const seen = best.get(l.id);
    if (!seen || l.location.length > seen.location.length) best.set(l.id, l);
  }
  return [...best.values()].sort((a, b) => b.location.length - a.location.length);
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
