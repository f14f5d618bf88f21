import type pg from 'pg';
import { EVENT_COUNTS_SQL, eventListSql, processCounts, type EventQuery, type ProcessStatus } from '../../peers/autopulse/event-list.ts';
import type { QueueReads } from '../backend.ts';
import { COUNTS_SQL, countsOf, historySql, openListSql, PG_DIALECT } from '../reads.ts';
import { toEntry } from '../rows.ts';
import { LIST_FILES, MAX_FILES_PER_SCAN, type DeliveryRow, type HistoryFilter, type QueueEntry, type ScanRow } from '../types.ts';

/** One statement on any pooled connection (the store's: a lost database becomes QueueUnavailableError). */
export type Query = <R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]) => Promise<pg.QueryResult<R>>;

/**
 * The shared queue as people look at it (as queue/view.ts for SQLite): counts, one scan, the open scans, the
 * history and autopulse's list. Reads only. `describe`: each entry's relays (RelayRegistry), read when there are any.
 */
export class PgQueueView implements QueueReads {
  constructor(
    private readonly q: Query,
    private readonly describe: (entries: QueueEntry[]) => Promise<QueueEntry[]>,
  ) {}

  async counts(): Promise<Record<string, number>> {
    return countsOf((await this.q<{ status: string; n: number }>(COUNTS_SQL)).rows);
  }

  async get(id: number): Promise<QueueEntry | undefined> {
    const rows = (await this.q<ScanRow>(`SELECT * FROM scans WHERE id = $1`, [id])).rows;
    return (await this.entries(rows, MAX_FILES_PER_SCAN))[0];
  }

  async listOpen(limit = 500, offset = 0): Promise<QueueEntry[]> {
    const { rows } = await this.q<ScanRow>(openListSql(PG_DIALECT), [limit, offset]);
    return this.entries(rows, LIST_FILES);
  }

  async listHistory(filter: HistoryFilter = {}): Promise<QueueEntry[]> {
    const { sql, params } = historySql(filter, PG_DIALECT);
    return this.entries((await this.q<ScanRow>(sql, params)).rows, LIST_FILES);
  }

  async listEvents(query: EventQuery): Promise<QueueEntry[]> {
    const { sql, params } = eventListSql(query, PG_DIALECT.ph, PG_DIALECT.contains);
    return this.entries((await this.q<ScanRow>(sql, params)).rows, LIST_FILES);
  }

  async eventCounts(): Promise<Record<ProcessStatus, number>> {
    return processCounts((await this.q<{ process_status: string; n: number }>(EVENT_COUNTS_SQL)).rows);
  }

  /** Scans as the dashboard shows them, each with the first `files` of its sample. */
  private async entries(rows: ScanRow[], files: number): Promise<QueueEntry[]> {
    const ids = rows.map((r) => r.id);
    const samples = await filesOf(this.q, ids, files);
    const deliveries = new Map<number, DeliveryRow[]>();
    if (ids.length) {
      for (const d of (await this.q<DeliveryRow>(`SELECT * FROM deliveries WHERE scan_id = ANY($1::bigint[]) ORDER BY target`, [ids])).rows) {
        let list = deliveries.get(d.scan_id);
        if (!list) deliveries.set(d.scan_id, (list = []));
        list.push(d);
      }
    }
    const out = rows.map((r) => toEntry(r, samples.get(r.id)?.files ?? [], samples.get(r.id)?.size ?? 0, deliveries.get(r.id) ?? []));
    if (!rows.length) return out;
    return this.describe(out);
  }
}

/** The first `limit` files of each scan's sample (by path, as SQLite orders them), and how many its sample holds. */
export async function filesOf(q: Query, ids: number[], limit = MAX_FILES_PER_SCAN): Promise<Map<number, { files: string[]; size: number }>> {
  const out = new Map<number, { files: string[]; size: number }>();
  if (!ids.length) return out;
  const { rows } = await q<{ scan_id: number; path: string; size: number }>(
    `SELECT scan_id, path, size FROM (
       SELECT scan_id, path, row_number() OVER w AS n, count(*) OVER (PARTITION BY scan_id) AS size
       FROM scan_files WHERE scan_id = ANY($1::bigint[]) WINDOW w AS (PARTITION BY scan_id ORDER BY path COLLATE "C")
     ) f WHERE n <= $2 ORDER BY scan_id, path COLLATE "C"`,
    [ids, limit],
  );
  for (const r of rows) {
    let sample = out.get(r.scan_id);
    if (!sample) out.set(r.scan_id, (sample = { files: [], size: r.size }));
    sample.files.push(r.path);
  }
  return out;
}
