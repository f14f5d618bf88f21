import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { SwitchableServer, type ServerMode } from './switchable-server.ts';

/**
 * A fake Plex Media Server on 127.0.0.1 following the real API's paths, headers, status codes and
 * JSON/XML shapes (docs/protocols.md section 1). Every call is recorded.
 */
export interface FakeSection {
  id: string;
  title: string;
  type: 'movie' | 'show' | 'artist';
  locations: string[];
  /** The section's agent; default today's Plex Movie / Plex TV Series (legacy: com.plexapp.agents.imdb, ...). */
  agent?: string;
}

export interface RecordedCall {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  token: string | undefined;
  /** Where the token came from: Plex takes both, scanrelay should only ever use the header. */
  tokenIn: 'header' | 'query' | 'none';
  status: number;
  at: number;
}

export interface FakeActivity {
  uuid?: string;
  type: string;
  title?: string;
  progress?: number;
  sectionId?: string | number;
}

export type PlexMode = ServerMode;

/** One partial scan as the fake Plex ran it: when asked, when it showed as running, when it ended. */
export interface FakeScan {
  section: string;
  path: string;
  requestedAt: number;
  /** Asked while another scan was running (it waits its turn: Plex delays or drops such a request). */
  whileBusy: boolean;
  startedAt?: number;
  endedAt?: number;
  /** Plex skipped the path: no activity at all. */
  silent: boolean;
}

export interface StreamClient {
  transport: 'websocket' | 'sse';
  close(): void;
  send(notification: Record<string, unknown>): void;
}

/** A library item: a movie, episode or track with its file, or a season/album that holds others. */
export interface FakeItem {
  ratingKey: string;
  sectionId: string;
  type: 'movie' | 'show' | 'season' | 'episode' | 'artist' | 'album' | 'track';
  parentRatingKey?: string;
  file?: string;
  /** More versions of the item (each a Media with one Part), e.g. two movies Plex merged into one item. */
  moreFiles?: string[];
  /** The agent's guid (`plex://movie/...`, `com.plexapp.agents.imdb://tt...?lang=en`) and, for today's agents, Guid[] ids. */
  guid?: string;
  guids?: string[];
  title?: string;
  /** The release year (a movie's, an episode's air date's); Plex leaves it out when its agent found none. */
  year?: number;
  /** A season's or an episode's number (a track's on its album): `index`, and the child's `parentIndex`. */
  index?: number;
  /** Epoch seconds, as Plex writes it. */
  addedAt: number;
}

/** Plex's numeric item types (the `type` filter of a section listing). */
const ITEM_TYPE_NUMBER: Record<FakeItem['type'], number> = { movie: 1, show: 2, season: 3, episode: 4, artist: 8, album: 9, track: 10 };

const DEFAULT_SECTIONS: FakeSection[] = [
  { id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] },
  { id: '2', title: 'TV', type: 'show', locations: ['/data/TV', '/data/TV2'] },
];

export class FakePlex extends SwitchableServer {
  readonly calls: RecordedCall[] = [];
  sections: FakeSection[];
  activities: FakeActivity[] = [];
  /** Library items for section listings (`/library/sections/{id}/all`) and `/library/metadata/{id}/children`. */
  items: FakeItem[] = [];
  /**
   * Items Plex adds when it scans them: each joins `items` (newest, addedAt now) when a scan of a folder holding
   * its file ends, as the scanner adds what it finds before its activity ends.
   */
  addedByScan: FakeItem[] = [];
  /** Added to every answer, to simulate a slow server. */
  latencyMs = 0;
  /** A server slow on some calls only: when it returns a number, that delay replaces latencyMs for the call. */
  latencyFor: ((method: string, path: string) => number | undefined) | undefined;
  /**
   * Plex's own scans, one at a time: each partial scan shows as a `library.update.section` activity (on the
   * notification stream, on /activities and as `refreshing` on its section) `scanStartDelayMs` after the
   * request, or after the scan before it ended, and lasts `scanActivityMs` (or `scanMsFor(path)`).
   */
  scanActivityMs = 0;
  scanStartDelayMs = 0;
  scanMsFor: ((path: string) => number) | undefined;
  /** Paths Plex skips (outside every location, as Plex sees it): no activity shows for them. */
  skipsPath: (path: string) => boolean = () => false;
  readonly scans: FakeScan[] = [];
  private scanQueue: FakeScan[] = [];
  private scanning: FakeScan | undefined;
  private readonly scanTimers = new Set<NodeJS.Timeout>();
  /** false: a Plex that never streams (both notification endpoints answer 404). */
  streaming = true;
  /** false: websocket upgrades are refused (a proxy that drops them); SSE still works. */
  websocketAvailable = true;
  /**
   * Called as a stream request is refused (404 while `streaming` is false): a test can let Plex stream again at an
   * exact point of the client's reconnect cycle, instead of at whatever moment a timer fires.
   */
  onStreamRefused: ((transport: 'websocket' | 'sse') => void) | undefined;
  /** Plex's SSE ping interval. */
  ssePingMs = 10_000;
  readonly streams = new Set<StreamClient>();
  /** Stream connections accepted so far. */
  streamConnections = 0;
  private readonly wss = new WebSocketServer({ noServer: true });
  /** false: /activities answers 404, as on a Plex too old to have it. */
  activitiesAvailable = true;
  readonly token: string;
  /** Plex's own id, made once per install (40 hex digits): each fake is another server unless told otherwise. */
  readonly machineIdentifier: string;
  /** The server's name as its owner set it (`friendlyName` of `GET /`). */
  readonly friendlyName: string;

  constructor(opts: { token?: string; sections?: FakeSection[]; machineIdentifier?: string; friendlyName?: string } = {}) {
    super();
    this.token = opts.token ?? 'plex-token-123';
    this.sections = opts.sections ?? DEFAULT_SECTIONS;
    this.machineIdentifier = opts.machineIdentifier ?? randomBytes(20).toString('hex');
    this.friendlyName = opts.friendlyName ?? 'fake-plex';
  }

  /** The partial scans Plex received: section id and decoded folder, in order. */
  refreshes(): Array<{ section: string; path: string; token: string | undefined }> {
    return this.calls
      .filter((c) => c.status === 200 && /^\/library\/sections\/[^/]+\/refresh$/.test(c.path) && c.query.path !== undefined)
      .map((c) => ({ section: c.path.split('/')[3]!, path: c.query.path!, token: c.token }));
  }

  callsTo(method: string, pattern: RegExp): RecordedCall[] {
    return this.calls.filter((c) => c.method === method && pattern.test(c.path));
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const query = Object.fromEntries(url.searchParams);
    const header = req.headers['x-plex-token'] as string | undefined;
    const inQuery = url.searchParams.get('X-Plex-Token') ?? undefined;
    const token = header ?? inQuery;
    const tokenIn = header !== undefined ? 'header' : inQuery !== undefined ? 'query' : 'none';
    const call: RecordedCall = { method: req.method ?? 'GET', path: url.pathname, query, headers: req.headers, token, tokenIn, status: 0, at: Date.now() };
    this.calls.push(call);
    req.resume();
    const latency = this.latencyFor?.(call.method, url.pathname) ?? this.latencyMs;
    if (latency) await new Promise((r) => setTimeout(r, latency));
    const json = (req.headers.accept ?? '').includes('application/json');
    const send = (status: number, body = '', type = json ? 'application/json' : 'text/xml;charset=utf-8') => {
      call.status = status;
      res.writeHead(status, { 'content-type': type, 'x-plex-protocol': '1.0' }).end(body);
    };
    if (this.mode === 'error503') return send(503, '<html><body>503 Service Unavailable</body></html>', 'text/html');

    const path = url.pathname;
    if (path === '/:/eventsource/notifications' && req.method === 'GET') {
      if (token !== this.token) return send(401, '<html><head><title>Unauthorized</title></head><body><h1>401 Unauthorized</h1></body></html>', 'text/html');
      if (!this.streaming) {
        send(404, '');
        return this.onStreamRefused?.('sse');
      }
      call.status = 200;
      return this.openSse(res);
    }
    // /identity needs no token (plex-api-spec: security: - {}).
    if (path === '/identity' && req.method === 'GET') {
      return send(200, json
        ? JSON.stringify({ MediaContainer: { size: 0, claimed: true, machineIdentifier: this.machineIdentifier, version: '1.40.1.8227-c0dd5a73e' } })
        : `<?xml version="1.0" encoding="UTF-8"?>\n<MediaContainer size="0" claimed="1" machineIdentifier="${this.machineIdentifier}" version="1.40.1.8227-c0dd5a73e"/>`);
    }
    if (token !== this.token) return send(401, '<html><head><title>Unauthorized</title></head><body><h1>401 Unauthorized</h1></body></html>', 'text/html');

    if (path === '/' && req.method === 'GET') {
      const root = { size: 0, friendlyName: this.friendlyName, machineIdentifier: this.machineIdentifier, version: '1.40.1.8227-c0dd5a73e', platform: 'Linux' };
      return send(200, json
        ? JSON.stringify({ MediaContainer: root })
        : `<?xml version="1.0" encoding="UTF-8"?>\n<MediaContainer ${Object.entries(root).map(([k, v]) => `${k}="${v}"`).join(' ')}/>`);
    }
    if ((path === '/library/sections' || path === '/library/sections/all') && req.method === 'GET') {
      return send(200, json ? this.sectionsJson() : this.sectionsXml());
    }
    const listing = /^\/library\/sections\/([^/]+)\/all$/.exec(path);
    if (listing && req.method === 'GET') {
      if (!this.sections.some((s) => s.id === listing[1])) return send(404, '');
      const type = url.searchParams.get('type');
      let items = this.items.filter((i) => i.sectionId === listing[1] && (type === null || String(ITEM_TYPE_NUMBER[i.type]) === type));
      if (url.searchParams.get('sort') === 'addedAt:desc') items = [...items].sort((a, b) => b.addedAt - a.addedAt);
      // Paging by query parameter or header, as Plex reads either.
      const start = Number(url.searchParams.get('X-Plex-Container-Start') ?? req.headers['x-plex-container-start'] ?? 0);
      const size = Number(url.searchParams.get('X-Plex-Container-Size') ?? req.headers['x-plex-container-size'] ?? items.length);
      const page = items.slice(start, start + size);
      return send(200, JSON.stringify({ MediaContainer: { size: page.length, totalSize: items.length, offset: start, librarySectionID: Number(listing[1]), Metadata: page.map((i) => this.itemJson(i)) } }));
    }
    const children = /^\/library\/metadata\/(\d+)\/children$/.exec(path);
    if (children && req.method === 'GET') {
      if (!this.items.some((i) => i.ratingKey === children[1])) return send(404, '');
      const list = this.items.filter((i) => i.parentRatingKey === children[1]);
      return send(200, JSON.stringify({ MediaContainer: { size: list.length, key: children[1], Metadata: list.map((i) => this.itemJson(i)) } }));
    }
    const refresh = /^\/library\/sections\/([^/]+)\/refresh$/.exec(path);
    if (refresh) {
      // Plex 1.32.7+ answers PUT (and POST from some clients) on refresh with 404; GET works.
      if (req.method !== 'GET') return send(404, '');
      if (!this.sections.some((s) => s.id === refresh[1])) return send(404, '');
      send(200, '');
      if (url.searchParams.has('path')) this.requestScan(refresh[1]!, url.searchParams.get('path')!);
      return;
    }
    const trash = /^\/library\/sections\/([^/]+)\/emptyTrash$/.exec(path);
    if (trash) {
      if (req.method !== 'PUT') return send(404, '');
      return send(this.sections.some((s) => s.id === trash[1]) ? 200 : 404, '');
    }
    const refreshItem = /^\/library\/metadata\/(\d+)\/refresh$/.exec(path);
    if (refreshItem) {
      if (req.method !== 'PUT') return send(404, '');
      return send(this.items.some((i) => i.ratingKey === refreshItem[1]) ? 200 : 404, '');
    }
    if (/^\/library\/metadata\/[\d,]+\/analyze$/.test(path)) return send(req.method === 'PUT' ? 200 : 404, '');
    if (path === '/activities' && req.method === 'GET' && this.activitiesAvailable) {
      return send(200, JSON.stringify({
        MediaContainer: {
          size: this.activities.length,
          Activity: this.activities.map((a, i) => ({
            uuid: a.uuid ?? `activity-${i}`,
            type: a.type,
            cancellable: false,
            userID: 1,
            title: a.title ?? 'Scanning',
            subtitle: '',
            progress: a.progress ?? 0,
            ...(a.sectionId !== undefined ? { Context: { librarySectionID: a.sectionId } } : {}),
          })),
        },
      }));
    }
    if (path === '/myplex/account' && req.method === 'GET') {
      return send(200, JSON.stringify({ MyPlex: { authToken: this.token, username: 'fakeuser', signInState: 'ok' } }));
    }
    if (this.handleMore(req.method ?? 'GET', url, send)) return;
    return send(404, '');
  }

  /** More routes in a subclass (plex-library.ts: items, matches, match, split); true when answered. */
  protected handleMore(_method: string, _url: URL, _send: (status: number, body?: string) => void): boolean {
    return false;
  }

  /** One item as Plex's JSON lists it: ratingKey and parentRatingKey are strings, files under Media[].Part[]. */
  protected itemJson(i: FakeItem): Record<string, unknown> {
    const parent = i.parentRatingKey !== undefined ? this.items.find((p) => p.ratingKey === i.parentRatingKey) : undefined;
    const grandparent = parent?.parentRatingKey;
    const grandparentTitle = grandparent !== undefined ? this.items.find((p) => p.ratingKey === grandparent)?.title : undefined;
    const files = [i.file, ...(i.moreFiles ?? [])].filter((f): f is string => !!f);
    return {
      ratingKey: i.ratingKey,
      key: `/library/metadata/${i.ratingKey}`,
      ...(i.parentRatingKey !== undefined ? { parentRatingKey: i.parentRatingKey, parentKey: `/library/metadata/${i.parentRatingKey}` } : {}),
      ...(grandparent !== undefined ? { grandparentRatingKey: grandparent, grandparentKey: `/library/metadata/${grandparent}` } : {}),
      ...(i.guid !== undefined ? { guid: i.guid } : {}),
      type: i.type,
      title: i.title ?? (i.file ? i.file.slice(i.file.lastIndexOf('/') + 1) : `item ${i.ratingKey}`),
      // An episode (a track) names its show and season (artist and album) as Plex's listings do.
      ...(grandparentTitle !== undefined ? { grandparentTitle } : {}),
      ...(parent?.title !== undefined && grandparent !== undefined ? { parentTitle: parent.title } : {}),
      ...(parent?.index !== undefined && grandparent !== undefined ? { parentIndex: parent.index } : {}),
      ...(i.index !== undefined ? { index: i.index } : {}),
      ...(i.year !== undefined ? { year: i.year } : {}),
      librarySectionID: Number(i.sectionId),
      addedAt: i.addedAt,
      updatedAt: i.addedAt,
      ...(files.length ? { Media: files.map((file, n) => ({ id: Number(i.ratingKey) * 10 + n, Part: [{ id: Number(i.ratingKey) * 100 + n, key: `/library/parts/${Number(i.ratingKey) * 100 + n}/${i.addedAt}/file.mkv`, file }] })) } : {}),
    };
  }

  override async stop(): Promise<void> {
    this.stopScans();
    await super.stop();
  }

  /** Ends the running scan and forgets queued ones (Plex's DELETE /library/sections/all/refresh), between tests. */
  stopScans(): void {
    for (const t of this.scanTimers) clearTimeout(t);
    this.scanTimers.clear();
    this.scanQueue = [];
    if (this.scanning?.startedAt !== undefined && this.scanning.endedAt === undefined) this.scanning.endedAt = Date.now();
    this.scanning = undefined;
    this.activities = this.activities.filter((a) => a.type !== 'library.update.section');
  }

  /** Drops every open notification stream, as a network fault or a Plex restart would. */
  dropStreams(): void {
    for (const c of [...this.streams]) c.close();
  }

  /** Sends one activity notification to every stream client, each in its transport's shape. */
  notify(notification: { event: 'started' | 'updated' | 'ended'; activity: FakeActivity & { uuid: string } }): void {
    const a = notification.activity;
    const body = {
      event: notification.event,
      uuid: a.uuid,
      Activity: { uuid: a.uuid, type: a.type, cancellable: false, userID: 1, title: a.title ?? 'Scanning', subtitle: '', progress: a.progress ?? 0, ...(a.sectionId !== undefined ? { Context: { librarySectionID: a.sectionId } } : {}) },
    };
    for (const c of this.streams) c.send(body);
  }

  /** Sends raw text to every websocket client (tests of what the parser refuses). */
  sendRaw(text: string): void {
    for (const c of this.streams) if (c.transport === 'websocket') (c as StreamClient & { raw(t: string): void }).raw(text);
  }

  private requestScan(section: string, path: string): void {
    const scan: FakeScan = { section, path, requestedAt: Date.now(), whileBusy: this.scanning !== undefined || this.scanQueue.length > 0, silent: this.skipsPath(path) };
    this.scans.push(scan);
    this.scanQueue.push(scan);
    if (!this.scanning) this.nextScan();
  }

  /** Plex scans one folder at a time: the next one starts its delay once the previous one ended. */
  private nextScan(): void {
    const scan = this.scanQueue.shift();
    this.scanning = scan;
    if (!scan) return;
    const delay = Math.max(0, scan.requestedAt + this.scanStartDelayMs - Date.now());
    this.timer(delay, () => {
      if (scan.silent) {
        this.scanning = undefined;
        return this.nextScan();
      }
      const title = `Scanning ${this.sections.find((s) => s.id === scan.section)?.title ?? scan.section}`;
      const activity = { uuid: `scan-${this.scans.indexOf(scan)}-${scan.requestedAt}`, type: 'library.update.section', title, sectionId: scan.section, progress: 0 };
      scan.startedAt = Date.now();
      this.activities.push(activity);
      this.notify({ event: 'started', activity });
      const ms = this.scanMsFor?.(scan.path) ?? this.scanActivityMs;
      if (ms >= 20) this.timer(ms / 2, () => this.notify({ event: 'updated', activity: { ...activity, progress: 50 } }));
      this.timer(ms, () => {
        const i = this.activities.indexOf(activity);
        if (i >= 0) this.activities.splice(i, 1);
        scan.endedAt = Date.now();
        this.addScanned(scan.section, scan.path);
        this.notify({ event: 'ended', activity: { ...activity, progress: 100 } });
        this.scanning = undefined;
        this.nextScan();
      });
    });
  }

  /** The scanner's finds in a folder join the library (addedByScan), before the scan's activity ends. */
  private addScanned(section: string, path: string): void {
    const prefix = path.endsWith('/') ? path : `${path}/`;
    const found = this.addedByScan.filter((i) => i.sectionId === section && i.file?.startsWith(prefix));
    if (!found.length) return;
    this.addedByScan = this.addedByScan.filter((i) => !found.includes(i));
    for (const i of found) this.items.push({ ...i, addedAt: Math.floor(Date.now() / 1000) });
  }

  private timer(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.scanTimers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.scanTimers.add(t);
  }

  private openSse(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-plex-protocol': '1.0' });
    res.flushHeaders();
    const ping = setInterval(() => res.write('event: ping\ndata: {}\n\n'), this.ssePingMs);
    ping.unref();
    const client: StreamClient = {
      transport: 'sse',
      close: () => res.destroy(),
      send: (n) => void res.write(`event: activity\ndata: ${JSON.stringify({ ActivityNotification: n })}\n\n`),
    };
    this.streams.add(client);
    this.streamConnections++;
    res.on('close', () => {
      clearInterval(ping);
      this.streams.delete(client);
    });
  }

  protected override handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const token = (req.headers['x-plex-token'] as string | undefined) ?? url.searchParams.get('X-Plex-Token') ?? undefined;
    const refuse = (status: number, text: string) => socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    const call: RecordedCall = { method: 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, token, tokenIn: req.headers['x-plex-token'] ? 'header' : token ? 'query' : 'none', status: 0, at: Date.now() };
    this.calls.push(call);
    if (this.mode === 'error503') return void (call.status = 503, refuse(503, 'Service Unavailable'));
    if (url.pathname !== '/:/websockets/notifications' || !this.streaming || !this.websocketAvailable) {
      call.status = 404;
      refuse(404, 'Not Found');
      if (url.pathname === '/:/websockets/notifications' && !this.streaming) this.onStreamRefused?.('websocket');
      return;
    }
    if (token !== this.token) return void (call.status = 401, refuse(401, 'Unauthorized'));
    call.status = 101;
    this.wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const client: StreamClient & { raw(t: string): void } = {
        transport: 'websocket',
        close: () => ws.terminate(),
        send: (n) => ws.send(JSON.stringify({ NotificationContainer: { type: 'activity', size: 1, ActivityNotification: [n] } })),
        raw: (t) => ws.send(t),
      };
      this.streams.add(client);
      this.streamConnections++;
      ws.on('close', () => this.streams.delete(client));
    });
  }

  private sectionsJson(): string {
    return JSON.stringify({
      MediaContainer: {
        size: this.sections.length,
        allowSync: false,
        title1: 'Plex Library',
        Directory: this.sections.map((s) => ({
          allowSync: true,
          key: s.id,
          type: s.type,
          title: s.title,
          agent: s.agent ?? (s.type === 'movie' ? 'tv.plex.agents.movie' : 'tv.plex.agents.series'),
          scanner: s.type === 'movie' ? 'Plex Movie' : 'Plex TV Series',
          language: 'en-US',
          uuid: `uuid-${s.id}`,
          refreshing: this.scanning?.startedAt !== undefined && this.scanning.endedAt === undefined && this.scanning.section === s.id,
          updatedAt: 1700000000,
          createdAt: 1600000000,
          scannedAt: 1700000000,
          Location: s.locations.map((p, i) => ({ id: Number(s.id) * 100 + i, path: p })),
        })),
      },
    });
  }

  private sectionsXml(): string {
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
    const dirs = this.sections
      .map(
        (s) =>
          `  <Directory allowSync="1" key="${esc(s.id)}" type="${s.type}" title="${esc(s.title)}" language="en-US" refreshing="0" updatedAt="1700000000" scannedAt="1700000000">\n` +
          s.locations.map((p, i) => `    <Location id="${Number(s.id) * 100 + i}" path="${esc(p)}"/>\n`).join('') +
          `  </Directory>\n`,
      )
      .join('');
    return `<?xml version="1.0" encoding="UTF-8"?>\n<MediaContainer size="${this.sections.length}" allowSync="0" title1="Plex Library">\n${dirs}</MediaContainer>\n`;
  }
}
