import type { Config } from '../../config/schema.ts';
import type { Logger } from '../../core/logger.ts';
import type { QueueIntake } from '../../queue/door.ts';
import { readPlexAutoscanQueue, requestsFromQueue } from './queue-db.ts';
import { takeOverOnce, type QueueTakeover } from '../../triggers/takeover.ts';

/** Queue meta key recording which plex_autoscan queue file was taken over, and when (JSON). */
export const QUEUE_IMPORT_KEY = 'plex_autoscan.queue_import';

/** What taking over plex_autoscan's queue did. */
export type QueueImportResult = QueueTakeover;

/**
 * Takes plex_autoscan's pending scans into scanrelay's queue, with the import marker in the same
 * transaction. plex_autoscan's file is only read. A file imported before is left alone unless `replace`.
 */
export async function importPlexAutoscanQueue(opts: { file: string; config: Config; intake: QueueIntake; replace?: boolean }): Promise<QueueImportResult | undefined> {
  const rows = readPlexAutoscanQueue(opts.file);
  if (!rows) return undefined;
  return takeOverOnce({ ...opts, key: QUEUE_IMPORT_KEY, rows, toRequests: () => requestsFromQueue(rows, opts.config) });
}

export function describeQueueImport(r: QueueImportResult): string {
  if (r.already) return `plex_autoscan's queue ${r.file} was already taken over (${r.already}): not queued again (use --replace to queue its ${r.rows} row(s) again)`;
  const head = `took over plex_autoscan's queue ${r.file}: ${r.rows} pending scan(s), ${r.queued} queued`;
  return r.skipped.length ? `${head}; skipped: ${r.skipped.map((s) => `${s.path} (${s.reason})`).join('; ')}` : head;
}

/**
 * At server start: when the queue file (--queuefile) holds plex_autoscan's queue table (both programs
 * default to queue.db) with rows not taken over before, its pending scans are queued once. With a shared queue
 * (SERVER_QUEUE_URL) the file is only plex_autoscan's, and the marker is in the shared queue: relays that
 * start together with the same file queue it once in all (takeOverOnce).
 */
export async function importQueueAtStart(opts: { queuefile: string; config: Config; intake: QueueIntake; log: Logger }): Promise<void> {
  try {
    const result = await importPlexAutoscanQueue({ file: opts.queuefile, config: opts.config, intake: opts.intake });
    // Rows taken over before are in the file at every start (scanrelay only reads them): said once, not each time.
    if (result?.already) opts.log.debug({ ...result }, describeQueueImport(result));
    else if (result) opts.log.info({ ...result }, describeQueueImport(result));
  } catch (err) {
    // The relay still starts; the rows stay where they are for `scanrelay import-plex-autoscan`.
    opts.log.warn({ err: (err as Error).message }, `plex_autoscan's queue in ${opts.queuefile} was not taken over: ${(err as Error).message}`);
  }
}
