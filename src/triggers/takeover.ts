import type { EnqueueResult } from '../queue/types.ts';
import { createHash } from 'node:crypto';
import type { ScanRequest } from '../core/scan.ts';
import type { QueueIntake } from '../queue/door.ts';

/** What taking over a peer's pending scans did. */
export interface QueueTakeover {
  file: string;
  /** Rows found in the peer's queue. */
  rows: number;
  /** Scan requests queued from them. */
  queued: number;
  skipped: Array<{ path: string; reason: string }>;
  /** Not queued because these rows were taken over before (without `replace`): when. */
  already?: string;
  /** What each request queued became, in the order toRequests gave them (absent when nothing was queued). */
  results?: EnqueueResult[];
}

/** One take-over as its marker remembers it. `digest` is absent in markers written before it was kept. */
interface Taken {
  file: string;
  at: string;
  rows: number;
  digest?: string;
}

/** The take-overs a marker records: a list, or the one object older markers held; none for what cannot be read. */
function takenBefore(value: string | undefined): Taken[] {
  if (!value) return [];
  try {
    const parsed = JSON.parse(value) as Taken | Taken[];
    return (Array.isArray(parsed) ? parsed : [parsed]).filter((t) => t && typeof t.file === 'string');
  } catch {
    return [];
  }
}

/** A marker keeps the latest take-overs only: each one is a handful of bytes, but a marker is read at every start. */
const KEEP_TAKEN = 50;

/**
 * Queues a peer's pending scans once: the marker under `key` is checked and written in the same transaction as
 * the scans, under the lock every writer of the queue takes. So rows already taken over are left alone unless
 * `replace`, also when several relays sharing one queue (SERVER_QUEUE_URL) take the same file over at once:
 * one queues them, the others find the marker. The rows are known by their content (a digest), not by the
 * file's path: two machines may each keep a different peer queue at the same path, and both are taken over. A
 * marker written before digests were kept matches by path, as it did then. The peer's file is only read.
 */
export async function takeOverOnce(opts: {
  file: string;
  key: string;
  /** The peer's rows as read (their digest names them). */
  rows: readonly unknown[];
  intake: QueueIntake;
  replace?: boolean;
  toRequests: () => { requests: ScanRequest[]; skipped: Array<{ path: string; reason: string }> };
}): Promise<QueueTakeover> {
  const digest = createHash('sha256').update(JSON.stringify(opts.rows)).digest('hex').slice(0, 32);
  const rows = opts.rows.length;
  const same = (t: Taken) => (t.digest ? t.digest === digest : t.file === opts.file);
  const { requests, skipped } = opts.toRequests();
  const { prior, results } = await opts.intake.enqueueOnce(requests, {
    key: opts.key,
    done: (value) => !opts.replace && takenBefore(value).some(same),
    value: (value) => JSON.stringify([...takenBefore(value).filter((t) => !same(t)), { file: opts.file, at: new Date().toISOString(), rows, digest }].slice(-KEEP_TAKEN)),
  });
  if (!results) return { file: opts.file, rows, queued: 0, skipped: [], already: takenBefore(prior).find(same)?.at ?? 'before' };
  return { file: opts.file, rows, queued: requests.length, skipped, results };
}
