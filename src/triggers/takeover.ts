import type { ScanRequest } from '../core/scan.ts';
import type { QueueIntake } from '../queue/intake.ts';

/** What taking over a peer's pending scans did. */
export interface QueueTakeover {
  file: string;
  /** Rows found in the peer's queue. */
  rows: number;
  /** Scan requests queued from them. */
  queued: number;
  skipped: Array<{ path: string; reason: string }>;
  /** Not queued because this file was taken over before (without `replace`): when. */
  already?: string;
}

/**
 * Queues a peer's pending scans once: the marker under `key` (which file, when) is checked and written in the
 * same transaction as the scans, under the lock every writer of the queue takes. So a file already taken over
 * is left alone unless `replace`, also when several relays sharing one queue (SERVER_QUEUE_URL) take the same
 * file over at once: one queues it, the others find its marker. The peer's file is only read.
 */
export async function takeOverOnce(opts: {
  file: string;
  key: string;
  rows: number;
  intake: QueueIntake;
  replace?: boolean;
  toRequests: () => { requests: ScanRequest[]; skipped: Array<{ path: string; reason: string }> };
}): Promise<QueueTakeover> {
  const { requests, skipped } = opts.toRequests();
  const marker = JSON.stringify({ file: opts.file, at: new Date().toISOString(), rows: opts.rows });
  const { prior, results } = await opts.intake.enqueueOnce(requests, { key: opts.key, value: marker, done: (value) => !opts.replace && takenFrom(value) === opts.file });
  if (!results) return { file: opts.file, rows: opts.rows, queued: 0, skipped: [], already: (prior && (JSON.parse(prior) as { at?: string }).at) || 'before' };
  return { file: opts.file, rows: opts.rows, queued: requests.length, skipped };
}

/** The file a marker names (undefined for none, or one that cannot be read). */
function takenFrom(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    return (JSON.parse(value) as { file?: string }).file;
  } catch {
    return undefined;
  }
}
