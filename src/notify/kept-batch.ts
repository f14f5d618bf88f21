import { z } from 'zod';
import { notificationTypeSchema, type NotificationConfig } from '../config/notifications.ts';
import type { OutMessage } from './message.ts';

/**
 * The batch a destination is sending, as rendered. Once the service took part of it (its first `taken` messages)
 * it is kept, in memory and with the destination's cursor in the queue, and goes on from there: across a retry, a
 * restart or a relay taking over, what was taken is not sent again. Later events wait for the next batch.
 */
export interface SendingBatch {
  /** The outbox cursor past the batch's last event. */
  end: string;
  type: NotificationConfig['TYPE'];
  /** How many events it tells of. */
  events: number;
  messages: OutMessage[];
  taken: number;
  /** When the service first refused part of it (GIVE_UP_AFTER counts from there). */
  refusedAt?: number;
}

// The URL and TOKEN are credentials: the queue's database keeps placeholders, filled in from the config on reading.
const URL_MARK = '\u0000URL';
const TOKEN_MARK = '\u0000TOKEN';

const keptSchema = z.object({
  end: z.string(),
  type: notificationTypeSchema,
  events: z.number().int().nonnegative(),
  messages: z.array(z.object({ url: z.string(), headers: z.record(z.string(), z.string()), body: z.string() })),
  taken: z.number().int().nonnegative(),
  refusedAt: z.number().optional(),
});

const hide = (text: string, secret: string, mark: string) => (secret ? text.split(secret).join(mark) : text);
const fill = (text: string, secret: string, mark: string) => text.split(mark).join(secret);

/** The batch as the outbox keeps it, with the destination's URL and TOKEN left out. */
export function encodeBatch(b: SendingBatch, dest: Pick<NotificationConfig, 'URL' | 'TOKEN'>): string {
  const mask = (s: string) => hide(hide(s, dest.URL, URL_MARK), dest.TOKEN, TOKEN_MARK);
  const messages = b.messages.map((m) => ({ url: mask(m.url), headers: Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k, mask(v)])), body: m.body }));
  return JSON.stringify({ ...b, messages });
}

/** A kept batch back, for this destination; undefined when it cannot be read or was rendered for another TYPE (a changed config). */
export function decodeBatch(text: string, dest: Pick<NotificationConfig, 'URL' | 'TOKEN' | 'TYPE'>): SendingBatch | undefined {
  let parsed;
  try {
    parsed = keptSchema.safeParse(JSON.parse(text));
  } catch {
    return undefined;
  }
  if (!parsed.success || parsed.data.type !== dest.TYPE || parsed.data.taken >= parsed.data.messages.length) return undefined;
  const unmask = (s: string) => fill(fill(s, dest.URL, URL_MARK), dest.TOKEN, TOKEN_MARK);
  const { refusedAt, ...rest } = parsed.data;
  return {
    ...rest,
    ...(refusedAt !== undefined ? { refusedAt } : {}),
    messages: parsed.data.messages.map((m) => ({ url: unmask(m.url), headers: Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k, unmask(v)])), body: m.body })),
  };
}
