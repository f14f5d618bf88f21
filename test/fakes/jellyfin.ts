import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SwitchableServer, type ServerMode } from './switchable-server.ts';

/**
 * A fake Jellyfin / Emby server on 127.0.0.1 (docs/protocols.md section 4). It serves both products' paths:
 * Jellyfin's at the root and Emby's under `/emby`. Like ASP.NET, JSON property names bind
 * case-insensitively (`path`/`Path`). Auth on Emby's paths: `X-Emby-Token`, `X-Emby-Authorization`,
 * `api_key` or `Authorization: MediaBrowser Token="…"`. On Jellyfin's paths only the `Authorization` header
 * counts, as in a default Jellyfin 12 (EnableLegacyAuthorization off: the legacy forms are ignored, so 401);
 * `legacyAuth: true` makes it a Jellyfin 10.x that takes them all. `POST /Library/Media/Updated` answers 204; an update without a path answers 400.
 * `GET /System/Info/Public` answers without a key (the server's Id and name), as both servers do.
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

  constructor(opts: { apiKey?: string; name?: string; legacyAuth?: boolean; id?: string } = {}) {
    super();
    this.apiKey = opts.apiKey ?? 'media-api-key';
    this.legacyAuth = opts.legacyAuth ?? false;
    this.name = opts.name ?? 'fake';
    this.id = opts.id ?? randomBytes(16).toString('hex');
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
    const call: MediaCall = { method: req.method ?? 'GET', path: url.pathname, status: 0, token, authorization: req.headers.authorization, embyToken: req.headers['x-emby-token'] as string | undefined };
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
    if (route === '/system/info' && req.method === 'GET') {
      return send(200, { ServerName: this.name, Version: '10.9.11', Id: this.id, OperatingSystem: 'Linux' });
    }
    if (route === '/library/virtualfolders' && req.method === 'GET') {
      return send(200, this.virtualFolders.map((f) => ({ ItemId: f.Name, LibraryOptions: {}, RefreshStatus: 'Idle', ...f })));
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
      return send(204);
    }
    return send(404);
  }
}

/** ASP.NET's case-insensitive JSON property lookup. */
function prop(obj: unknown, name: string): unknown {
  if (!obj || typeof obj !== 'object') return undefined;
  const key = Object.keys(obj).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : (obj as Record<string, unknown>)[key];
}
