import type { DeliveryResult, ScanItem, Target } from '../../core/scan.ts';
import type { Logger } from '../../log.ts';
import { resultFromError } from '../http.ts';
import { PlexApi } from './api.ts';
import { SectionCache } from './sections.ts';

/** Plex over its HTTP API: a partial scan of exactly the queued folder, in the section that holds it. */
export class PlexApiTarget implements Target {
  readonly name = 'plex';
  readonly sections: SectionCache;

  constructor(
    readonly api: PlexApi,
    private readonly log: Logger,
  ) {
    this.sections = new SectionCache(() => api.sections());
  }

  async deliver(item: ScanItem): Promise<DeliveryResult> {
    try {
      const match = await this.sections.resolve(item.folder);
      if (!match) {
        const known = (await this.sections.all()).flatMap((s) => s.locations).join(', ') || 'none';
        return { outcome: 'failed', error: `"${item.folder}" is in no Plex section (section locations: ${known}); check SERVER_PATH_MAPPINGS` };
      }
      const { section } = match;
      this.log.debug({ scan: item.id, section: section.id, folder: item.folder }, 'requesting Plex partial scan');
      await this.api.refresh(section.id, item.folder);
      return { outcome: 'done', detail: `section ${section.id} (${section.title})` };
    } catch (err) {
      return resultFromError(err);
    }
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
