import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake rclone remote control (`rclone rcd` / `rclone mount --rc`) on 127.0.0.1, with rclone 1.60's
 * answers (docs/protocols.md section 7): POST only (GET is a 404 text page); params as JSON body, query or form;
 * `vfs/refresh` answers 200 with a per-dir result ("OK" or "file does not exist"); `cache/expire` exists
 * only when a cache remote is configured, else 404 with rclone's JSON error. Every call is recorded.
 */
export interface RcCall {
  command: string;
  params: Record<string, string>;
  status: number;
}

export class FakeRcloneRc {
  readonly calls: RcCall[] = [];
  /** Folders (relative to the mount root, "/"-separated) the remote has. */
  readonly dirs = new Set<string>();
  /** Set to emulate a `cache` backend remote, which answers cache/expire. */
  cacheRemote = false;
  private server: Server | undefined;

  constructor(dirs: string[] = []) {
    for (const d of dirs) this.addDir(d);
  }

  /** Adds a folder and its parents. */
  addDir(dir: string): void {
    const parts = dir.replace(/^\/+|\/+$/g, '').split('/');
    for (let i = 1; i <= parts.length; i++) this.dirs.add(parts.slice(0, i).join('/'));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  refreshes(): string[] {
    return this.calls.filter((c) => c.command === 'vfs/refresh').map((c) => c.params.dir ?? '');
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const command = url.pathname.replace(/^\/+/, '');
    const params: Record<string, string> = Object.fromEntries(url.searchParams);
    const type = String(req.headers['content-type'] ?? '');
    if (raw && type.includes('application/json')) Object.assign(params, JSON.parse(raw));
    else if (raw && type.includes('application/x-www-form-urlencoded')) Object.assign(params, Object.fromEntries(new URLSearchParams(raw)));
    const call: RcCall = { command, params, status: 0 };
    this.calls.push(call);
    const json = (status: number, body: unknown) => {
      call.status = status;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body, null, '\t') + '\n');
    };
    const error = (status: number, message: string) => json(status, { error: message, input: params, path: command, status });
    if (req.method !== 'POST') {
      call.status = 404;
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not Found\n');
      return;
    }
    if (command === 'vfs/refresh') {
      const unknown = Object.keys(params).find((k) => !k.startsWith('dir') && k !== 'recursive' && k !== 'fs');
      if (unknown) return error(500, `unknown key "${unknown}"`);
      const dirKeys = Object.keys(params).filter((k) => k.startsWith('dir'));
      const result: Record<string, string> = {};
      if (dirKeys.length === 0) result[''] = 'OK';
      for (const k of dirKeys) {
        const dir = params[k]!.replace(/^\/+|\/+$/g, '');
        result[dir] = dir === '' || this.dirs.has(dir) ? 'OK' : 'file does not exist';
      }
      return json(200, { result });
    }
    if (command === 'cache/expire') {
      if (!this.cacheRemote) return error(404, `couldn't find method "cache/expire"`);
      const remote = params.remote;
      if (!remote) return error(500, 'remote is needed');
      if (!this.dirs.has(remote.replace(/^\/+|\/+$/g, ''))) return error(500, `${remote} doesn't exist in cache`);
      return json(200, { status: 'ok', message: `cached directory cleared: ${remote}` });
    }
    return error(404, `couldn't find method "${command}"`);
  }
}
