import type { IncomingMessage, ServerResponse } from 'node:http';
import { SwitchableServer } from './switchable-server.ts';

/** One request a fake received, as it came, and the status it answered. */
export interface RecordedCall {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** The body parsed as JSON; the raw text when it is not JSON; undefined when empty. */
  body: unknown;
  status: number;
}

export interface FakeAnswer {
  status: number;
  /** An object is sent as JSON, a string as text/plain, undefined as no body. */
  body?: unknown;
}

/**
 * The part the fakes of the kinds beyond the media servers share: every request is recorded (with the status
 * it got) before the fake decides, a 503 mode, and JSON or text answers. Each fake implements `answer` with
 * only its service's real paths, methods and statuses; anything else is the service's own 404.
 */
export abstract class RecordingServer extends SwitchableServer {
  readonly calls: RecordedCall[] = [];

  protected abstract answer(call: RecordedCall): FakeAnswer;

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = undefined;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const call: RecordedCall = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body, status: 0 };
    this.calls.push(call);
    // Recorded with status 0: it never gets an answer.
    if (this.mode === 'hang') return;
    const out: FakeAnswer = this.mode === 'error503' ? { status: 503, body: 'Service Unavailable' } : this.answer(call);
    call.status = out.status;
    if (out.body === undefined) res.writeHead(out.status).end();
    else if (typeof out.body === 'string') res.writeHead(out.status, { 'content-type': 'text/plain; charset=utf-8' }).end(out.body);
    else res.writeHead(out.status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(out.body));
  }

  /** The calls to one method and path. */
  callsTo(method: string, path: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method && c.path === path);
  }
}
