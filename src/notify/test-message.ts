import type { NotificationsConfig } from '../config/notifications.ts';
import type { StoredEvent } from '../core/events.ts';
import { postMessage } from './http.ts';
import { maskUrl } from './mask.ts';
import { FORMATS } from './services/index.ts';

/** What one destination answered to the test message (its URL masked, its answer with secrets taken out). */
export interface TestResult {
  name: string;
  type: string;
  url: string;
  ok: boolean;
  /** sent, retry (429, 5xx, no answer) or refused (another 4xx). */
  outcome: 'sent' | 'retry' | 'refused';
  answer: string;
}

/** The event a test message tells of: a made-up scan, named as a test. */
export function testEvent(now = Date.now()): StoredEvent {
  return { id: 0, kind: 'scanned', at: now, target: 'plex', folder: '/scanrelay/test message', title: 'scanrelay test message', trigger: 'Manual', event: 'Test', requestedAt: now - 1500, tookMs: 1500 };
}

/**
 * Sends one test message to each destination (or to `name` only), once, without retrying, and reports what each
 * service answered. Unknown names are an error the caller shows.
 */
export async function sendTestMessages(destinations: NotificationsConfig, name?: string): Promise<TestResult[]> {
  const chosen = Object.entries(destinations).filter(([n]) => name === undefined || n === name);
  return Promise.all(
    chosen.map(async ([n, dest]) => {
      const messages = FORMATS[dest.TYPE](dest, [testEvent()]);
      let last: Awaited<ReturnType<typeof postMessage>> = { kind: 'refused', status: 0, answer: 'nothing to send' };
      for (const m of messages) {
        last = await postMessage(dest, m);
        if (last.kind !== 'sent') break;
      }
      return { name: n, type: dest.TYPE, url: maskUrl(dest.URL), ok: last.kind === 'sent', outcome: last.kind, answer: last.answer };
    }),
  );
}
