import type { NotificationConfig } from '../config/notifications.ts';
import { scrub } from './mask.ts';
import type { OutMessage } from './message.ts';

/** How a service answered one message. */
export type SendOutcome =
  | { kind: 'sent'; status: number; answer: string }
  /** 429, 5xx or no answer: the same message goes again later (after retryAfterMs when the service said). */
  | { kind: 'retry'; status?: number; answer: string; retryAfterMs?: number }
  /** Any other 4xx: the service refuses this message; sending it again would not help. */
  | { kind: 'refused'; status: number; answer: string };

const TIMEOUT_MS = 15_000;

/** Retry-After in seconds (Discord sends a decimal) or an HTTP date; Discord's body's retry_after as a fallback. */
export function retryAfterMs(header: string | null, body: string, now = Date.now()): number | undefined {
  if (header) {
    const s = Number(header);
    if (Number.isFinite(s) && s >= 0) return Math.ceil(s * 1000);
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, at - now);
  }
  try {
    const r = (JSON.parse(body) as { retry_after?: unknown }).retry_after;
    if (typeof r === 'number' && r >= 0) return Math.ceil(r * 1000);
  } catch {
    // Not JSON.
  }
  return undefined;
}

/** Posts one message (given up at `timeoutMs`, or when `stop` aborts: the relay stopping); never throws. Answers and errors come back with the destination's secrets taken out. */
export async function postMessage(dest: Pick<NotificationConfig, 'URL' | 'TOKEN'>, msg: OutMessage, timeoutMs = TIMEOUT_MS, stop?: AbortSignal): Promise<SendOutcome> {
  let res: Response;
  try {
    const signal = stop ? AbortSignal.any([AbortSignal.timeout(timeoutMs), stop]) : AbortSignal.timeout(timeoutMs);
    res = await fetch(msg.url, { method: 'POST', headers: msg.headers, body: msg.body, signal, redirect: 'error' });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { kind: 'retry', answer: scrub(`no answer: ${cause?.code ?? cause?.message ?? (err as Error).message}`, dest) };
  }
  const text = await res.text().catch(() => '');
  const answer = scrub(`${res.status} ${text.replace(/\s+/g, ' ').trim().slice(0, 300)}`.trim(), dest);
  if (res.ok) return { kind: 'sent', status: res.status, answer };
  if (res.status === 429 || res.status >= 500) {
    const wait = retryAfterMs(res.headers.get('retry-after'), text);
    return { kind: 'retry', status: res.status, answer, ...(wait !== undefined ? { retryAfterMs: wait } : {}) };
  }
  return { kind: 'refused', status: res.status, answer };
}
