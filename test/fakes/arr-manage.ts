import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordedCall } from './recording-server.ts';
import { SwitchableServer } from './switchable-server.ts';

/**
 * A fake Sonarr or Radarr management API (v3), or Lidarr's (v1), on 127.0.0.1, for `scanrelay setup`. Shapes and
 * behaviour from Sonarr at 49df353, Radarr at 1b9662d and Lidarr at 17dab6f (Lidarr.Api.V1: the same provider
 * controller; NotificationResource.cs:5-27 with onReleaseImport and onTrackRetag; its Test payload with an artist,
 * WebhookBase.cs BuildTestPayload; its Download with artist, album, tracks and trackFiles, BuildOnReleaseImportPayload):
 * - auth: the key in `X-Api-Key` or `?apikey=`, else 401 (Sonarr.Http/Authentication/ApiKeyAuthenticationHandler);
 * - `GET system/status`; `GET rootfolder` (Api.V3/RootFolders/RootFolderResource.cs:9-17: id, path, accessible,
 *   freeSpace, totalSpace (Sonarr only), unmappedFolders);
 * - `GET series` / `GET movie` (id, title, path);
 * - notification CRUD (Api.V3/ProviderControllerBase.cs): `GET` lists by name (60-76); `POST` validates (a name,
 *   unique ignoring case: 44-45) and, when the connection is enabled (NotificationDefinition.Enable: any event on),
 *   tests it unless `forceSave` and only then saves, answering 201 with the resource (78-93); `PUT /{id}` tests a
 *   changed, enabled connection unless `forceSave` and answers 202 (95-125); `DELETE /{id}` (180-186);
 *   `GET schema` (197-218); `POST test` takes the whole resource in the body and tests it (220-231). A failed test
 *   is a 400 with the validation failures (307-320).
 * - NotificationResource (Api.V3/Notifications/NotificationResource.cs:5-36 Sonarr, 5-34 Radarr): the provider
 *   fields (ProviderResource.cs:9-21) and the onX and supportsOnX flags.
 * - The Webhook's test (Notifications/Webhook/Webhook.cs:83-104) posts the Test payload (WebhookBase.cs:220-246 in
 *   Sonarr, 206-240 in Radarr) to the URL with the method, JSON, `Accept: application/json` and Basic credentials
 *   when a username or password is set (WebhookProxy.cs:23-57); a failure is a validation failure on `Url`.
 * The other implementations' tests (PlexServer, MediaBrowser) would reach their server: the fake fails them (it is
 * never kinder than the real one), so saving one needs `forceSave`. Every request is recorded.
 */
/** A request the fake received, as every recording fake keeps it. */
export type ArrCall = RecordedCall;

export interface ArrField {
  order: number;
  name: string;
  label: string;
  value?: unknown;
  type: string;
  advanced: boolean;
  privacy: string;
  isFloat: boolean;
  selectOptions?: Array<{ value: number; name: string; order: number }>;
}

export type ArrConnection = Record<string, unknown> & { id: number; name: string; implementation: string; fields: ArrField[] };

/** What a Webhook's receiver was sent (by a test or a real event). */
export interface SentWebhook {
  connection: number;
  url: string;
  status: number | string;
  payload: Record<string, unknown>;
}

const SONARR_EVENTS = ['onGrab', 'onDownload', 'onUpgrade', 'onImportComplete', 'onRename', 'onSeriesAdd', 'onSeriesDelete', 'onEpisodeFileDelete', 'onEpisodeFileDeleteForUpgrade', 'onHealthIssue', 'includeHealthWarnings', 'onHealthRestored', 'onApplicationUpdate', 'onManualInteractionRequired'];
const LIDARR_EVENTS = ['onGrab', 'onReleaseImport', 'onUpgrade', 'onRename', 'onHealthIssue', 'includeHealthWarnings', 'onApplicationUpdate', 'onDownloadFailure', 'onImportFailure', 'onTrackRetag'];
const RADARR_EVENTS = ['onGrab', 'onDownload', 'onUpgrade', 'onRename', 'onMovieAdded', 'onMovieDelete', 'onMovieFileDelete', 'onMovieFileDeleteForUpgrade', 'onHealthIssue', 'includeHealthWarnings', 'onHealthRestored', 'onApplicationUpdate', 'onManualInteractionRequired'];

const field = (order: number, name: string, label: string, type: string, value: unknown, extra: Partial<ArrField> = {}): ArrField => ({
  order, name, label, value, type, advanced: false, privacy: 'normal', isFloat: false, ...extra,
});

export class FakeArrManage extends SwitchableServer {
  readonly calls: ArrCall[] = [];
  readonly sent: SentWebhook[] = [];
  rootFolders: string[] = [];
  items: Array<{ id: number; title: string; path: string }> = [];
  connections: ArrConnection[] = [];
  /** Added to every answer, to simulate a slow *arr. */
  latencyMs = 0;
  private nextId = 1;
  readonly label: string;

  constructor(
    readonly product: 'sonarr' | 'radarr' | 'lidarr',
    readonly apiKey = `${product}-key-0123456789abcdef`,
  ) {
    super();
    this.label = product === 'sonarr' ? 'Sonarr' : product === 'radarr' ? 'Radarr' : 'Lidarr';
  }

  private get events(): string[] {
    return this.product === 'sonarr' ? SONARR_EVENTS : this.product === 'radarr' ? RADARR_EVENTS : LIDARR_EVENTS;
  }

  /** The API's path prefix: Lidarr keeps v1. */
  get api(): string {
    return this.product === 'lidarr' ? '/api/v1' : '/api/v3';
  }

  /** The import event's flag: Lidarr calls it On Release Import. */
  private get importFlag(): string {
    return this.product === 'lidarr' ? 'onReleaseImport' : 'onDownload';
  }

  /** The templates GET notification/schema lists: the Webhook and the media servers' own connections. */
  schema(): ArrConnection[] {
    const flags = (supported: (e: string) => boolean) => {
      const out: Record<string, unknown> = {};
      for (const e of this.events) {
        out[e] = false;
        if (e !== 'includeHealthWarnings') out[`supportsO${e.slice(1)}`] = supported(e);
      }
      return out;
    };
    const base = (implementation: string, implementationName: string, configContract: string, fields: ArrField[], supported: (e: string) => boolean): ArrConnection => ({
      id: 0,
      name: '',
      implementation,
      implementationName,
      configContract,
      infoLink: `https://wiki.servarr.com/${this.product}/supported#${implementation.toLowerCase()}`,
      tags: [],
      fields,
      presets: [],
      link: '',
      testCommand: '',
      ...flags(supported),
    });
    return [
      base('MediaBrowser', 'Emby / Jellyfin', 'MediaBrowserSettings', [
        field(0, 'host', 'Host', 'textbox', 'localhost'),
        field(1, 'port', 'Port', 'textbox', 8096),
        field(2, 'useSsl', 'Use SSL', 'checkbox', false),
        field(4, 'apiKey', 'API Key', 'textbox', '', { privacy: 'apiKey' }),
        field(6, 'updateLibrary', 'Update Library', 'checkbox', true),
      ], (e) => !/Grab|Health|Application|Manual|Add/.test(e)),
      base('PlexServer', 'Plex Media Server', 'PlexServerSettings', [
        field(1, 'host', 'Host', 'textbox', ''),
        field(2, 'port', 'Port', 'number', 32400),
        field(5, 'authToken', 'Auth Token', 'textbox', '', { privacy: 'apiKey', advanced: true }),
        field(7, 'updateLibrary', 'Update Library', 'checkbox', true),
      ], (e) => !/Grab|Health|Application|Manual|Add/.test(e)),
      base('Webhook', 'Webhook', 'WebhookSettings', [
        field(0, 'url', 'URL', 'url', undefined),
        field(1, 'method', 'Method', 'select', 1, { selectOptions: [{ value: 1, name: 'POST', order: 1 }, { value: 2, name: 'PUT', order: 2 }] }),
        field(2, 'username', 'Username', 'textbox', undefined, { privacy: 'userName' }),
        field(3, 'password', 'Password', 'password', undefined, { privacy: 'password' }),
        field(4, 'headers', 'Headers', 'keyValueList', [], { advanced: true }),
      ], () => true),
    ];
  }

  /** Adds an existing connection (e.g. the user's own Plex connection with Update Library on). */
  addConnection(name: string, implementation: 'PlexServer' | 'MediaBrowser', updateLibrary: boolean): ArrConnection {
    const template = this.schema().find((t) => t.implementation === implementation)!;
    const c: ArrConnection = { ...template, id: this.nextId++, name, presets: undefined, [this.importFlag]: true, onUpgrade: true, onRename: true, fields: template.fields.map((f) => (f.name === 'updateLibrary' ? { ...f, value: updateLibrary } : f)) };
    delete c.presets;
    this.connections.push(c);
    return c;
  }

  callsTo(method: string, path: string): ArrCall[] {
    return this.calls.filter((c) => c.method === method && c.path === path);
  }

  webhooks(): ArrConnection[] {
    return this.connections.filter((c) => c.implementation === 'Webhook');
  }

  private enabled(c: Record<string, unknown>): boolean {
    return this.events.some((e) => e !== 'includeHealthWarnings' && c[e] === true);
  }

  private value(c: Record<string, unknown>, name: string): unknown {
    return (c.fields as ArrField[] | undefined)?.find((f) => f.name === name)?.value;
  }

  /** The connection's own test; undefined when it passed, else the failure message. */
  private async runTest(c: Record<string, unknown>, id: number): Promise<string | undefined> {
    if (c.implementation !== 'Webhook') return `Unable to connect to ${c.implementation === 'PlexServer' ? 'Plex Media Server' : 'Emby / Jellyfin'}`;
    return this.sendTo(c, id, this.testPayload());
  }

  /** WebhookProxy.SendWebhook: the payload as JSON to the URL; undefined when it answered 2xx. */
  private async sendTo(c: Record<string, unknown>, id: number, payload: Record<string, unknown>): Promise<string | undefined> {
    const url = String(this.value(c, 'url') ?? '');
    const method = this.value(c, 'method') === 2 ? 'PUT' : 'POST';
    const user = (this.value(c, 'username') as string | undefined) ?? '';
    const pass = (this.value(c, 'password') as string | undefined) ?? '';
    const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/json' };
    if (user.trim() || pass.trim()) headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    try {
      const res = await fetch(url, { method, headers, body: JSON.stringify(payload), signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      this.sent.push({ connection: id, url, status: res.status, payload });
      if (res.status >= 400) return `Unable to post to webhook: ${res.status === 401 ? 'Unauthorized' : `HTTP ${res.status}`}`;
      return undefined;
    } catch (err) {
      this.sent.push({ connection: id, url, status: String((err as Error).message), payload });
      return `Unable to post to webhook: ${(err as Error).message}`;
    }
  }

  testPayload(): Record<string, unknown> {
    const common = { eventType: 'Test', instanceName: this.label, applicationUrl: '' };
    if (this.product === 'lidarr') {
      return { ...common, artist: { id: 1, name: 'Test Name', path: 'C:\\testpath', mbId: 'aaaaa-aaa-aaaa-aaaaaa' }, albums: [{ id: 123, title: 'Test title' }] };
    }
    if (this.product === 'sonarr') {
      return { ...common, series: { id: 1, title: 'Test Title', path: 'C:\\testpath', tvdbId: 1234, tags: ['test-tag'] }, episodes: [{ id: 123, episodeNumber: 1, seasonNumber: 1, title: 'Test title' }] };
    }
    return {
      ...common,
      movie: { id: 1, title: 'Test Title', year: 1970, folderPath: 'C:\\testpath', releaseDate: '1970-01-01', tags: ['test-tag'] },
      remoteMovie: { tmdbId: 1234, imdbId: '5678', title: 'Test title', year: 1970 },
      release: { indexer: 'Test Indexer', quality: 'Test Quality', qualityVersion: 1, releaseGroup: 'Test Group', releaseTitle: 'Test Title', size: 9999999 },
    };
  }

  /**
   * A real import: the Download event (WebhookBase.BuildOnDownloadPayload; Sonarr's WebhookImportPayload with
   * series, episodes and episodeFile, Radarr's with movie and movieFile) sent to every connection with onDownload on.
   */
  async importFile(itemId: number, relativePath: string): Promise<SentWebhook[]> {
    const item = this.items.find((i) => i.id === itemId)!;
    const file = { id: 900 + itemId, relativePath, path: `${item.path}/${relativePath}`, quality: 'WEBDL-1080p', qualityVersion: 1, size: 1_000_000 };
    const payload =
      this.product === 'lidarr'
        ? { eventType: 'Download', instanceName: this.label, applicationUrl: '', artist: { id: item.id, name: item.title, path: item.path }, album: { id: 1, title: 'Album' }, tracks: [{ id: 1, title: 'Track', trackNumber: '1' }], trackFiles: [file], isUpgrade: false }
        : this.product === 'sonarr'
        ? { eventType: 'Download', instanceName: this.label, applicationUrl: '', series: { id: item.id, title: item.title, path: item.path, tvdbId: 1000 + item.id, type: 'standard' }, episodes: [{ id: 1, episodeNumber: 1, seasonNumber: 1, title: 'Pilot' }], episodeFile: file, isUpgrade: false, downloadClient: 'fake', downloadId: 'abc' }
        : { eventType: 'Download', instanceName: this.label, applicationUrl: '', movie: { id: item.id, title: item.title, year: 2020, folderPath: item.path, tmdbId: 2000 + item.id }, remoteMovie: { tmdbId: 2000 + item.id, title: item.title, year: 2020 }, movieFile: file, isUpgrade: false, downloadClient: 'fake', downloadId: 'abc' };
    const before = this.sent.length;
    for (const c of this.connections) if (c.implementation === 'Webhook' && c[this.importFlag] === true) await this.sendTo(c, c.id, payload);
    return this.sent.slice(before);
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const call: ArrCall = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body, status: 0 };
    this.calls.push(call);
    if (this.latencyMs) await new Promise((r) => setTimeout(r, this.latencyMs));
    const out = this.mode === 'error503' ? { status: 503, body: 'Service Unavailable' } : await this.answer(call, url);
    call.status = out.status;
    if (out.body === undefined) res.writeHead(out.status).end();
    else if (typeof out.body === 'string') res.writeHead(out.status, { 'content-type': 'text/plain; charset=utf-8' }).end(out.body);
    else res.writeHead(out.status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(out.body));
  }

  private failures(message: string, property = 'Url'): { status: number; body: unknown } {
    return { status: 400, body: [{ propertyName: property, errorMessage: message, severity: 'error', isWarning: false }] };
  }

  private async answer(call: ArrCall, url: URL): Promise<{ status: number; body?: unknown }> {
    if (!call.path.startsWith('/api/')) return { status: 404 };
    const key = (call.headers['x-api-key'] as string | undefined) ?? url.searchParams.get('apikey') ?? undefined;
    if (key !== this.apiKey) return { status: 401 };
    const p = call.path.startsWith(`${this.api}/`) ? call.path.slice(this.api.length) : call.path;
    if (p === call.path) return { status: 404 };
    const forceSave = url.searchParams.get('forceSave') === 'true';
    if (call.method === 'GET' && p === '/system/status') {
      return { status: 200, body: { appName: this.label, instanceName: this.label, version: { sonarr: '4.0.14.2939', radarr: '5.21.1.9799', lidarr: '2.9.6.4552' }[this.product], isDocker: true, urlBase: '', authentication: 'forms' } };
    }
    if (call.method === 'GET' && p === '/rootfolder') {
      return { status: 200, body: this.rootFolders.map((path, i) => ({ id: i + 1, path, accessible: true, freeSpace: 1e12, ...(this.product === 'sonarr' ? { totalSpace: 2e12 } : {}), unmappedFolders: [] })) };
    }
    if (call.method === 'GET' && p === { sonarr: '/series', radarr: '/movie', lidarr: '/artist' }[this.product]) {
      return { status: 200, body: this.items.map((i) => ({ ...i, monitored: true, rootFolderPath: i.path.replace(/\/[^/]+$/, '') })) };
    }
    if (call.method === 'GET' && p === '/notification') return { status: 200, body: [...this.connections].sort((a, b) => a.name.localeCompare(b.name)) };
    if (call.method === 'GET' && p === '/notification/schema') return { status: 200, body: this.schema() };
    if (call.method === 'POST' && p === '/notification/test') {
      const c = call.body as Record<string, unknown>;
      const failed = await this.runTest(c, Number(c.id ?? 0));
      return failed ? this.failures(failed) : { status: 200, body: {} };
    }
    if (call.method === 'POST' && p === '/notification') {
      const c = call.body as ArrConnection;
      const invalid = this.invalid(c, 0);
      if (invalid) return invalid;
      if (this.enabled(c)) {
        const failed = await this.runTest(c, 0);
        if (failed && !forceSave) return this.failures(failed);
      }
      const saved: ArrConnection = { ...c, id: this.nextId++ };
      delete saved.presets;
      this.connections.push(saved);
      return { status: 201, body: saved };
    }
    const one = /^\/notification\/(\d+)$/.exec(p);
    if (one) {
      const id = Number(one[1]);
      const i = this.connections.findIndex((c) => c.id === id);
      if (i < 0) return { status: 404, body: { message: 'NotFound' } };
      if (call.method === 'GET') return { status: 200, body: this.connections[i] };
      if (call.method === 'DELETE') {
        this.connections.splice(i, 1);
        return { status: 200, body: {} };
      }
      if (call.method === 'PUT') {
        const c = { ...(call.body as ArrConnection), id };
        const invalid = this.invalid(c, id);
        if (invalid) return invalid;
        const changed = JSON.stringify(c) !== JSON.stringify(this.connections[i]);
        if (this.enabled(c) && !forceSave && changed) {
          const failed = await this.runTest(c, id);
          if (failed) return this.failures(failed);
        }
        if (changed) this.connections[i] = c;
        return { status: 202, body: this.connections[i] };
      }
    }
    return { status: 404 };
  }

  private invalid(c: ArrConnection, id: number): { status: number; body: unknown } | undefined {
    if (!c || typeof c !== 'object' || !Array.isArray(c.fields)) return this.failures("'Fields' must not be empty.", 'Fields');
    if (!c.name) return this.failures("'Name' must not be empty.", 'Name');
    if (this.connections.some((x) => x.name.toLowerCase() === String(c.name).toLowerCase() && x.id !== id)) return this.failures('Should be unique', 'Name');
    if (!c.implementation) return this.failures("'Implementation' must not be empty.", 'Implementation');
    if (c.implementation === 'Webhook' && !/^https?:\/\/[^/]/.test(String(this.value(c, 'url') ?? ''))) return this.failures('Invalid Url', 'Url');
    return undefined;
  }
}
