import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A fake Jellyfin / Emby server on 127.0.0.1 (protocols.md section 4). It serves both products' paths:
 * Jellyfin's at the root and Emby's under `/emby`. Like ASP.NET, JSON property names bind
 * case-insensitively (`path`/`Path`). Auth: `X-Emby-Token` or `Authorization: MediaBrowser Token="…"`,
 * else 401. `POST /Library/Media/Updated` answers 204; an update without a path answers 400.
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
  token: string | undefined;
}

export type MediaServerMode = 'up' | 'error503' | 'down';

export class FakeMediaServer {
  readonly calls: MediaCall[] = [];
  readonly updates: RecordedUpdate[] = [];
  readonly apiKey: string;
  /** ServerName in /System/Info. */
  readonly name: string;
  private server: Server | undefined;
  private sockets = new Set<Socket>();
  private port = 0;
  private mode: MediaServerMode = 'up';

  constructor(opts: { apiKey?: string; name?: string } = {}) {
    this.apiKey = opts.apiKey ?? 'media-api-key';
    this.name = opts.name ?? 'fake';
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port || this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    this.mode = 'up';
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** 'down' closes the port, 'error503' answers 503, 'up' serves again on the same port. */
  async setMode(mode: MediaServerMode): Promise<void> {
    if (mode === 'down') await this.stop();
    else if (!this.server) await this.start(this.port);
    this.mode = mode;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const auth = /MediaBrowser .*Token="([^"]*)"/i.exec(String(req.headers.authorization ?? req.headers['x-emby-authorization'] ?? ''));
    const token = (req.headers['x-emby-token'] as string | undefined) ?? auth?.[1] ?? url.searchParams.get('api_key') ?? url.searchParams.get('ApiKey') ?? undefined;
    const call: MediaCall = { method: req.method ?? 'GET', path: url.pathname, status: 0, token };
    this.calls.push(call);
    const send = (status: number, body?: unknown) => {
      call.status = status;
      if (body === undefined) res.writeHead(status).end();
      else res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    };
    if (this.mode === 'error503') return send(503);
    const lower = url.pathname.toLowerCase();
    const prefix: '' | '/emby' = lower.startsWith('/emby/') ? '/emby' : '';
    const route = lower.slice(prefix.length);
    if (token !== this.apiKey) return send(401);
    if (route === '/system/info' && req.method === 'GET') {
      return send(200, { ServerName: this.name, Version: '10.9.11', Id: 'fake-server-id', OperatingSystem: 'Linux' });
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
