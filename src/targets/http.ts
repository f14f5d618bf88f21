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

/** A target's REQUEST settings (config/target-base.ts): seconds, TLS check, extra headers. */
export interface RequestOptions {
  TIMEOUT: number;
  VERIFY_SSL: boolean;
  HEADERS: Record<string, string>;
}

/**
 * Status rules for the kinds beyond the media servers (issue 39): 401/403 is the key (retried slowly),
 * 408/429/5xx an outage (retried), any other 4xx a request that will never succeed as it stands (a wrong
 * URL base, an id the service does not know): failed, with the status in the message.
 */
export function classifyServiceStatus(status: number, what: string, body = ''): TargetError | undefined {
  if (status >= 200 && status < 300) return undefined;
  const snippet = body.trim().slice(0, 200);
  const message = `${what} answered HTTP ${status}${snippet ? `: ${snippet}` : ''}`;
  if (status === 401 || status === 403) return new TargetError('auth', `${message} (check the token/API key)`, status);
  if (status === 408 || status === 429 || status >= 500) return new TargetError('unavailable', message, status);
  return new TargetError('fatal', status === 404 ? `${message} (check the URL, and its URL base if the service has one)` : message, status);
}

/**
 * Replaces every secret in a text, in each form a server may echo it: as it is, URL-encoded, and in base64 (an
 * Authorization header: "Basic " and base64 of user:password), base64url and base64 without padding. An error
 * or a log line never carries a key, token or password. The longest form goes first, so none leaves a tail.
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    const b64 = Buffer.from(secret, 'utf8').toString('base64');
    for (const form of [secret, encodeURIComponent(secret), b64, b64.replace(/=+$/, ''), Buffer.from(secret, 'utf8').toString('base64url')]) forms.add(form);
  }
  let out = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) if (form && out.includes(form)) out = out.split(form).join('***');
  return out;
}

export interface ServiceClientOptions {
  /** The service's name in messages: "Audiobookshelf", "Sonarr". */
  product: string;
  /** Base URL; a trailing slash is dropped. */
  url: string;
  request: RequestOptions;
  /** The kind's own headers (its credential); they win over REQUEST.HEADERS of the same name. */
  headers?: Record<string, string>;
  /** Values never shown in an error message (the credential, a secret in the URL). */
  secrets?: readonly (string | undefined)[];
  /** A kind's own reading of a status, before classifyServiceStatus (scanrelay's 404 for a wrong secret). */
  status?: (status: number, what: string, body: string) => TargetError | undefined;
}

/**
 * The one HTTP client of the kinds beyond the media servers: the target's REQUEST options (timeout, TLS
 * check, extra headers), its credential header, the status rules above, and no secret in any message.
 */
export class ServiceClient {
  private readonly base: string;

  constructor(private readonly opts: ServiceClientOptions) {
    this.base = opts.url.replace(/\/+$/, '');
  }

  get product(): string {
    return this.opts.product;
  }

  /** `path` starts with "/" and may carry a query string. Returns the body of a 2xx answer. */
  async call(method: string, path: string, what: string, body?: unknown): Promise<string> {
    const headers: Record<string, string> = { ...this.opts.request.HEADERS, Accept: 'application/json', ...this.opts.headers };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const label = `${this.opts.product} ${what}`;
    try {
      const res = await httpRequest(
        {
          method,
          url: `${this.base}${path}`,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          timeoutMs: this.opts.request.TIMEOUT * 1000,
          verifyTls: this.opts.request.VERIFY_SSL,
        },
        `${label} (${method})`,
      );
      const err = this.opts.status?.(res.status, label, res.text) ?? classifyServiceStatus(res.status, label, res.text);
      if (err) throw err;
      return res.text;
    } catch (err) {
      // Node refuses a header name or value HTTP does not allow (a REQUEST.HEADERS typo): no retry mends it.
      const code = (err as { code?: string }).code;
      if (!(err instanceof TargetError) && code?.startsWith('ERR_INVALID_')) throw this.redacted(new TargetError('fatal', `${label}: a header is not valid HTTP, check REQUEST.HEADERS (${code})`));
      throw this.redacted(err);
    }
  }

  /** `call` and the answer through `schema` (not JSON or another shape: retried, see parseJsonAnswer). */
  async json<S extends z.ZodType>(method: string, path: string, what: string, schema: S, body?: unknown): Promise<z.infer<S>> {
    const text = await this.call(method, path, what, body);
    try {
      return parseJsonAnswer(text, schema, `${this.opts.product} ${what}`);
    } catch (err) {
      throw this.redacted(err);
    }
  }

  private redacted(err: unknown): unknown {
    const secrets = [...(this.opts.secrets ?? []), ...Object.values(this.opts.headers ?? {})];
    if (!(err instanceof Error)) return err;
    const message = redactSecrets(err.message, secrets);
    if (message === err.message) return err;
    if (err instanceof TlsError) return new TlsError(message, err.code);
    if (err instanceof AnswerShapeError) return new AnswerShapeError(message);
    if (err instanceof TargetError) return new TargetError(err.kind, message, err.status);
    return new Error(message);
  }
}
