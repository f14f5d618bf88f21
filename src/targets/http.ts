import http from 'node:http';
import type { z } from 'zod';
import https from 'node:https';

/** What went wrong talking to a media server, by kind: the queue retries `unavailable` and `auth`, not `fatal`. */
export class TargetError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'auth' | 'fatal',
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'TargetError';
  }
}

/** The server's TLS certificate was refused (self-signed, expired, other name): a setting to change, not an outage. */
export class TlsError extends TargetError {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super('auth', message);
    this.name = 'TlsError';
  }
}

export interface HttpRequest {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  /** false accepts any TLS certificate (PLEX_VERIFY_SSL false); default true. */
  verifyTls?: boolean;
}

/** Node's codes for a refused certificate (openssl's X509 errors and node's own name check). */
const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS|ERR_SSL/;

export interface HttpResponse {
  status: number;
  text: string;
}

/**
 * One request with a timeout; a network failure becomes TargetError('unavailable'), a refused certificate a
 * TlsError. Through node:http(s), not fetch: fetch loads undici and its WebAssembly parser on first use, about
 * 10 MB the relay would then hold for good (bench/README.md, memory). `verifyTls: false` (PLEX_VERIFY_SSL
 * false) accepts any certificate.
 */
export function httpRequest(req: HttpRequest, what: string): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const fail = (err: Error & { code?: string }) => {
      const code = err.name === 'TimeoutError' || err.name === 'AbortError' ? 'timeout' : err.code;
      if (code && TLS_CODE.test(code)) reject(new TlsError(`${what}: the server's TLS certificate was refused (${code})`, code));
      else reject(new TargetError('unavailable', `${what} unreachable: ${code ?? err.message}`));
    };
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return reject(new TargetError('fatal', `${what}: ${req.url} is not a valid URL`));
    }
    const headers = { ...req.headers, ...(req.body !== undefined ? { 'Content-Length': String(Buffer.byteLength(req.body)) } : {}) };
    const options = { method: req.method ?? 'GET', headers, signal: AbortSignal.timeout(req.timeoutMs ?? 30_000) };
    const onResponse = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', fail);
    };
    const request =
      url.protocol === 'https:'
        ? https.request(url, { ...options, rejectUnauthorized: req.verifyTls !== false }, onResponse)
        : url.protocol === 'http:'
          ? http.request(url, options, onResponse)
          : undefined;
    if (!request) return reject(new TargetError('fatal', `${what}: ${req.url} is not an http or https URL`));
    request.on('error', fail);
    request.end(req.body);
  });
}

/** The server and the key that holds what it refused, for a 401 or 403 that says what it means. */
export interface Credential {
  server: string;
  key: string;
  /** How to get a valid one, when there is a short way to say it. */
  howTo?: string;
}

/**
 * Status handling shared by the media-server clients (autoscan's rules): 401 auth, 404/5xx unavailable.
 * An HTML error page is not quoted (Plex answers a wrong token with `<html><head><title>Unauthorized</title>...`):
 * the status says it, and a 401 or 403 says which key to check.
 */
export function classifyStatus(status: number, what: string, body = '', credential?: Credential): TargetError | undefined {
  if (status >= 200 && status < 300) return undefined;
  const text = body.trim();
  const snippet = /^<(!doctype|html|\?xml|head|body)\b/i.test(text) ? '' : text.slice(0, 200);
  const message = `${what} answered HTTP ${status}${snippet ? `: ${snippet}` : ''}`;
  if ((status === 401 || status === 403) && credential) {
    const meaning = `${credential.server} refused the token (${status}): check ${credential.key}${credential.howTo ? `; ${credential.howTo}` : ''} (asked for: ${what})`;
    return new TargetError('auth', meaning, status);
  }
  if (status === 401 || status === 403) return new TargetError('auth', `${message} (check the token/API key)`, status);
  if (status === 404 || status === 408 || status === 429 || status >= 500) return new TargetError('unavailable', message, status);
  return new TargetError('fatal', message, status);
}

/** Maps an error from a target client to the queue's delivery outcome. */
export function resultFromError(err: unknown): { outcome: 'retry'; error: string; slow?: boolean } | { outcome: 'failed'; error: string } {
  if (err instanceof TargetError) {
    if (err.kind === 'fatal') return { outcome: 'failed', error: err.message };
    return { outcome: 'retry', error: err.message, slow: err.kind === 'auth' };
  }
  return { outcome: 'retry', error: (err as Error)?.message ?? String(err) };
}

/**
 * Parses a media server's JSON answer with `schema`. Not JSON, or not the shape expected, is "unavailable" (a
 * starting server or a proxy page answers oddly; the scan waits and tries again), with a message that names
 * the first wrong field. `what` names the answer: "Plex section list", "Jellyfin library list".
 */
export function parseJsonAnswer<S extends z.ZodType>(text: string, schema: S, what: string): z.infer<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AnswerShapeError(`${what}: answer is not JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AnswerShapeError(`${what}: unexpected answer (${issue.path.join('.') || 'body'}: ${issue.message})`);
  }
  return parsed.data;
}

/** A 2xx answer that is not the JSON expected: retried like an outage, but the server did answer. */
export class AnswerShapeError extends TargetError {
  constructor(message: string) {
    super('unavailable', message);
    this.name = 'AnswerShapeError';
  }
}

/**
 * Whether a server answered a question but the answer can never give what was asked: a status no retry changes
 * (4xx other than 408 and 429) or a body of another shape. An unreachable or starting server (no answer, 5xx) is not.
 */
export function answeredWithout(err: unknown): boolean {
  if (err instanceof AnswerShapeError) return true;
  const status = err instanceof TargetError && !(err instanceof TlsError) ? err.status : undefined;
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}
