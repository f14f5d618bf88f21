import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { SwitchableServer, type ServerMode } from './switchable-server.ts';
import { LibraryModel, type FakeItem, type FakeLibrary } from './jellyfin-library.ts';

/**
 * A fake Jellyfin / Emby server on 127.0.0.1 (docs/protocols.md section 4). It serves both products' paths:
 * Jellyfin's at the root and Emby's under `/emby`. Like ASP.NET, JSON property names bind
 * case-insensitively (`path`/`Path`). Auth on Emby's paths: `X-Emby-Token`, `X-Emby-Authorization`,
 * `api_key` or `Authorization: MediaBrowser Token="…"`. On Jellyfin's paths only the `Authorization` header
 * counts, as in a default Jellyfin 12 (EnableLegacyAuthorization off: the legacy forms are ignored, so 401);
 * `legacyAuth: true` makes it a Jellyfin 10.x that takes them all. `POST /Library/Media/Updated` answers 204; an update without a path answers 400.
 * `GET /System/Info/Public` answers without a key (the server's Id and name), as both servers do.
 *
 * With a library model (`model.addLibrary`, fakes/jellyfin-library.ts: a real directory tree as its disk) it behaves
 * as the server does for scans, counting the items each call touches (`model.touches`):
 * - `GET /System/Info` (SystemController.cs:67-77: ServerName, Version, ProductName, Id) says `version`;
 * - `GET /Plugins` (PluginsController.cs:52-60; PluginInfo.cs:30-65: Name, Version, Id, Status as "Active") lists the
 *   TargetedScan plugin when `plugin` is set (Emby lists no Status);
 * - `POST /Library/ScanPaths {Paths}` and `/Library/ScanPath {Path}` exist only with the plugin
 *   (targeted-scans jellyfin-plugin/Controllers/ScanPathController.cs:46-135: 200 with `{Results:[{ItemId, ItemName,
 *   Status, Path, Message}]}`; the single route 404s PathNotFound and ParentNotFound);
 * - `POST /Library/Media/Updated` refreshes the path's nearest item (10.10, Emby) or the whole library (10.11+);
 * - `POST /Items/{id}/Refresh` (ItemRefreshController.cs:58-95: 204, 404 for an unknown id) queues a refresh that
 *   re-reads the item's subtree; the queue runs after `refreshDelayMs`, as the server's own refresh queue does;
 * - `GET /Items?ParentId=` lists one level (Recursive=true: all below), `Ids=` by id; Path and ParentId only when
 *   Fields asks for them (DtoService.cs:1128-1137);
 * - `/socket` (websocket) takes the API key or a user's token, but sends `LibraryChanged` only to sessions of a
 *   user: an API key's session has no user (SessionManager.cs:511, UserId empty), and the notifier sends to the
 *   users of the sessions only (LibraryChangedNotifier.cs:255-259).
 */
export interface RecordedUpdate {
  path: string;
  updateType: string;
  /** '' for Jellyfin's path, '/emby' for Emby's. */
  prefix: '' | '/emby';
  at: number;
}

export interface MediaCall {
  method: string;
  path: string;
  /** The query string, without its "?". */
  query: string;
  status: number;
  /** The key the server took (undefined when it counted none). */
  token: string | undefined;
  authorization: string | undefined;
  embyToken: string | undefined;
}

export type MediaServerMode = ServerMode;

export class FakeMediaServer extends SwitchableServer {
  readonly calls: MediaCall[] = [];
  readonly updates: RecordedUpdate[] = [];
  readonly apiKey: string;
  /** Jellyfin 10.x (true) or a default Jellyfin 12 (false): whether the legacy auth forms count on Jellyfin's paths. */
  readonly legacyAuth: boolean;
  /** ServerName in /System/Info and /System/Info/Public. */
  readonly name: string;
  /** The server's own Id (32 hex digits, made once per install): each fake is another server unless told otherwise. */
  readonly id: string;
  /** What `GET /Library/VirtualFolders` lists (the server's libraries and their folders). */
  virtualFolders: Array<{ Name: string; Locations: string[]; CollectionType?: string }> = [];
  /**
   * Library items for `GET /Items?ParentId=<library ItemId (its Name here)>&Fields=Path` (Jellyfin's ItemsController,
   * BaseItemDtoQueryResult `{Items, StartIndex}`, paged by StartIndex/Limit) and `POST /Items/{id}/Refresh`
   * (ItemRefreshController: 204, 404 for an unknown id; the modes are query parameters).
   */
  items: Array<{ Id: string; Path: string; library: string }> = [];
  /** Item refreshes taken: the id and the query. */
  readonly itemRefreshes: Array<{ id: string; query: Record<string, string> }> = [];

  /** The libraries and items made from the disk (empty: the `virtualFolders`/`items` lists above answer instead). */
  readonly model = new LibraryModel();
  /** Jellyfin's or Emby's version, in /System/Info. */
  version: string;
  /** The TargetedScan plugin: absent, or installed with a status ("Active", "Disabled", ...). */
  plugin: { status: string } | undefined;
  /** How long a queued refresh waits (the server's refresh queue and LibraryMonitor delay, shortened). */
  refreshDelayMs: number;
  private readonly pending = new Set<Promise<void>>();
  /** Tokens of signed-in users (what `POST /Users/AuthenticateByName` would hand out): their sockets get LibraryChanged. */
  readonly userTokens = new Set<string>();
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sessions = new Set<{ ws: WebSocket; user: boolean }>();
  /** Refreshes the queue ran: the item or library id, and its items touched. */
  readonly refreshesRun: Array<{ id: string; touched: number }> = [];

  constructor(opts: { apiKey?: string; name?: string; legacyAuth?: boolean; id?: string; version?: string; plugin?: boolean | string; refreshDelayMs?: number } = {}) {
    super();
    this.apiKey = opts.apiKey ?? 'media-api-key';
    this.legacyAuth = opts.legacyAuth ?? false;
    this.name = opts.name ?? 'fake';
    this.id = opts.id ?? randomBytes(16).toString('hex');
    this.version = opts.version ?? '10.9.11';
    this.plugin = opts.plugin ? { status: typeof opts.plugin === 'string' ? opts.plugin : 'Active' } : undefined;
    this.refreshDelayMs = opts.refreshDelayMs ?? 20;
  }

  /** Jellyfin 10.11 or later, whose Media/Updated refreshes the whole library. */
  private get wholeLibrary(): boolean {
    const [major, minor] = this.version.split('.').map(Number);
    return major! > 10 || (major === 10 && minor! >= 11);
  }

  /** Resolves once every queued refresh has run (tests wait on this, not on time). */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  /** Queues a refresh of an item or a library, run after refreshDelayMs; `call` names it in `model.touches`. */
  private queueRefresh(id: string, call: string): void {
    const run = new Promise<void>((resolve) => setTimeout(resolve, this.refreshDelayMs)).then(() => {
      const lib = this.model.libraryById(id);
      const item = this.model.items.get(id);
      const before = new Set(this.model.items.keys());
      const touched = lib ? this.model.refreshLibrary(lib) : item ? this.model.refreshItem(item) : 0;
      this.libraryChanged(before);
      this.refreshesRun.push({ id, touched });
      this.model.touches.push({ call, items: touched });
    });
    this.pending.add(run);
    void run.finally(() => this.pending.delete(run));
  }

  /** The websocket: a session per connection, with a user or (the API key) without one. */
  protected override handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const token = url.searchParams.get('api_key') ?? /Token="([^"]*)"/i.exec(String(req.headers.authorization ?? ''))?.[1];
    const user = token !== undefined && this.userTokens.has(token);
    if (url.pathname.toLowerCase() !== '/socket' || (token !== this.apiKey && !user)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const session = { ws, user };
      this.sessions.add(session);
      ws.on('close', () => this.sessions.delete(session));
      ws.send(JSON.stringify({ MessageType: 'ForceKeepAlive', MessageId: randomBytes(16).toString('hex'), Data: 60 }));
    });
  }

  /** LibraryChanged for what a refresh added and dropped, to users' sessions only (LibraryChangedNotifier.cs:255-259). */
  private libraryChanged(before: ReadonlySet<string>): void {
    const added = [...this.model.items.keys()].filter((id) => !before.has(id));
    const removed = [...before].filter((id) => !this.model.items.has(id));
    if (!added.length && !removed.length) return;
    const message = JSON.stringify({
      MessageType: 'LibraryChanged',
      MessageId: randomBytes(16).toString('hex'),
      Data: { CollectionFolders: [], FoldersAddedTo: [], FoldersRemovedFrom: [], ItemsAdded: added, ItemsRemoved: removed, ItemsUpdated: [], IsEmpty: false },
    });
    for (const s of this.sessions) if (s.user) s.ws.send(message);
  }

  override async stop(): Promise<void> {
    for (const s of this.sessions) s.ws.terminate();
    this.sessions.clear();
    await super.stop();
  }

  /** Media/Updated for one path (FileRefresher.cs:130-186), or its whole library on 10.11+. */
  private mediaUpdated(path: string, emby: boolean): void {
    const lib = this.model.libraryOf(path);
    if (!lib) return;
    if (!emby && this.wholeLibrary) return this.queueRefresh(lib.ItemId, `Media/Updated ${path}`);
    const at = this.model.deepestAt(path);
    // A deleted item's nearest parent that still exists (FileRefresher.cs:174-183).
    let target: FakeItem | FakeLibrary | undefined = at;
    while (target && !('ItemId' in target) && !existsSync(target.Path)) target = this.model.items.get(target.ParentId) ?? this.model.libraryById(target.ParentId);
    if (target) this.queueRefresh('ItemId' in target ? target.ItemId : target.Id, `Media/Updated ${path}`);
  }

  /** A BaseItemDto with only the fields asked for (DtoService.cs:1069-1175). */
  private dto(i: FakeItem, fields: Set<string>, emby: boolean): Record<string, unknown> {
    return {
      Name: i.Name,
      ServerId: this.id,
      Id: i.Id,
      Type: i.Type,
      IsFolder: i.IsFolder,
      ...(i.IndexNumber !== undefined ? { IndexNumber: i.IndexNumber } : {}),
      ...(i.ParentIndexNumber !== undefined ? { ParentIndexNumber: i.ParentIndexNumber } : {}),
      ...(i.SeriesName !== undefined ? { SeriesName: i.SeriesName } : {}),
      ...(i.ProductionYear !== undefined ? { ProductionYear: i.ProductionYear } : {}),
      ...(fields.has('path') ? { Path: i.Path } : {}),
      ...(fields.has('parentid') ? { ParentId: i.ParentId } : {}),
      ...(emby ? {} : { LocationType: 'FileSystem' }),
    };
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const lower = url.pathname.toLowerCase();
    const prefix: '' | '/emby' = lower.startsWith('/emby/') ? '/emby' : '';
    const route = lower.slice(prefix.length);
    const mediaBrowser = (header: unknown) => /MediaBrowser .*Token="([^"]*)"/i.exec(String(header ?? ''))?.[1];
    const modern = mediaBrowser(req.headers.authorization);
    const legacy =
      (req.headers['x-emby-token'] as string | undefined) ??
      mediaBrowser(req.headers['x-emby-authorization']) ??
      url.searchParams.get('api_key') ??
      url.searchParams.get('ApiKey') ??
      undefined;
    const token = prefix === '' && !this.legacyAuth ? modern : (legacy ?? modern);
    const call: MediaCall = { method: req.method ?? 'GET', path: url.pathname, query: url.search.slice(1), status: 0, token, authorization: req.headers.authorization, embyToken: req.headers['x-emby-token'] as string | undefined };
    this.calls.push(call);
    const send = (status: number, body?: unknown) => {
      call.status = status;
      if (body === undefined) res.writeHead(status).end();
      else res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    };
    if (this.mode === 'error503') return send(503);
    // The public part needs no key: what a client reads before signing in.
    if (route === '/system/info/public' && req.method === 'GET') {
      return send(200, { LocalAddress: this.url, ServerName: this.name, Version: '10.9.11', ProductName: 'Jellyfin Server', OperatingSystem: '', Id: this.id, StartupWizardCompleted: true });
    }
    if (token !== this.apiKey) return send(401);
    const emby = prefix === '/emby';
    if (route === '/system/info' && req.method === 'GET') {
      return send(200, { ServerName: this.name, Version: this.version, ...(emby ? {} : { ProductName: 'Jellyfin Server' }), Id: this.id, OperatingSystem: 'Linux' });
    }
    if (route === '/plugins' && req.method === 'GET') {
      const plugins = this.plugin
        ? [
            emby
              ? { Name: 'TargetedScan', Version: '1.8.0.0', Id: 'b2c3d4e5f6a78901bcdef12345678901', Description: 'Adds POST /Library/ScanPath endpoint for targeted library scanning without full library scans.', ConfigurationFileName: 'TargetedScan.xml' }
              : { Name: 'TargetedScan', Version: '1.9.0.0', ConfigurationFileName: null, Description: 'Adds POST /Library/ScanPath endpoint for targeted library scanning without full library scans.', Id: 'a1b2c3d4e5f67890abcdef1234567890', CanUninstall: true, HasImage: true, Status: this.plugin.status },
          ]
        : [];
      return send(200, plugins);
    }
    if (route === '/library/virtualfolders' && req.method === 'GET') {
      const modelled = this.model.libraries.map((l) => ({ Name: l.Name, Locations: l.Locations, CollectionType: l.CollectionType, LibraryOptions: {}, ItemId: l.ItemId, RefreshStatus: 'Idle' }));
      return send(200, [...modelled, ...this.virtualFolders.map((f) => ({ ItemId: f.Name, LibraryOptions: {}, RefreshStatus: 'Idle', ...f }))]);
    }
    const pluginRoute = route === '/library/scanpaths' || route === '/library/scanpath';
    if (pluginRoute && req.method === 'POST' && this.plugin?.status === 'Active') {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        return send(400, { title: 'One or more validation errors occurred.', status: 400 });
      }
      if (route === '/library/scanpath') {
        const path = prop(body, 'path');
        if (typeof path !== 'string' || !path.trim()) return send(400, { ItemId: '', ItemName: '', Status: 'BadRequest', Path: '', Message: 'Path is required' });
        const r = this.pluginScan(path);
        return send(r.Status === 'PathNotFound' || r.Status === 'ParentNotFound' ? 404 : r.Status === 'Failed' ? 500 : 200, r);
      }
      const paths = prop(body, 'paths');
      if (!Array.isArray(paths) || paths.length === 0) return send(400, { Results: [] });
      // Shallowest first, each path once (TargetedScanService.cs:246-267).
      const unique = [...new Set(paths.filter((p): p is string => typeof p === 'string' && p.trim() !== ''))].sort((a, b) => a.split('/').length - b.split('/').length);
      return send(200, { Results: unique.map((p) => ({ ...this.pluginScan(p), Path: p, Message: p })) });
    }
    if (route === '/items' && req.method === 'GET' && (this.model.libraries.length || url.searchParams.has('Ids'))) {
      const q = (k: string) => url.searchParams.get(k) ?? url.searchParams.get(k[0]!.toLowerCase() + k.slice(1));
      const fields = new Set((q('Fields') ?? '').split(',').map((f) => f.trim().toLowerCase()).filter(Boolean));
      const parent = q('ParentId');
      const ids = q('Ids')?.split(',').filter(Boolean);
      let found: FakeItem[];
      if (ids) found = ids.flatMap((id) => this.model.items.get(id) ?? []);
      else if (parent) found = /^true$/i.test(q('Recursive') ?? '') ? this.model.descendants(parent) : this.model.children(parent);
      else found = [...this.model.items.values()];
      const start = Number(q('StartIndex') ?? 0);
      const limit = Number(q('Limit') ?? 1e9);
      const page = found.slice(start, start + limit);
      this.model.listed += page.length;
      return send(200, { Items: page.map((i) => this.dto(i, fields, emby)), TotalRecordCount: found.length, StartIndex: start });
    }
    if (route === '/items' && req.method === 'GET') {
      const parent = url.searchParams.get('ParentId') ?? url.searchParams.get('parentId');
      const start = Number(url.searchParams.get('StartIndex') ?? 0);
      const limit = Number(url.searchParams.get('Limit') ?? 1e9);
      const all = this.items.filter((i) => parent === null || i.library === parent);
      const withPath = /(^|,)Path(,|$)/i.test(url.searchParams.get('Fields') ?? '');
      return send(200, { Items: all.slice(start, start + limit).map((i) => ({ Id: i.Id, Name: i.Id, ...(withPath ? { Path: i.Path } : {}) })), StartIndex: start });
    }
    const itemRefresh = /^\/items\/([^/]+)\/refresh$/.exec(route);
    if (itemRefresh && req.method === 'POST') {
      const modes = ['none', 'validationonly', 'default', 'fullrefresh'];
      for (const k of ['MetadataRefreshMode', 'ImageRefreshMode']) {
        const v = url.searchParams.get(k);
        if (v !== null && !modes.includes(v.toLowerCase())) return send(400, { title: 'One or more validation errors occurred.', status: 400, errors: { [k]: [`The value '${v}' is not valid.`] } });
      }
      const id = itemRefresh[1]!;
      const modelled = this.model.items.get(id) ?? this.model.libraryById(id);
      if (modelled) {
        this.itemRefreshes.push({ id, query: Object.fromEntries(url.searchParams) });
        this.queueRefresh(id, `Items/${id}/Refresh`);
        return send(204);
      }
      if (!this.items.some((i) => i.Id.toLowerCase() === itemRefresh[1])) return send(404);
      this.itemRefreshes.push({ id: this.items.find((i) => i.Id.toLowerCase() === itemRefresh[1])!.Id, query: Object.fromEntries(url.searchParams) });
      return send(204);
    }
    if (route === '/library/media/updated' && req.method === 'POST') {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        return send(400, { type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1', title: 'One or more validation errors occurred.', status: 400 });
      }
      const updates = prop(body, 'updates');
      if (!Array.isArray(updates)) return send(400, { title: 'One or more validation errors occurred.', status: 400 });
      const parsed = updates.map((u) => ({ path: prop(u, 'path'), updateType: prop(u, 'updateType') }));
      if (parsed.some((u) => typeof u.path !== 'string' || u.path === '')) return send(400, { title: 'Path is required', status: 400 });
      for (const u of parsed) this.updates.push({ path: u.path as string, updateType: String(u.updateType ?? 'Modified'), prefix, at: Date.now() });
      for (const u of parsed) this.mediaUpdated(u.path as string, emby);
      return send(204);
    }
    return send(404);
  }

  /** One path through the plugin, its answer shaped as ScanPathResponse, and its queued refreshes. */
  private pluginScan(path: string): { ItemId: string; ItemName: string; Status: string; Path: string; Message: string } {
    const before = new Set(this.model.items.keys());
    const r = this.model.pluginScan(path);
    this.libraryChanged(before);
    this.model.touches.push({ call: `ScanPath ${path}`, items: r.touched });
    for (const id of r.queued) this.queueRefresh(id, `ScanPath ${path} (queued refresh)`);
    return { ItemId: r.item?.Id ?? '', ItemName: r.item?.Name ?? '', Status: r.status, Path: path, Message: path };
  }
}

/** ASP.NET's case-insensitive JSON property lookup. */
function prop(obj: unknown, name: string): unknown {
  if (!obj || typeof obj !== 'object') return undefined;
  const key = Object.keys(obj).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : (obj as Record<string, unknown>)[key];
}
