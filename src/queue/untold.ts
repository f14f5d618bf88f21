import { z } from 'zod';
import { notifyEventSchema, type NotifyEvent } from '../core/events.ts';
import type { QueueMetaStore } from './backend.ts';

/** Meta keys of scans whose end is not told yet: `untold:<relay>:<scan>:<delivery>`. */
export const UNTOLD_PREFIX = 'untold:';

/**
 * A scan a target accepted (its delivery is recorded as sent) whose end is told only once its after-steps confirm
 * it (Plex's completion watch). Kept beside the queue from before the delivery is recorded until its event is
 * written, so a relay killed (`kill -9`) or stopped in between still tells it at its next start.
 */
export const untoldSchema = z.object({
  /** The relay that sent it: only that relay knows whether its after-steps still run. */
  relay: z.string(),
  /** The target's name, as its events name it. */
  target: z.string(),
  /** The delivery's name in the queue (on a shared queue, the server's: plex@<id>). */
  delivery: z.string(),
  scan: z.number().int(),
  /** The event as it stood when the scan was sent; its detail and times are filled in when it is told. */
  event: notifyEventSchema,
});
export type Untold = z.infer<typeof untoldSchema>;

const keyOf = (relay: string, scan: number, delivery: string) => `${UNTOLD_PREFIX}${relay}:${scan}:${delivery}`;

/** The untold scans of one relay, in the queue's meta values (both stores have them; nothing else is written). */
export class UntoldScans {
  constructor(
    private readonly meta: QueueMetaStore,
    readonly relay: string,
  ) {}

  async remember(u: Omit<Untold, 'relay'>): Promise<void> {
    await this.meta.set(keyOf(this.relay, u.scan, u.delivery), JSON.stringify({ ...u, relay: this.relay }));
  }

  async forget(scan: number, delivery: string): Promise<void> {
    await this.meta.set(keyOf(this.relay, scan, delivery), null);
  }

  /** This relay's untold scans left from before (a value that cannot be read is dropped). */
  async left(): Promise<Untold[]> {
    const out: Untold[] = [];
    for (const [key, value] of await this.meta.list(`${UNTOLD_PREFIX}${this.relay}:`)) {
      const u = readUntold(value);
      if (u) out.push(u);
      else await this.meta.set(key, null);
    }
    return out;
  }
}

function readUntold(value: string): Untold | undefined {
  try {
    const parsed = untoldSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The event of an untold scan, told now: `how` replaces what the after-steps would have found. */
export function toldLate(u: Untold, how: string, now: number): NotifyEvent {
  const detail = [u.event.detail, how].filter(Boolean).join('; ');
  return { ...u.event, at: now, tookMs: Math.max(0, now - (u.event.requestedAt ?? now)), detail };
}
