import { RecordingServer, type FakeAnswer, type RecordedCall } from './recording-server.ts';

/**
 * A fake of another relay on 127.0.0.1, for the relay target:
 * - scanrelay: `POST /<SERVER_PASS>` with `{"eventType": "Manual", "filepath"}` -> 200 `{"status": "queued"}`;
 *   a wrong secret is 404 (src/server/guard.ts); `GET /health`.
 * - autopulse (crates/server/src/routes/triggers.rs and mod.rs at 55124fd): `GET /triggers/<name>?path=` with
 *   Basic auth (401 without; autopulse's targets/autopulse.rs:43-56 is the client side), 404 "Trigger not found" for another name, 400 without `path`; `GET /stats` open.
 * - autoscan (triggers/manual/manual.go:49-94 and cmd/autoscan/router.go:50-80 at 1d41f4b): `/triggers/manual`
 *   behind Basic auth when set; GET answers its HTML page and HEAD 200 (neither scans); any other method scans
 *   the `dir` values (400 without one); `GET /health`.
 */
export class FakeRelayPeer extends RecordingServer {
  /** The folders or paths the peer took, in order. */
  readonly scanned: string[] = [];

  constructor(
    readonly peer: 'scanrelay' | 'autopulse' | 'autoscan',
    readonly opts: { secret?: string; user?: string; pass?: string; trigger?: string } = {},
  ) {
    super();
  }

  private basicOk(call: RecordedCall): boolean {
    if (this.opts.user === undefined) return true;
    const expected = `Basic ${Buffer.from(`${this.opts.user}:${this.opts.pass ?? ''}`).toString('base64')}`;
    return call.headers.authorization === expected;
  }

  protected answer(call: RecordedCall): FakeAnswer {
    if (call.method === 'GET' && call.path === (this.peer === 'autopulse' ? '/stats' : '/health')) return { status: 200, body: { status: 'ok' } };
    if (this.peer === 'scanrelay') {
      if (call.method !== 'POST' || decodeURIComponent(call.path.slice(1)) !== this.opts.secret) return { status: 404, body: { error: 'not found' } };
      if (!this.basicOk(call)) return { status: 401, body: { error: 'authentication required' } };
      const body = (call.body ?? {}) as Record<string, unknown>;
      if (body.eventType !== 'Manual' || typeof body.filepath !== 'string') return { status: 400, body: { error: 'unrecognised payload' } };
      this.scanned.push(body.filepath);
      return { status: 200, body: { status: 'queued', path: body.filepath, scans: [{ path: body.filepath, folder: body.filepath, status: 'queued', id: this.scanned.length }] } };
    }
    if (this.peer === 'autopulse') {
      const m = /^\/triggers\/([^/]+)$/.exec(call.path);
      if (!m) return { status: 404 };
      if (!this.basicOk(call)) return { status: 401, body: 'Unauthorized' };
      if (m[1] !== (this.opts.trigger ?? 'manual')) return { status: 404, body: 'Trigger not found' };
      const path = call.query.get('path');
      if (call.method !== 'GET' && call.method !== 'POST') return { status: 405 };
      if (!path) return { status: 400, body: 'Query deserialize error: missing field `path`' };
      this.scanned.push(path);
      return { status: 200, body: { id: `ev-${this.scanned.length}`, file_path: path, process_status: 'pending' } };
    }
    if (call.path !== '/triggers/manual' && call.path !== '/triggers/manual/') return { status: 404 };
    if (!this.basicOk(call)) return { status: 401, body: 'Unauthorized' };
    if (call.method === 'GET') return { status: 200, body: '<html><body>manual</body></html>' };
    if (call.method === 'HEAD') return { status: 200 };
    const dirs = call.query.getAll('dir');
    if (dirs.length === 0) return { status: 400 };
    this.scanned.push(...dirs);
    return { status: 200 };
  }
}
