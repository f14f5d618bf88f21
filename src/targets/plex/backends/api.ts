import type { PlexApi } from '../api.ts';
import type { PlexScanBackend, PlexSectionRef } from './backend.ts';
import { allSectionsFor, SectionCache } from '../sections.ts';

/** Scans through Plex's HTTP API: GET /library/sections/{id}/refresh?path=<folder>. */
export class PlexApiBackend implements PlexScanBackend {
  readonly method = 'api' as const;
  readonly sections: SectionCache;

  constructor(readonly api: PlexApi) {
    this.sections = new SectionCache(() => api.sections());
  }

  async resolveSection(folder: string): Promise<PlexSectionRef | undefined> {
    const match = await this.sections.resolve(folder);
    return match && { id: match.section.id, title: match.section.title, location: match.location };
  }

  async resolveSections(folder: string): Promise<PlexSectionRef[]> {
    // resolve() refreshes the cached list on a miss; then every section holding the folder is taken.
    if (!(await this.resolveSection(folder))) return [];
    const sections = await this.sections.all();
    return allSectionsFor(sections.flatMap((s) => s.locations.map((location) => ({ id: s.id, title: s.title, location }))), folder);
  }

  async knownLocations(fresh = false): Promise<string[]> {
    return (await this.sections.all(fresh)).flatMap((s) => s.locations);
  }

  async scan(sectionId: string, folder: string): Promise<{ detail?: string }> {
    await this.api.refresh(sectionId, folder);
    return {};
  }

  async analyze(metadataIds: readonly number[]): Promise<void> {
    // The API has one analyze action; "deep" is logged by the caller as running a basic analysis.
    await this.api.analyze(metadataIds);
  }

  describeScan(sectionId: string, folder: string): string {
    return this.api.describeRefresh(sectionId, folder);
  }

  async available(): Promise<{ ok: boolean; error?: string }> {
    try {
      await this.api.identity();
      return { ok: true };
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
  }
}
