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

/** fetch with a timeout; a network failure becomes TargetError('unavailable'). */
export async function httpRequest(req: HttpRequest, what: string): Promise<HttpResponse> {
  if (req.verifyTls === false && req.url.startsWith('https:')) return unverifiedHttps(req, what);
  let res: Response;
  try {
    res = await fetch(req.url, {
      method: req.method ?? 'GET',
      headers: req.headers,
      body: req.body,
      signal: AbortSignal.timeout(req.timeoutMs ?? 30_000),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code && TLS_CODE.test(cause.code)) {
      throw new TlsError(`${what}: the server's TLS certificate was refused (${cause.code})`, cause.code);
    }
    throw new TargetError('unavailable', `${what} unreachable: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  return { status: res.status, text: await res.text() };
}

/**
 * An HTTPS request that accepts any certificate, through node:https (fetch takes no such option without
 * the undici package); only for a server the user told us not to verify.
 */
function unverifiedHttps(req: HttpRequest, what: string): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const fail = (err: Error & { code?: string }) => reject(new TargetError('unavailable', `${what} unreachable: ${err.code ?? err.message}`));
    const request = https.request(
      req.url,
      { method: req.method ?? 'GET', headers: req.headers, rejectUnauthorized: false, signal: AbortSignal.timeout(req.timeoutMs ?? 30_000) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', fail);
      },
    );
    request.on('error', fail);
    request.end(req.body);
  });
}

/** Status handling shared by the media-server clients (autoscan's rules): 401 auth, 404/5xx unavailable. */
export function classifyStatus(status: number, what: string, body = ''): TargetError | undefined {
  if (status >= 200 && status < 300) return undefined;
  const snippet = body.trim().slice(0, 200);
  const message = `${what} answered HTTP ${status}${snippet ? `: ${snippet}` : ''}`;
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
