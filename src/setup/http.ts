import { UserError } from '../core/errors.ts';

/** How long setup waits for one answer from a service before it names the service and stops (env SCANRELAY_SETUP_TIMEOUT_MS). */
export const SERVICE_TIMEOUT_MS = Number(process.env.SCANRELAY_SETUP_TIMEOUT_MS) || 15_000;

/** A service answered wrongly, refused the key, or did not answer: one line naming it (exit 2, nothing changed yet). */
export class ServiceError extends UserError {
  constructor(message: string) {
    super(message, 2);
    this.name = 'ServiceError';
  }
}

export interface Call {
  /** How setup names the service in every message: `Sonarr at http://sonarr:8989`. */
  service: string;
  /** What was asked, for the message: `root folders`. */
  what: string;
  method?: string;
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
  timeoutMs?: number;
}

/** One JSON call with a time limit; any failure is a ServiceError naming the service and what failed. */
export async function callJson(c: Call): Promise<{ status: number; body: unknown }> {
  const timeoutMs = c.timeoutMs ?? SERVICE_TIMEOUT_MS;
  let res: Response;
  try {
    res = await fetch(c.url, {
      method: c.method ?? 'GET',
      headers: { accept: 'application/json', ...(c.body !== undefined ? { 'content-type': 'application/json' } : {}), ...c.headers },
      ...(c.body !== undefined ? { body: JSON.stringify(c.body) } : {}),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') {
      throw new ServiceError(`${c.service}: no answer to ${c.what} within ${timeoutMs / 1000} s (waited for ${c.service})`);
    }
    throw new ServiceError(`${c.service}: cannot connect for ${c.what} (${e.cause?.code ?? e.cause?.message ?? e.message})`);
  }
  const text = await res.text().catch(() => '');
  let body: unknown = text;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      /* left as text */
    }
  }
  return { status: res.status, body };
}

/** callJson that wants a 2xx: 401/403 say the key is wrong, anything else quotes the service's own message. */
export async function okJson(c: Call, keyName = 'key'): Promise<unknown> {
  const { status, body } = await callJson(c);
  if (status >= 200 && status < 300) return body;
  if (status === 401 || status === 403) throw new ServiceError(`${c.service}: the ${keyName} was refused (HTTP ${status} to ${c.what})`);
  throw new ServiceError(`${c.service}: ${c.what} failed with HTTP ${status}${messageOf(body) ? `: ${messageOf(body)}` : ''}`);
}

/** The message a service put in an error body (the *arrs' validation failures, `{message}`, or short text). */
export function messageOf(body: unknown): string {
  if (Array.isArray(body)) {
    return body
      .map((f) => (f && typeof f === 'object' ? String((f as Record<string, unknown>).errorMessage ?? (f as Record<string, unknown>).message ?? '') : ''))
      .filter(Boolean)
      .join('; ');
  }
  if (body && typeof body === 'object') {
    const m = (body as Record<string, unknown>).message ?? (body as Record<string, unknown>).error;
    return typeof m === 'string' ? m : '';
  }
  return typeof body === 'string' ? body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 200) : '';
}

/** A URL without a trailing slash. */
export function baseUrl(u: string, service: string): string {
  let url: URL;
  try {
    url = new URL(u);
  } catch {
    throw new ServiceError(`${service}: "${u}" is not a URL (e.g. http://host:port)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ServiceError(`${service}: "${u}" is not an http:// or https:// URL`);
  return u.replace(/\/+$/, '');
}
