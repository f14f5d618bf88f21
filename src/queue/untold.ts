import { z } from 'zod';
import { notifyEventSchema, type NotifyEvent } from '../core/events.ts';
import type { QueueMetaStore } from './backend.ts';

/** The meta key of one relay's untold scans: `untold:<relay>`, a JSON list (one key a relay, never one a scan). */
export const UNTOLD_PREFIX = 'untold:';

/**
 * A scan a target accepted (its delivery is recorded as sent) whose end is told only once its after-steps confirm
 * it (Plex's completion watch). Kept beside the queue from before the delivery is recorded until its event is
 * written, so a relay killed (`kill -9`) or stopped in between still tells it at its next start.
 */
export const untoldSchema = z.object({
  /** The target's name, as its events name it. */
  target: z.string(),
  /** The delivery's name in the queue (on a shared queue, the server's: plex@<id>). */
  delivery: z.string(),
  scan: z.number().int(),
  /** The event as it stood when the scan was sent; its detail and times are filled in when it is told. */
  event: notifyEventSchema,
});
export type Untold = z.infer<typeof untoldSchema>;

/**
 * The untold scans of one relay, in one of the queue's meta values (both stores have them; nothing else is written).
 * Only this relay writes its key, and its writes are chained, so a read-modify-write never loses another's change.
 */
export class UntoldScans {
  private readonly key: string;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly meta: QueueMetaStore,
    relay: string,
  ) {
    this.key = UNTOLD_PREFIX + relay;
  }

  remember(u: Untold): Promise<void> {
    return this.update((list) => [...list.filter((x) => !same(x, u.scan, u.delivery)), u]);
  }

  forget(scan: number, delivery: string): Promise<void> {
    return this.update((list) => list.filter((x) => !same(x, scan, delivery)));
  }

  /** This relay's untold scans left from before (a value that cannot be read counts as none). */
  async left(): Promise<Untold[]> {
    await this.chain.catch(() => undefined);
    return readUntold(await this.meta.get(this.key));
  }

  private update(change: (list: Untold[]) => Untold[]): Promise<void> {
    const next = this.chain.catch(() => undefined).then(async () => {
      const before = readUntold(await this.meta.get(this.key));
      const after = change(before);
      if (after.length === 0 && before.length === 0) return;
      await this.meta.set(this.key, after.length ? JSON.stringify(after) : null);
    });
    this.chain = next;
    return next;
  }
}

const same = (u: Untold, scan: number, delivery: string) => u.scan === scan && u.delivery === delivery;

function readUntold(value: string | undefined): Untold[] {
  if (!value) return [];
  try {
    const parsed = z.array(untoldSchema).safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}

/** The event of an untold scan, told now: `how` replaces what the after-steps would have found. */
export function toldLate(u: Untold, how: string, now: number): NotifyEvent {
  const detail = [u.event.detail, how].filter(Boolean).join('; ');
  return { ...u.event, at: now, tookMs: Math.max(0, now - (u.event.requestedAt ?? now)), detail };
}
