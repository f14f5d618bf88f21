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

export interface HttpRequest {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

export interface HttpResponse {
  status: number;
  text: string;
}

/** fetch with a timeout; a network failure becomes TargetError('unavailable'). */
export async function httpRequest(req: HttpRequest, what: string): Promise<HttpResponse> {
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
    throw new TargetError('unavailable', `${what} unreachable: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  return { status: res.status, text: await res.text() };
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
