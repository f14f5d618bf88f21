import type { IncomingMessage, ServerResponse } from 'node:http';
import { after } from 'node:test';
import { SwitchableServer } from './switchable-server.ts';

/** One request a fake notification service took in (answered 2xx or not). */
export interface NotifyCall {
  at: number;
  path: string;
  headers: IncomingMessage['headers'];
  raw: string;
  /** The JSON body, when it was JSON. */
  json?: any;
  status: number;
}

type Answer = { status: number; body?: string; headers?: Record<string, string> };

/**
 * The part the notification fakes share: record every call, answer each as the service would (`answer`), and
 * on demand answer the next calls with an outage (`failNext`: 500 for a while, or 429 with Retry-After).
 */
export abstract class NotifyFake extends SwitchableServer {
  readonly calls: NotifyCall[] = [];
  /** Answers for the next calls; null: the service's own answer. */
  private failing: Array<Answer | null> = [];
  private readonly listeners = new Set<() => void>();

  protected abstract answer(req: IncomingMessage, path: string, raw: string, json: unknown): Answer;

  /** The next `n` calls get `answer` (e.g. 500), whatever they hold. */
  failNext(n: number, answer: Answer): void {
    for (let i = 0; i < n; i++) this.failing.push(answer);
  }

  /** The next `taken` calls are answered as usual, then `n` get `answer` (a limit hit in the middle of a batch). */
  failAfter(taken: number, n: number, answer: Answer): void {
    for (let i = 0; i < taken; i++) this.failing.push(null);
    this.failNext(n, answer);
  }

  /** Calls the service took (2xx). */
  get taken(): NotifyCall[] {
    return this.calls.filter((c) => c.status < 300);
  }

  /** Resolves once `check` holds over the calls so far (checked on each new call). */
  async until(check: (calls: NotifyCall[]) => boolean): Promise<void> {
    while (!check(this.calls)) await new Promise<void>((r) => this.listeners.add(r));
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '/').split('?')[0]!;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const a = this.mode === 'error503' ? { status: 503, body: 'Service Unavailable' } : (this.failing.shift() ?? this.answer(req, path, raw, json));
    this.calls.push({ at: Date.now(), path, headers: req.headers, raw, ...(json !== undefined ? { json } : {}), status: a.status });
    res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
    res.end(a.body ?? '');
    for (const l of [...this.listeners]) {
      this.listeners.delete(l);
      l();
    }
  }
}

const err = (status: number, body: unknown): Answer => ({ status, body: JSON.stringify(body) });

/** A receiver of the `json` documents: takes any JSON POST, 400 for anything else; Bearer checked when `token` is set. */
export class JsonReceiverFake extends NotifyFake {
  constructor(private readonly token = '') {
    super();
  }
  protected answer(req: IncomingMessage, _path: string, _raw: string, json: unknown): Answer {
    if (this.token && req.headers.authorization !== `Bearer ${this.token}`) return err(401, { error: 'unauthorized' });
    if (req.method !== 'POST' || json === undefined) return err(400, { error: 'expected a JSON POST' });
    return { status: 200, body: '{"ok":true}' };
  }
}

/**
 * Matrix hookshot's generic webhook (POST /webhook/<id>): a JSON body with `text` or `html`; an unknown hook is 404.
 * Hookshot answers {"ok":true} once the body was accepted.
 */
export class HookshotFake extends NotifyFake {
  constructor(readonly hookId = 'a1b2c3d4e5f6') {
    super();
  }
  protected answer(req: IncomingMessage, path: string, _raw: string, json: any): Answer {
    if (req.method !== 'POST' || path !== `/webhook/${this.hookId}`) return err(404, { ok: false, error: 'Unknown webhook' });
    if (!json || (typeof json.text !== 'string' && typeof json.html !== 'string')) return err(400, { ok: false, error: 'Body needs text or html' });
    return { status: 200, body: '{"ok":true}' };
  }
}

/** Apprise API (POST /notify/<key>): JSON with `body` (required), `title`, `type` (info, success, warning, failure). */
export class AppriseFake extends NotifyFake {
  constructor(readonly key = 'scanrelay') {
    super();
  }
  protected answer(req: IncomingMessage, path: string, _raw: string, json: any): Answer {
    if (req.method !== 'POST' || path !== `/notify/${this.key}`) return err(404, { error: 'There was no configuration found.' });
    if (!json || typeof json.body !== 'string' || !json.body) return err(400, { error: 'Bad FORM Payload provided' });
    if (json.type !== undefined && !['info', 'success', 'warning', 'failure'].includes(json.type)) return err(400, { error: 'An invalid payload type was specified' });
    return { status: 200, body: '{"success":true}' };
  }
}

/**
 * ntfy (POST /<topic>): the body is the message, at most 4,096 bytes (a longer one becomes an attachment, refused
 * with 413 where attachments are off, as here); a protected topic wants `Authorization: Bearer <token>` (else 403).
 */
export class NtfyFake extends NotifyFake {
  constructor(readonly topic = 'scans', private readonly token = 'tk_secret') {
    super();
  }
  protected answer(req: IncomingMessage, path: string, raw: string): Answer {
    if (req.method !== 'POST' && req.method !== 'PUT') return err(405, { code: 40501, http: 405, error: 'method not allowed' });
    if (path !== `/${this.topic}`) return err(404, { code: 40401, http: 404, error: 'page not found' });
    if (this.token && req.headers.authorization !== `Bearer ${this.token}`) return err(403, { code: 40301, http: 403, error: 'forbidden' });
    if (Buffer.byteLength(raw) > 4096) return err(413, { code: 41301, http: 413, error: 'attachments not allowed' });
    return { status: 200, body: JSON.stringify({ id: 'x', time: Math.floor(Date.now() / 1000), event: 'message', topic: this.topic, message: raw }) };
  }
}

/** Gotify (POST /message): the application token in X-Gotify-Key (or ?token=), JSON with `message` required. */
export class GotifyFake extends NotifyFake {
  constructor(private readonly token = 'AppTokenXYZ') {
    super();
  }
  protected answer(req: IncomingMessage, path: string, _raw: string, json: any): Answer {
    const token = req.headers['x-gotify-key'] ?? new URL(req.url ?? '/', 'http://x').searchParams.get('token');
    if (path !== '/message' || req.method !== 'POST') return err(404, { error: 'Not Found', errorCode: 404 });
    if (token !== this.token) return err(401, { error: 'Unauthorized', errorCode: 401, errorDescription: 'you need to provide a valid access token or user credentials to access this api' });
    if (!json || typeof json.message !== 'string' || !json.message) return err(400, { error: 'Bad Request', errorCode: 400, errorDescription: "Field 'message' is required" });
    return { status: 200, body: JSON.stringify({ id: 1, appid: 1, message: json.message, title: json.title, priority: json.priority ?? 0, date: new Date().toISOString() }) };
  }
}

/**
 * A starter for a test file's notification fakes: each one started through it is stopped after the file's tests.
 * Call it at the file's top level.
 */
export function fakesStoppedAfter(): <T extends NotifyFake>(f: T) => Promise<T> {
  const started: NotifyFake[] = [];
  after(async () => {
    for (const f of started) await f.stop();
  });
  return async (f) => {
    started.push(f);
    return f.start();
  };
}
