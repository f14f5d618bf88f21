import type { DeliveryResult, ScanItem, Target } from '../../core/scan.ts';
import type { Logger } from '../../log.ts';
import { resultFromError } from '../http.ts';
import type { PlexScanBackend } from './backend.ts';

/** Plex: a partial scan of exactly the queued folder, in the section that holds it, by API or scanner. */
export class PlexTarget implements Target {
  readonly name = 'plex';

  constructor(
    readonly backend: PlexScanBackend,
    private readonly log: Logger,
  ) {}

  async deliver(item: ScanItem): Promise<DeliveryResult> {
    try {
      const section = await this.backend.resolveSection(item.folder);
      if (!section) {
        const known = (await this.backend.knownLocations()).join(', ') || 'none';
        return { outcome: 'failed', error: `"${item.folder}" is in no Plex section (section locations: ${known}); check SERVER_PATH_MAPPINGS` };
      }
      this.log.debug({ scan: item.id, section: section.id, request: this.backend.describeScan(section.id, item.folder) }, 'requesting Plex partial scan');
      const { detail } = await this.backend.scan(section.id, item.folder);
      return { outcome: 'done', detail: [`section ${section.id} (${section.title}) via ${this.backend.method}`, detail].filter(Boolean).join('; ') };
    } catch (err) {
      return resultFromError(err);
    }
  }

  available(): Promise<{ ok: boolean; error?: string }> {
    return this.backend.available();
  }
}
