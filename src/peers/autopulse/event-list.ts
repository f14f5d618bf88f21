import type { DeliveryRow } from '../../queue/types.ts';

/*
 * The scans as autopulse's /list lists its scan events (crates/service/src/manager.rs:218-284): filtered by
 * process status and by a case-insensitive search of the path, sorted by one column, a page at a time. One SQL
 * text for both stores; each passes its own placeholder and substring function.
 */

/** autopulse's process_status values (database/src/models.rs:44-53). */
export const PROCESS_STATUSES = ['pending', 'complete', 'retry', 'failed'] as const;
export type ProcessStatus = (typeof PROCESS_STATUSES)[number];

/** The fields autopulse sorts by (manager.rs:246-268), each with the scan column that stands for it. */
export const EVENT_SORT_COLUMNS = {
  id: 'id',
  file_path: 'folder',
  process_status: 'process_status',
  event_source: 'coalesce(title, source)',
  created_at: 'first_at',
  updated_at: 'coalesce(finished_at, last_at)',
} as const;
export type EventSort = keyof typeof EVENT_SORT_COLUMNS;

export interface EventQuery {
  status?: string;
  search?: string;
  sort: EventSort;
  asc: boolean;
  limit: number;
  offset: number;
}

/**
 * A scan's process status in autopulse's words (an uncorrelated IN, which both stores read once per query, not a
 * subquery per row: bench/autopulse-list.ts): done is complete, failed is failed, and an open scan is retry
 * once a target refused it and it waits to be sent again (a delivery waiting after an attempt), else pending.
 */
const PROCESS_STATUS_SQL = `CASE WHEN status = 'done' THEN 'complete' WHEN status = 'failed' THEN 'failed'
  WHEN scans.id IN (SELECT d.scan_id FROM deliveries d WHERE d.status = 'waiting' AND d.attempts > 0) THEN 'retry'
  ELSE 'pending' END`;

/**
 * How many scans are in each process status, by the same rule as the list (autopulse's /stats counts its events'
 * process_status this way, manager.rs:163-175). Rows of (process_status, n); a status with no scan has no row.
 */
export const EVENT_COUNTS_SQL = `SELECT ${PROCESS_STATUS_SQL} AS process_status, count(*) AS n FROM scans GROUP BY 1`;

/** The rows of EVENT_COUNTS_SQL as one count per status, 0 for a status no scan is in. */
export function processCounts(rows: ReadonlyArray<{ process_status: string; n: number }>): Record<ProcessStatus, number> {
  const out: Record<ProcessStatus, number> = { pending: 0, complete: 0, retry: 0, failed: 0 };
  for (const r of rows) if ((PROCESS_STATUSES as readonly string[]).includes(r.process_status)) out[r.process_status as ProcessStatus] = Number(r.n);
  return out;
}

/** The same rule on a scan read with its deliveries (what /status answers). */
export function processStatusOf(status: string, deliveries: readonly Pick<DeliveryRow, 'status' | 'attempts'>[]): ProcessStatus {
  if (status === 'done') return 'complete';
  if (status === 'failed') return 'failed';
  return deliveries.some((d) => d.status === 'waiting' && d.attempts > 0) ? 'retry' : 'pending';
}

/**
 * The SELECT for one page. `ph(n)` is the store's n-th placeholder (1-based), `contains(a, b)` its "b is in a".
 * The search looks in the folder and in the file names the scan keeps, as autopulse's LIKE '%search%' on the
 * lower-cased file_path (manager.rs:274-277); LIKE's wildcards are not wildcards here, as autopulse escapes them.
 */
export function eventListSql(q: EventQuery, ph: (n: number) => string, contains: (hay: string, needle: string) => string): { sql: string; params: Array<string | number> } {
  const params: Array<string | number> = [];
  const where: string[] = [];
  if (q.status !== undefined) where.push(`(${PROCESS_STATUS_SQL}) = ${ph(params.push(q.status))}`);
  if (q.search !== undefined && q.search !== '') {
    // Pushed once for each use: SQLite's placeholders are positional.
    const inFolder = contains('lower(folder)', ph(params.push(q.search.toLowerCase())));
    const inFiles = contains('lower(f.path)', ph(params.push(q.search.toLowerCase())));
    where.push(`(${inFolder} OR EXISTS (SELECT 1 FROM scan_files f WHERE f.scan_id = scans.id AND ${inFiles}))`);
  }
  const column = q.sort === 'process_status' ? `(${PROCESS_STATUS_SQL})` : EVENT_SORT_COLUMNS[q.sort];
  const dir = q.asc ? 'ASC' : 'DESC';
  const limit = ph(params.push(q.limit));
  const offset = ph(params.push(q.offset));
  return {
    sql: `SELECT * FROM scans ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${column} ${dir}, id ${dir} LIMIT ${limit} OFFSET ${offset}`,
    params,
  };
}
