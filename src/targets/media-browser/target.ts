import type { DeliveryResult, ScanItem, Target } from '../../core/scan.ts';
import { silentLogger, type Logger } from '../../core/logger.ts';
import { placeRewriter, type PathRewriter } from '../../paths/rewrite.ts';
import { asciiLower } from '../../paths/ascii-case.ts';
import { relativeTo } from '../../paths/mapping.ts';
import type { EmbyTargetConfig } from '../emby/schema.ts';
import type { JellyfinTargetConfig } from '../jellyfin/schema.ts';
import type { TargetRequest } from '../../config/target-base.ts';
import { asOutcome } from '../../core/scan.ts';
import { AnswerShapeError, TargetError, answeredWithout, resultFromError } from '../http.ts';
import { itemForTarget } from '../rewrite.ts';
import { MediaBrowserClient, type MetadataRefreshMode } from './client.ts';
import { asScannedItem, LOOK_LIMITS, lookUntilDone, type Expectation, type LookLimits } from './confirm.ts';
import { ItemTree, within, type FoundItem } from './item-tree.ts';
import { chooseMode, type ModeChoice, type ScanMode, type ScanModeSetting } from './scan-mode.ts';

/** How the target looks for a scan's items after sending it (tests shorten it). */
export interface MediaBrowserOptions {
  scanMode?: ScanModeSetting;
  look?: LookLimits;
  /** PATH_MATCH case_insensitive (autopulse's emby path_match): library folders compared ignoring ASCII case. */
  pathsIgnoreCase?: boolean;
}

/** How long a folder scan of a folder the server already has is looked at for something new. */
const FOLDER_LOOK_MS = 60_000;

/** A path the TargetedScan plugin answered for, in one of its ScanStatus names (TargetedScanService.cs:473-495). */
const PLUGIN_DONE = new Set(['created', 'refreshed', 'removed', 'discovered']);

/**
 * Jellyfin or Emby, in the scan mode SCAN_MODE names or `auto` chooses (scan-mode.ts, docs/targets.md):
 * - `media-updated`: tells the server which paths changed (the files when the request named them, else the folder),
 *   with the trigger's update type; the server scans after its own short delay;
 * - `plugin`: the TargetedScan plugin's `POST /Library/ScanPaths`, which makes the new items at once;
 * - `item`: `POST /Items/{id}/Refresh` of the deepest existing item above the change (item-tree.ts).
 * In the last two the relay then looks until the items are there (confirm.ts), off the delivery's slot.
 */
export class MediaBrowserTarget implements Target {
  private readonly tree: ItemTree;
  /** What `auto` chose, until the server is unreachable (then it is asked again). */
  private choice: ModeChoice | undefined;
  private detecting: Promise<ModeChoice> | undefined;
  /** The last choice logged: a choice is logged once, and again only when it changes. */
  private logged: string | undefined;
  private readonly setting: ScanModeSetting;
  private readonly look: LookLimits;
  /** Looks running at once for this server (a backlog's scans wait their turn to look, never to be delivered). */
  private readonly looks = new Limit(4);
  /** PATH_MATCH case_insensitive: a library folder holds a path whatever its ASCII case (emby.rs:167-170). */
  readonly pathsIgnoreCase: boolean;

  constructor(
    /** The TARGETS key (`jellyfin`/`emby` for the top-level sections). */
    readonly name: string,
    private readonly client: MediaBrowserClient,
    private readonly log: Logger,
    /** This server's own rewrite (JELLYFIN.REWRITE / EMBY.REWRITE): the relay's path as it names it. */
    private readonly rewrite?: PathRewriter,
    /** REFRESH_METADATA (every request refreshes the items its files are) and the refresh mode. */
    private readonly refresh: { always: boolean; mode: MetadataRefreshMode } = { always: false, mode: 'FullRefresh' },
    opts: MediaBrowserOptions = {},
  ) {
    if (rewrite) this.toTargetPath = rewrite;
    this.pathsIgnoreCase = opts.pathsIgnoreCase ?? false;
    this.tree = new ItemTree(client, Date.now, this.pathsIgnoreCase);
    this.setting = opts.scanMode ?? 'auto';
    this.look = opts.look ?? LOOK_LIMITS;
  }

  /** A library folder holds the path (emby.rs:163-171 path_prefix_matches). */
  private holds(location: string, path: string): boolean {
    return this.pathsIgnoreCase ? relativeTo(asciiLower(path), asciiLower(location)) !== undefined : relativeTo(path, location) !== undefined;
  }

  readonly toTargetPath?: (path: string) => string;

  /** The mode scans go in now and why; undefined while `auto` has not asked the server yet. */
  scanMode(): ModeChoice | undefined {
    return this.setting === 'auto' ? this.choice : { mode: this.setting, why: `SCAN_MODE is "${this.setting}"` };
  }

  /** The mode, asking the server (`GET /System/Info`, `GET /Plugins`) when `auto` does not know it yet. */
  async detectScanMode(): Promise<ModeChoice> {
    const known = this.scanMode();
    if (known) return known;
    this.detecting ??= this.detect().finally(() => (this.detecting = undefined));
    return this.detecting;
  }

  private async detect(): Promise<ModeChoice> {
    const info = await this.client.systemInfo();
    let plugins: Awaited<ReturnType<MediaBrowserClient['plugins']>> = [];
    try {
      plugins = await this.client.plugins();
    } catch (err) {
      // A key without the right to list plugins, or a server without the route: no plugin known.
      if (!answeredWithout(err)) throw err;
      this.log.debug({ err: (err as Error).message }, `${this.client.product} did not list its plugins; taken as none`);
    }
    const choice = chooseMode(this.client.product, info.version, plugins);
    this.choice = choice;
    const key = `${choice.mode}|${choice.why}`;
    if (this.logged !== key) {
      this.logged = key;
      this.log.info({ scanMode: choice.mode, why: choice.why }, `${this.client.product} scans go as ${choice.mode} (SCAN_MODE auto): ${choice.why}`);
    }
    return choice;
  }

  /** An unreachable server may come back another release, or with the plugin added or removed: `auto` asks again. */
  private noteFailure(err: unknown): void {
    if (err instanceof TargetError && err.kind === 'unavailable' && err.status === undefined && !(err instanceof AnswerShapeError)) this.choice = undefined;
  }

  async deliver(queued: ScanItem): Promise<DeliveryResult> {
    const item = itemForTarget(queued, this.rewrite);
    try {
      // A refresh of the items at the files (issue 39 item 5, or REFRESH_METADATA); no analyze on demand here: an
      // analyze is a scan. Files that are no item yet are scanned in the scan mode.
      if (this.refreshes(item)) {
        const { refreshed, rest } = await this.refreshItems(item.files);
        if (!rest.length) return { outcome: 'done', detail: `metadata refresh (${this.refresh.mode}) of ${refreshed} item(s)` };
        this.log.debug({ scan: item.id, paths: rest }, `no ${this.client.product} item at these files to refresh; scanning them`);
        const scanned = await this.scanIn((await this.detectScanMode()).mode, { ...item, files: rest });
        if (scanned.outcome !== 'done' || !refreshed) return scanned;
        return { ...scanned, detail: [`metadata refresh (${this.refresh.mode}) of ${refreshed} item(s)`, scanned.detail].filter(Boolean).join('; ') };
      }
      return await this.scanIn((await this.detectScanMode()).mode, item);
    } catch (err) {
      this.noteFailure(err);
      return resultFromError(err);
    }
  }

  /** One scan in one mode (the item already rewritten to the server's paths). */
  private async scanIn(mode: ScanMode, item: ScanItem): Promise<DeliveryResult> {
    if (mode === 'plugin') return (await this.pluginScans([item]))[0]!;
    if (mode === 'item') return this.itemScan(item);
    const paths = changedPaths(item);
    this.log.debug({ scan: item.id, request: this.client.describeUpdate(), paths, updateType: item.updateType }, `telling ${this.client.product} about changed paths`);
    await this.client.mediaUpdated(paths.map((path) => ({ path, updateType: item.updateType })));
    return { outcome: 'done', detail: `${paths.length} path(s) reported as ${item.updateType}` };
  }

  /**
   * Scans that only report changed paths share one request: one `POST /Library/Media/Updated`, whose `Updates` is a
   * list, each path with its own update type (autopulse's emby.rs:326-338 sends all its events' paths in one, as its
   * runner hands them, runner.rs:248-292), or in plugin mode one `POST /Library/ScanPaths`. Item refreshes and scans
   * that refresh items go one by one, as deliver() sends them.
   */
  async deliverMany(queued: readonly ScanItem[]): Promise<DeliveryResult[]> {
    let mode: ScanMode;
    try {
      mode = (await this.detectScanMode()).mode;
    } catch (err) {
      this.noteFailure(err);
      const failed = resultFromError(err);
      return queued.map(() => failed);
    }
    const items = queued.map((q) => itemForTarget(q, this.rewrite));
    const plain = mode === 'item' ? [] : items.flatMap((item, i) => (this.refreshes(item) ? [] : [i]));
    const results: DeliveryResult[] = new Array(items.length);
    const together = async (): Promise<void> => {
      if (plain.length === 0) return;
      if (mode === 'plugin') {
        let answers: DeliveryResult[];
        try {
          answers = await this.pluginScans(plain.map((i) => items[i]!));
        } catch (err) {
          this.noteFailure(err);
          answers = plain.map(() => resultFromError(err));
        }
        plain.forEach((i, n) => (results[i] = answers[n]!));
        return;
      }
      const updates = plain.flatMap((i) => changedPaths(items[i]!).map((path) => ({ path, updateType: items[i]!.updateType })));
      this.log.debug({ scans: plain.map((i) => items[i]!.id), request: this.client.describeUpdate(), paths: updates.length }, `telling ${this.client.product} about changed paths`);
      let failed: DeliveryResult | undefined;
      try {
        await this.client.mediaUpdated(updates);
      } catch (err) {
        this.noteFailure(err);
        failed = resultFromError(err);
      }
      for (const i of plain) results[i] = failed ?? { outcome: 'done', detail: `${changedPaths(items[i]!).length} path(s) reported as ${items[i]!.updateType}` };
    };
    const shared = new Set(plain);
    // Item refreshes one after another: each walk then reads what the one before it cached.
    const alone = async () => {
      for (const [i, q] of queued.entries()) if (!shared.has(i)) results[i] = await this.deliver(q);
    };
    await Promise.all([together(), alone()]);
    return results;
  }

  /**
   * Plugin mode: the scans' paths in one `POST /Library/ScanPaths` (the folder when a scan names no files). Per path:
   * Created, Refreshed (or Removed, Discovered) is done; PathNotFound is a file the server cannot see yet, retried with
   * the usual back-off (for a deletion it is what was wanted); ParentNotFound (or Failed) falls back to an item refresh.
   */
  private async pluginScans(items: readonly ScanItem[]): Promise<DeliveryResult[]> {
    const paths = [...new Set(items.flatMap(changedPaths))];
    this.log.debug({ scans: items.map((i) => i.id), request: this.client.describeUpdate('/Library/ScanPaths'), paths: paths.length }, `asking ${this.client.product}'s TargetedScan plugin to scan paths`);
    let answers;
    try {
      answers = await this.client.scanPaths(paths);
    } catch (err) {
      // No such route any more (the plugin was removed): `auto` asks the server again before the retry.
      if (err instanceof TargetError && err.status === 404 && this.setting === 'auto') this.choice = undefined;
      throw err;
    }
    const byPath = new Map(answers.map((a) => [a.path, a]));
    return Promise.all(
      items.map(async (item): Promise<DeliveryResult> => {
        const mine = changedPaths(item).map((path) => ({ path, answer: byPath.get(path) }));
        const status = (m: (typeof mine)[number]) => m.answer?.status.toLowerCase() ?? 'missing';
        const deleted = item.updateType === 'Deleted';
        const unseen = mine.filter((m) => status(m) === 'pathnotfound' && !deleted);
        if (unseen.length) {
          return { outcome: 'retry', error: `${this.client.product} cannot see ${unseen.map((m) => m.path).join(', ')} yet (TargetedScan answered PathNotFound)` };
        }
        const fallback = mine.filter((m) => !PLUGIN_DONE.has(status(m)) && !(status(m) === 'pathnotfound' && deleted));
        const done = mine.filter((m) => PLUGIN_DONE.has(status(m)));
        const ids = [...new Set(done.flatMap((m) => (m.answer?.itemId && status(m) !== 'removed' ? [m.answer.itemId] : [])))];
        const counts = countBy(done.map(status));
        const said = Object.entries(counts).map(([s, n]) => `${n} ${s}`).join(', ');
        const pluginDetail = done.length || !fallback.length ? `TargetedScan: ${said || `${mine.length} path(s) gone`}` : '';
        let rest: DeliveryResult | undefined;
        if (fallback.length) {
          this.log.info({ scan: item.id, paths: fallback.map((m) => [m.path, m.answer?.status ?? 'no answer']) }, 'the TargetedScan plugin could not place these paths; refreshing their items instead');
          const folderOnly = !item.files.length || item.moreFiles > 0;
          rest = await this.itemScan(folderOnly ? item : { ...item, files: fallback.map((m) => m.path) });
          if (rest.outcome !== 'done') return rest;
        }
        const detail = [pluginDetail, rest?.outcome === 'done' ? rest.detail : ''].filter(Boolean).join('; ');
        if (!ids.length) return rest?.outcome === 'done' && rest.after ? { ...rest, detail } : { outcome: 'done', detail };
        // The plugin made the items before it answered: one look by id names them, when the `scanned` event wants them.
        const named = async () => (await this.client.itemsById(ids)).map(asScannedItem);
        return {
          outcome: 'done',
          detail,
          after: async (signal) => {
            const more = rest?.outcome === 'done' && rest.after ? asOutcome(await rest.after(signal)) : undefined;
            return { detail: [detail, more?.detail].filter(Boolean).join('; '), items: async (s) => [...(await named()), ...(more?.items ? await more.items(s) : [])] };
          },
        };
      }),
    );
  }

  /**
   * Item mode: `POST /Items/{id}/Refresh` of the deepest existing item at or above each changed path (above it for a
   * deletion), never a library's whole refresh unless the change is a new top folder of that library, and never
   * Media/Updated. Then the relay looks until the paths are items (or gone).
   */
  private async itemScan(item: ScanItem): Promise<DeliveryResult> {
    const deleted = item.updateType === 'Deleted';
    const expected: Expectation[] = item.files.length && !item.moreFiles ? item.files.map((path) => ({ path, gone: deleted })) : [{ path: item.folder, gone: deleted, folder: true }];
    const found: FoundItem[] = [];
    for (const e of expected) {
      const at = await this.tree.deepest(e.path, e.gone);
      if (!at) return { outcome: 'failed', error: `no ${this.client.product} library holds ${e.path} (GET /Library/VirtualFolders lists none whose folder holds it)` };
      found.push(at);
    }
    // A folder scan of a folder that is already an item: what is new is what was not among its children before.
    const folderItem = found.length === 1 && expected[0]!.folder && !deleted && !found[0]!.root && found[0]!.path === item.folder ? found[0]! : undefined;
    if (folderItem) expected[0] = { ...expected[0]!, known: new Set((await this.client.children(folderItem.id)).map((c) => c.Id)) };
    // One refresh per item, and none below another being refreshed: a folder's refresh re-reads its whole subtree.
    const unique = [...new Map(found.map((f) => [f.id, f])).values()];
    const refreshed = unique.filter((f) => !unique.some((o) => o !== f && o.path !== f.path && within(f.path, o.path)));
    for (const f of refreshed) {
      this.log.debug({ scan: item.id, item: f.id, path: f.path, libraryRoot: f.root }, `refreshing ${this.client.product} item`);
      try {
        await this.client.scanItem(f.id);
      } catch (err) {
        // A cached item the server no longer has: the walk starts again from the libraries next time.
        if (err instanceof TargetError && err.status === 404) this.tree.forgetAll();
        throw err;
      }
      this.tree.forget(f.path);
    }
    const names = refreshed.map((f) => (f.root ? `library ${f.library.name}` : f.path));
    const detail = `item refresh of ${names.join(', ')}`;
    return {
      outcome: 'done',
      detail,
      after: async (signal) => {
        // A rescan of a known folder may find nothing new: it is not looked for as long.
        const limits = folderItem ? { ...this.look, boundMs: Math.min(this.look.boundMs, FOLDER_LOOK_MS) } : this.look;
        const look = await this.looks.run(() => lookUntilDone((id) => this.client.children(id), refreshed, expected, signal, limits));
        if (!look.confirmed) return `${detail}; completion unknown (${folderItem ? 'nothing new' : 'not'} seen within ${Math.round(limits.boundMs / 1000)} s)`;
        const items = look.items.map(asScannedItem);
        return { detail: `${detail}; confirmed${deleted ? ' (gone)' : `: ${items.length} item(s)`}`, items: async () => items };
      },
    };
  }

  /** A scan that refreshes the items at its files (the `refresh` action, or REFRESH_METADATA), instead of reporting them. */
  private refreshes(item: ScanItem): boolean {
    return (item.action === 'refresh' || this.refresh.always) && item.files.length > 0 && !item.moreFiles && item.updateType !== 'Deleted';
  }

  /**
   * `POST /Items/{id}/Refresh` (FullRefresh) for the items whose Path is one of the files, looked up in the libraries
   * that hold them (autopulse emby.rs:173-216, 349-370). `rest`: files that are no item yet (scanned instead).
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

  /** Reachable or not, and the scan mode (the dashboard's note): `auto` asks the server when it does not know yet. */
  async available(): Promise<{ ok: boolean; error?: string; note?: string }> {
    try {
      await this.client.systemInfo();
      const choice = await this.detectScanMode();
      return { ok: true, note: `scan mode ${choice.mode}: ${choice.why}` };
    } catch (err) {
      this.noteFailure(err);
      return { ok: false, error: (err as Error).message };
    }
  }
}

/** At most `max` tasks at once; the others wait in order. */
class Limit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly max: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    // A finished task hands its slot straight to the next in line.
    if (this.running >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

function countBy(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
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
  opts?: MediaBrowserOptions,
): MediaBrowserTarget {
  const { product, prefix } = KINDS[kind];
  return new MediaBrowserTarget(name, new MediaBrowserClient(product, url, apiKey, prefix, request), log, rewrite, refresh, opts);
}

/** A Jellyfin or Emby `TARGETS` entry (or the JELLYFIN / EMBY section, named `jellyfin` / `emby`), by its TYPE. */
export function createMediaBrowserTarget(name: string, entry: JellyfinTargetConfig | EmbyTargetConfig, log: Logger): MediaBrowserTarget {
  return mediaBrowserTarget(entry.TYPE, entry.URL, entry.API_KEY, log, placeRewriter(entry.REWRITE, entry.REWRITE_MODE), name, entry.REQUEST, {
    always: entry.REFRESH_METADATA,
    mode: entry.METADATA_REFRESH_MODE,
  }, { scanMode: entry.SCAN_MODE, pathsIgnoreCase: entry.PATH_MATCH === 'case_insensitive' });
}

/**
 * The scan mode of a Jellyfin or Emby entry as `scanrelay map` shows it: SCAN_MODE when set, else what `auto` picks
 * when the server is asked now; `error` when it could not be asked (the relay asks again at its first delivery).
 */
export async function scanModeOf(name: string, entry: JellyfinTargetConfig | EmbyTargetConfig): Promise<ModeChoice | { mode: 'auto'; error: string }> {
  try {
    return await createMediaBrowserTarget(name, entry, silentLogger()).detectScanMode();
  } catch (err) {
    return { mode: 'auto', error: (err as Error).message };
  }
}
