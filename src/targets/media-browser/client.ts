import { z } from 'zod';
import type { UpdateType } from '../../core/scan.ts';
import type { TargetRequest } from '../../config/target-base.ts';
import { classifyStatus, httpRequest, parseJsonAnswer } from '../http.ts';

/** The answers read (docs/protocols.md section 4); the servers add fields freely. */
const virtualFoldersAnswer = z.array(z.looseObject({ Name: z.string().optional(), ItemId: z.string().optional(), Locations: z.array(z.string()).optional().default([]) }));
/** `GET /Items` (BaseItemDtoQueryResult): the items, with `Path` when Fields=Path asks for it. */
const itemsAnswer = z.looseObject({ Items: z.array(z.looseObject({ Id: z.string(), Path: z.string().nullish() })).default([]) });

/** Items read per page of `GET /Items`, and pages read at most per library (autopulse reads 1000 a page). */
const ITEMS_PAGE = 1000;
const ITEMS_MAX_PAGES = 50;
const systemInfoAnswer = z.looseObject({ ServerName: z.string().optional(), Version: z.string().optional(), ProductName: z.string().optional() });
/**
 * `GET /Plugins` (Jellyfin's PluginsController.cs:52-60, PluginInfo: Name, Version, Id, Status as a string such as
 * "Active"; Emby lists Name, Version, Id and no Status: a plugin it lists is loaded).
 */
const pluginsAnswer = z.array(z.looseObject({ Name: z.string().optional().default(''), Version: z.string().optional(), Id: z.string().optional(), Status: z.string().optional() }));
/** `POST /Library/ScanPaths` (the TargetedScan plugin, ScanPathController.cs:106-135): one result per path. */
const scanPathsAnswer = z.looseObject({
  Results: z.array(z.looseObject({ Path: z.string().optional().default(''), Status: z.string(), ItemId: z.string().optional(), ItemName: z.string().optional() })).default([]),
});
/**
 * A BaseItemDto as `GET /Items` lists it: Name, Id, Type, IsFolder and the episode/year numbers always; Path only
 * when Fields asks for it (Jellyfin's DtoService.cs:1069-1175).
 */
export const itemDto = z.looseObject({
  Id: z.string(),
  Name: z.string().nullish(),
  Type: z.string().nullish(),
  Path: z.string().nullish(),
  IsFolder: z.boolean().nullish(),
  IndexNumber: z.number().nullish(),
  ParentIndexNumber: z.number().nullish(),
  SeriesName: z.string().nullish(),
  ProductionYear: z.number().nullish(),
});
export type ItemDto = z.infer<typeof itemDto>;
const childrenAnswer = z.looseObject({ Items: z.array(itemDto).default([]) });
/** `GET /System/Info/Public` (no key needed): the server's own Id and name. */
const publicInfoAnswer = z.looseObject({ Id: z.string().min(1), ServerName: z.string().optional() });

/** Jellyfin's and Emby's MetadataRefreshMode (autopulse's emby.rs:62-73 offers the same four). */
export const metadataRefreshModes = ['None', 'ValidationOnly', 'Default', 'FullRefresh'] as const;
export type MetadataRefreshMode = (typeof metadataRefreshModes)[number];

export interface MediaUpdate {
  path: string;
  updateType: UpdateType;
}

/**
 * Jellyfin and Emby share this API (Emby is Jellyfin's ancestor): `POST /Library/Media/Updated` with
 * `{"Updates":[{"Path","UpdateType"}]}`; 204 is success. The key goes in `Authorization: MediaBrowser
 * Token="…"` to Jellyfin: Jellyfin 12 turns EnableLegacyAuthorization off by default and then ignores
 * `X-Emby-Token`, `X-Emby-Authorization` and `api_key`, while 10.x takes both. Emby keeps `X-Emby-Token`. Emby serves it
 * under `/emby` (Cloudbox/autoscan's Emby target), so the Emby client has that prefix; a URL that
 * already ends in `/emby` gets no second one.
 */
export class MediaBrowserClient {
  private readonly base: string;

  constructor(
    readonly product: 'Jellyfin' | 'Emby',
    url: string,
    private readonly apiKey: string,
    prefix: '' | '/emby' = '',
    /** The target's REQUEST options (config/target-base.ts): timeout in seconds, certificate check, extra headers. */
    private readonly request: Partial<TargetRequest> = {},
  ) {
    const trimmed = url.replace(/\/+$/, '');
    this.base = prefix && trimmed.toLowerCase().endsWith(prefix) ? trimmed : `${trimmed}${prefix}`;
  }

  private async call(method: string, path: string, what: string, body?: unknown): Promise<string> {
    // The user's HEADERS first: the key and the content type are the API's own.
    const headers: Record<string, string> = { ...this.request.HEADERS, Accept: 'application/json', ...this.authHeader() };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const { TIMEOUT, VERIFY_SSL } = this.request;
    const res = await httpRequest(
      {
        method,
        url: `${this.base}${path}`,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        ...(TIMEOUT !== undefined ? { timeoutMs: TIMEOUT * 1000 } : {}),
        ...(VERIFY_SSL !== undefined ? { verifyTls: VERIFY_SSL } : {}),
      },
      `${this.product} (${method} ${path})`,
    );
    const err = classifyStatus(res.status, `${this.product} ${what}`, res.text, { server: this.product, key: `${this.product.toUpperCase()}.API_KEY` });
    if (err) throw err;
    return res.text;
  }

  private authHeader(): Record<string, string> {
    if (this.product === 'Emby') return { 'X-Emby-Token': this.apiKey };
    // A quote would end the quoted value; a key never holds one (Jellyfin's keys are hex).
    return { Authorization: `MediaBrowser Token="${this.apiKey.replace(/"/g, '')}"` };
  }

  /** The exact request a scan makes, for logs. */
  describeUpdate(route = '/Library/Media/Updated'): string {
    const header = this.product === 'Emby' ? 'X-Emby-Token' : 'Authorization: MediaBrowser Token';
    return `POST ${this.base}${route} (header ${header})`;
  }

  async mediaUpdated(updates: readonly MediaUpdate[]): Promise<void> {
    await this.call('POST', '/Library/Media/Updated', 'media update', { Updates: updates.map((u) => ({ Path: u.path, UpdateType: u.updateType })) });
  }

  /** Every folder of every library (`GET /Library/VirtualFolders`: `[{"Name", "Locations": [...]}]`). */
  async libraryLocations(): Promise<string[]> {
    const folders = parseJsonAnswer(await this.call('GET', '/Library/VirtualFolders', 'library list'), virtualFoldersAnswer, `${this.product} library list`);
    return folders.flatMap((f) => f.Locations.filter((l) => l !== ''));
  }

  /** The libraries: their item id (ParentId of their items) and folders. */
  async libraries(): Promise<Array<{ id: string; name: string; locations: string[] }>> {
    const folders = parseJsonAnswer(await this.call('GET', '/Library/VirtualFolders', 'library list'), virtualFoldersAnswer, `${this.product} library list`);
    return folders.filter((f) => f.ItemId).map((f) => ({ id: f.ItemId!, name: f.Name ?? f.ItemId!, locations: f.Locations.filter((l) => l !== '') }));
  }

  /**
   * The ids of the items in a library whose Path is one of `paths` (exactly), read page by page as autopulse's
   * emby.rs fetch_items does (`GET /Items?Recursive=true&Fields=Path&ParentId=...`), until all are found.
   */
  async itemsAt(libraryId: string, paths: readonly string[]): Promise<Map<string, string>> {
    const wanted = new Set(paths);
    const found = new Map<string, string>();
    for (let page = 0; page < ITEMS_MAX_PAGES && found.size < wanted.size; page++) {
      const q = new URLSearchParams({ Recursive: 'true', Fields: 'Path', EnableImages: 'false', EnableTotalRecordCount: 'false', ParentId: libraryId, StartIndex: String(page * ITEMS_PAGE), Limit: String(ITEMS_PAGE) });
      const { Items } = parseJsonAnswer(await this.call('GET', `/Items?${q}`, 'item list'), itemsAnswer, `${this.product} item list`);
      for (const i of Items) if (i.Path && wanted.has(i.Path) && !found.has(i.Path)) found.set(i.Path, i.Id);
      if (Items.length < ITEMS_PAGE) break;
    }
    return found;
  }

  /**
   * `POST /Items/{id}/Refresh` with a refresh mode for metadata and images, as autopulse's emby.rs refresh_item
   * (349-370) sends it: everything replaced but the images, recursively.
   */
  async refreshItem(id: string, mode: MetadataRefreshMode): Promise<void> {
    const q = new URLSearchParams({ MetadataRefreshMode: mode, ImageRefreshMode: mode, ReplaceAllMetadata: 'true', ReplaceAllImages: 'false', Recursive: 'true' });
    await this.call('POST', `/Items/${encodeURIComponent(id)}/Refresh?${q}`, 'item refresh');
  }

  /** The server's own Id and name: the same whichever URL or key asks. */
  async publicInfo(): Promise<{ id: string; serverName?: string }> {
    const info = parseJsonAnswer(await this.call('GET', '/System/Info/Public', 'public system info'), publicInfoAnswer, `${this.product} public system info`);
    return { id: info.Id, serverName: info.ServerName };
  }

  async systemInfo(): Promise<{ serverName?: string; version?: string; productName?: string }> {
    const info = parseJsonAnswer(await this.call('GET', '/System/Info', 'system info'), systemInfoAnswer, `${this.product} system info`);
    return { serverName: info.ServerName, version: info.Version, productName: info.ProductName };
  }

  /** The installed plugins, by name and status (`GET /Plugins`; an API key is an administrator's). */
  async plugins(): Promise<Array<{ name: string; version?: string; status?: string }>> {
    const list = parseJsonAnswer(await this.call('GET', '/Plugins', 'plugin list'), pluginsAnswer, `${this.product} plugin list`);
    return list.map((p) => ({ name: p.Name, ...(p.Version ? { version: p.Version } : {}), ...(p.Status ? { status: p.Status } : {}) }));
  }

  /**
   * The TargetedScan plugin's batch route, `POST /Library/ScanPaths {"Paths": [...]}` (ScanPathController.cs:106-135):
   * 200 with one `{Path, Status, ItemId, ItemName}` per path, Status one of its ScanStatus names
   * (TargetedScanService.cs:473-495). A server without the plugin answers 404.
   */
  async scanPaths(paths: readonly string[]): Promise<Array<{ path: string; status: string; itemId?: string; itemName?: string }>> {
    const answer = parseJsonAnswer(await this.call('POST', '/Library/ScanPaths', 'targeted scan', { Paths: paths }), scanPathsAnswer, `${this.product} targeted scan`);
    return answer.Results.map((r) => ({ path: r.Path, status: r.Status, ...(r.ItemId ? { itemId: r.ItemId } : {}), ...(r.ItemName ? { itemName: r.ItemName } : {}) }));
  }

  /**
   * One level of the library: the items whose parent is `parentId` (a library's ItemId from VirtualFolders, or an
   * item's Id), with their Path (`GET /Items?ParentId=...&Fields=Path`, ItemsController.cs:171-213). Not recursive.
   */
  async children(parentId: string): Promise<ItemDto[]> {
    const q = new URLSearchParams({ ParentId: parentId, Fields: 'Path', EnableImages: 'false', EnableUserData: 'false', EnableTotalRecordCount: 'false' });
    return parseJsonAnswer(await this.call('GET', `/Items?${q}`, 'item list'), childrenAnswer, `${this.product} item list`).Items;
  }

  /** Items by id, with their Path (`GET /Items?Ids=...&Fields=Path`). */
  async itemsById(ids: readonly string[]): Promise<ItemDto[]> {
    const q = new URLSearchParams({ Ids: ids.join(','), Fields: 'Path', EnableImages: 'false', EnableUserData: 'false', EnableTotalRecordCount: 'false' });
    return parseJsonAnswer(await this.call('GET', `/Items?${q}`, 'item list'), childrenAnswer, `${this.product} item list`).Items;
  }

  /**
   * A scan of one item: `POST /Items/{id}/Refresh` with the Default modes and nothing replaced. A folder's refresh
   * re-reads its subtree from disk, finding new files and dropping gone ones (ItemRefreshController.cs:58-95,
   * ProviderManager.cs:1208-1232); nothing already known is looked up again.
   */
  async scanItem(id: string): Promise<void> {
    const q = new URLSearchParams({ MetadataRefreshMode: 'Default', ImageRefreshMode: 'Default', ReplaceAllMetadata: 'false', ReplaceAllImages: 'false' });
    await this.call('POST', `/Items/${encodeURIComponent(id)}/Refresh?${q}`, 'item refresh');
  }
}
