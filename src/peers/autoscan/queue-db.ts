import { existsSync } from 'node:fs';
import { openReadOnly } from '../../db/read-only.ts';
import { UserError } from '../../core/errors.ts';
import type { Config } from '../../config/schema.ts';
import type { ScanRequest } from '../../core/scan.ts';
import { resolveEach } from '../../intake/resolve.ts';
import type { QueueIntake } from '../../queue/door.ts';
import { takeOverOnce, type QueueTakeover } from '../../triggers/takeover.ts';

/*
 * autoscan's pending scans: its database (default autoscan.db, env AUTOSCAN_DATABASE) holds the table
 * `scan(folder, priority, time)` (processor/migrations/1_init.sql); a row stays until every target took the
 * scan (processor/processor.go:87-113). Its folders are autoscan's own paths, after the trigger's rewrite and
 * before any target's: the relay's own path here, so they are queued as they are.
 */
export interface AutoscanScanRow {
  folder: string;
  priority: number;
  time: string;
}

/** Queue meta key recording which autoscan.db was taken over, and when (JSON). */
export const AUTOSCAN_QUEUE_IMPORT_KEY = 'autoscan.queue_import';

/**
 * The pending rows in autoscan's own order: higher priority first, then oldest first
 * (processor/datastore.go:84-89). The time is text as Go's SQLite driver wrote it; its date-and-time
 * prefix sorts in time order for one time zone.
 */
export function readAutoscanQueue(file: string): AutoscanScanRow[] {
  if (!existsSync(file)) throw new UserError(`autoscan's database ${file} does not exist (give its path with --database, or AUTOSCAN_DATABASE)`);
  const db = openReadOnly(file, "autoscan's database");
  try {
    const table = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'scan'`).get();
    if (!table) throw new UserError(`${file} has no scan table: it is not autoscan's database`);
    return db.prepare<[], AutoscanScanRow>(`SELECT folder, priority, CAST(time AS TEXT) AS time FROM scan ORDER BY priority DESC, time ASC, rowid ASC`).all();
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot read autoscan's database ${file}: ${(err as Error).message}`);
  } finally {
    db.close();
  }
}

/** What taking over autoscan.db did. */
export type AutoscanQueueImport = QueueTakeover;

/** Rows -> scan requests: each folder as it is, with autoscan's priority turned round (scanrelayPriority). */
export function requestsFromAutoscanQueue(
  rows: readonly AutoscanScanRow[],
  config: Pick<Config, 'SERVER_PATH_MAPPINGS' | 'SERVER_FILE_EXIST_PATH_MAPPINGS' | 'SERVER_IGNORE_LIST' | 'SERVER_SCAN_PRIORITIES'>,
  priorityOf: (autoscanPriority: number) => number,
): { requests: ScanRequest[]; skipped: Array<{ path: string; reason: string }> } {
  const { requests, skipped } = resolveEach(
    rows.map((row) => ({ source: 'API' as const, event: 'autoscan queue', updateType: 'Modified' as const, priority: priorityOf(row.priority), path: { path: row.folder, kind: 'folder' as const } })),
    { ...config, SERVER_PATH_MAPPINGS: {}, SERVER_PATH_REWRITES: [] },
  );
  return { requests, skipped: skipped.map(({ path, reason }) => ({ path, reason })) };
}

/** Takes autoscan's pending scans into scanrelay's queue once (again only with `replace`); autoscan.db is only read. */
export async function importAutoscanQueue(opts: {
  file: string;
  config: Config;
  intake: QueueIntake;
  priorityOf: (autoscanPriority: number) => number;
  replace?: boolean;
}): Promise<AutoscanQueueImport> {
  const rows = readAutoscanQueue(opts.file);
  return takeOverOnce({
    ...opts,
    key: AUTOSCAN_QUEUE_IMPORT_KEY,
    rows,
    toRequests: () => requestsFromAutoscanQueue(rows, opts.config, opts.priorityOf),
  });
}

export function describeAutoscanQueueImport(r: AutoscanQueueImport): string {
  if (r.already) return `autoscan's pending scans in ${r.file} were already taken over (${r.already}): not queued again (use --replace to queue its ${r.rows} row(s) again)`;
  const head = `took over autoscan's pending scans from ${r.file}: ${r.rows} row(s), ${r.queued} queued in autoscan's priority order`;
  return r.skipped.length ? `${head}; skipped: ${r.skipped.map((s) => `${s.path} (${s.reason})`).join('; ')}` : head;
}

/**
 * A taken-over row is queued as a new request, so it waits the whole SERVER_SCAN_DELAY from now; autoscan counted
 * minimum-age from the row's own time (processor/datastore.go:84-92, `WHERE time < now - minAge`). Said in one
 * line, with the delay, rather than let the user expect the scans at once. Empty when nothing waits.
 */
export function autoscanQueueWait(r: AutoscanQueueImport, delaySeconds: number): string {
  if (r.already || !r.queued || !delaySeconds) return '';
  return `each taken-over scan waits a full SERVER_SCAN_DELAY (${delaySeconds} s, autoscan's minimum-age) from now, not from the time autoscan recorded it`;
}
