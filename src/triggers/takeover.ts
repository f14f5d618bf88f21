import type { ScanRequest } from '../core/scan.ts';
import type { QueueMetaStore } from '../queue/backend.ts';
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
 * Queues a peer's pending scans once: the marker under `key` (which file, when) is written in the same commit
 * as the scans, so a file already taken over is left alone unless `replace`. The peer's file is only read.
 */
export async function takeOverOnce(opts: {
  file: string;
  key: string;
  rows: number;
  meta: QueueMetaStore;
  intake: QueueIntake;
  replace?: boolean;
  toRequests: () => { requests: ScanRequest[]; skipped: Array<{ path: string; reason: string }> };
}): Promise<QueueTakeover> {
  const before = await opts.meta.get(opts.key);
  if (before && !opts.replace) {
    const prior = JSON.parse(before) as { file?: string; at?: string };
    if (prior.file === opts.file) return { file: opts.file, rows: opts.rows, queued: 0, skipped: [], already: prior.at ?? 'before' };
  }
  const { requests, skipped } = opts.toRequests();
  await opts.intake.enqueue(requests, { [opts.key]: JSON.stringify({ file: opts.file, at: new Date().toISOString(), rows: opts.rows }) });
  return { file: opts.file, rows: opts.rows, queued: requests.length, skipped };
}
