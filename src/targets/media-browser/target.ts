import type { DeliveryResult, ScanItem, Target } from '../../core/scan.ts';
import type { Logger } from '../../log.ts';
import { placeRewriter, type PathRewriter } from '../../paths/rewrite.ts';
import { asciiLower } from '../../paths/ascii-case.ts';
import { relativeTo } from '../../paths/mapping.ts';
import type { EmbyTargetConfig } from '../../config/target-kinds/emby.ts';
import type { JellyfinTargetConfig } from '../../config/target-kinds/jellyfin.ts';
import type { TargetRequest } from '../../config/target-base.ts';
import { answeredWithout, resultFromError } from '../http.ts';
import { itemForTarget } from '../rewrite.ts';
import { MediaBrowserClient, type MetadataRefreshMode } from './client.ts';

/**
 * Jellyfin or Emby: tells the server which paths changed (the files when the request named them, else
 * the folder), with the update type the trigger gave (a delete sends "Deleted"). The server scans them
 * itself after its own short delay.
 */
export class MediaBrowserTarget implements Target {
  constructor(
    /** The TARGETS key (`jellyfin`/`emby` for the top-level sections). */
    readonly name: string,
    private readonly client: MediaBrowserClient,
    private readonly log: Logger,
    /** This server's own rewrite (JELLYFIN.REWRITE / EMBY.REWRITE): the relay's path as it names it. */
    private readonly rewrite?: PathRewriter,
    /** REFRESH_METADATA (every request refreshes the items its files are) and the refresh mode. */
    private readonly refresh: { always: boolean; mode: MetadataRefreshMode } = { always: false, mode: 'FullRefresh' },
    /** PATH_MATCH case_insensitive: a library folder holds a path whatever its ASCII case (emby.rs:167-170). */
    readonly pathsIgnoreCase = false,
  ) {
    if (rewrite) this.toTargetPath = rewrite;
  }

  /** A library folder holds the path (emby.rs:163-171 path_prefix_matches). */
  private holds(location: string, path: string): boolean {
    return this.pathsIgnoreCase ? relativeTo(asciiLower(path), asciiLower(location)) !== undefined : relativeTo(path, location) !== undefined;
  }

  readonly toTargetPath?: (path: string) => string;

  async deliver(queued: ScanItem): Promise<DeliveryResult> {
    const item = itemForTarget(queued, this.rewrite);
    const paths = changedPaths(item);
    try {
      // A refresh of the items at the files (issue 39 item 5, or REFRESH_METADATA); no analyze on demand here: an
      // analyze reports the files as changed. Files that are no item yet are reported as changed too.
      if (this.refreshes(item)) {
        const { refreshed, rest } = await this.refreshItems(item.files);
        if (rest.length) {
          this.log.debug({ scan: item.id, paths: rest }, `no ${this.client.product} item at these files to refresh; reporting them as changed`);
          await this.client.mediaUpdated(rest.map((path) => ({ path, updateType: item.updateType })));
        }
        return { outcome: 'done', detail: [refreshed && `metadata refresh (${this.refresh.mode}) of ${refreshed} item(s)`, rest.length && `${rest.length} path(s) reported as ${item.updateType}`].filter(Boolean).join('; ') };
      }
      this.log.debug({ scan: item.id, request: this.client.describeUpdate(), paths, updateType: item.updateType }, `telling ${this.client.product} about changed paths`);
      await this.client.mediaUpdated(paths.map((path) => ({ path, updateType: item.updateType })));
      return { outcome: 'done', detail: `${paths.length} path(s) reported as ${item.updateType}` };
    } catch (err) {
      return resultFromError(err);
    }
  }

  /**
   * Scans that only report changed paths share one `POST /Library/Media/Updated`, whose `Updates` is a list, each
   * path with its own update type (autopulse's emby.rs:326-338 sends all its events' paths in one, as its runner hands them,
   * runner.rs:248-292). Scans that refresh items go one by one, as deliver() sends them.
   */
  async deliverMany(queued: readonly ScanItem[]): Promise<DeliveryResult[]> {
    const items = queued.map((q) => itemForTarget(q, this.rewrite));
    const plain = items.flatMap((item, i) => (this.refreshes(item) ? [] : [i]));
    const results: DeliveryResult[] = new Array(items.length);
    const together = async (): Promise<void> => {
      if (plain.length === 0) return;
      const updates = plain.flatMap((i) => changedPaths(items[i]!).map((path) => ({ path, updateType: items[i]!.updateType })));
      this.log.debug({ scans: plain.map((i) => items[i]!.id), request: this.client.describeUpdate(), paths: updates.length }, `telling ${this.client.product} about changed paths`);
      let failed: DeliveryResult | undefined;
      try {
        await this.client.mediaUpdated(updates);
      } catch (err) {
        failed = resultFromError(err);
      }
      for (const i of plain) results[i] = failed ?? { outcome: 'done', detail: `${changedPaths(items[i]!).length} path(s) reported as ${items[i]!.updateType}` };
    };
    await Promise.all([together(), ...queued.map(async (q, i) => void (this.refreshes(items[i]!) && (results[i] = await this.deliver(q))))]);
    return results;
  }

  /** A scan that refreshes the items at its files (the `refresh` action, or REFRESH_METADATA), instead of reporting them. */
  private refreshes(item: ScanItem): boolean {
    return (item.action === 'refresh' || this.refresh.always) && item.files.length > 0 && !item.moreFiles && item.updateType !== 'Deleted';
  }

  /**
   * `POST /Items/{id}/Refresh` (FullRefresh) for the items whose Path is one of the files, looked up in the libraries
   * that hold them (autopulse emby.rs:173-216, 349-370). undefined: none found (a new file: it is reported instead).
   */
  private async refreshItems(files: readonly string[]): Promise<{ refreshed: number; rest: string[] }> {
    const libraries = (await this.client.libraries()).filter((l) => files.some((f) => l.locations.some((loc) => this.holds(loc, f))));
    const found = new Map<string, string>();
    for (const lib of libraries) for (const [path, id] of await this.client.itemsAt(lib.id, files)) found.set(path, id);
    const ids = new Set(found.values());
    for (const id of ids) await this.client.refreshItem(id, this.refresh.mode);
    return { refreshed: ids.size, rest: files.filter((f) => !found.has(f)) };
  }

  /** The server's Id and name from `GET /System/Info/Public` (docs/protocols.md section 4). */
  async identity(): Promise<{ id: string; name?: string } | undefined> {
    let info;
    try {
      info = await this.client.publicInfo();
    } catch (err) {
      // It answers HTTP but not /System/Info/Public as Jellyfin and Emby do: it cannot say who it is, ever.
      if (answeredWithout(err)) return undefined;
      throw err;
    }
    return info.serverName ? { id: info.id, name: info.serverName } : { id: info.id };
  }

  libraryRoots(): Promise<string[]> {
    return this.client.libraryLocations();
  }

  async available(): Promise<{ ok: boolean; error?: string }> {
    try {
      await this.client.systemInfo();
      return { ok: true };
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
  }
}

/** The paths a scan reports as changed: its files, or its folder when it names none or kept only part of a long list. */
function changedPaths(item: ScanItem): string[] {
  return item.files.length && !item.moreFiles ? item.files : [item.folder];
}

/** The two servers of this API: the product name its messages use, and the path prefix its routes take. */
const KINDS = {
  jellyfin: { product: 'Jellyfin', prefix: '' },
  // Emby serves this API under /emby (client.ts).
  emby: { product: 'Emby', prefix: '/emby' },
} as const;

/** A Jellyfin or Emby target at `url`, by its kind (named after it unless `name` says otherwise). */
export function mediaBrowserTarget(
  kind: keyof typeof KINDS,
  url: string,
  apiKey: string,
  log: Logger,
  rewrite?: PathRewriter,
  name: string = kind,
  request?: TargetRequest,
  refresh?: { always: boolean; mode: MetadataRefreshMode },
  pathsIgnoreCase = false,
): MediaBrowserTarget {
  const { product, prefix } = KINDS[kind];
  return new MediaBrowserTarget(name, new MediaBrowserClient(product, url, apiKey, prefix, request), log, rewrite, refresh, pathsIgnoreCase);
}

/** A Jellyfin or Emby `TARGETS` entry (or the JELLYFIN / EMBY section, named `jellyfin` / `emby`), by its TYPE. */
export function createMediaBrowserTarget(name: string, entry: JellyfinTargetConfig | EmbyTargetConfig, log: Logger): MediaBrowserTarget {
  return mediaBrowserTarget(entry.TYPE, entry.URL, entry.API_KEY, log, placeRewriter(entry.REWRITE, entry.REWRITE_MODE), name, entry.REQUEST, {
    always: entry.REFRESH_METADATA,
    mode: entry.METADATA_REFRESH_MODE,
  }, entry.PATH_MATCH === 'case_insensitive');
}
