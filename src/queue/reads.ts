import type { HistoryFilter } from './types.ts';

/**
 * The dashboard's reads, stated once for both stores (as event-list.ts does for autopulse's /list): each store
 * gives its placeholder (`ph(n)`, the n-th, 1-based) and its "b is in a" (`contains`), and runs the SQL.
 */
export type Dialect = { ph: (n: number) => string; contains: (hay: string, needle: string) => string };

export const COUNTS_SQL = `SELECT status, count(*) AS n FROM scans GROUP BY status`;

/** Scans by status, every status present (0 when none). */
export function countsOf(rows: ReadonlyArray<{ status: string; n: number | string }>): Record<string, number> {
  const out: Record<string, number> = { pending: 0, active: 0, done: 0, failed: 0 };
  for (const r of rows) out[r.status] = Number(r.n);
  return out;
}

/** A page of open scans, in the order they will go: the active first, then by priority, due time and age. */
export function openListSql(d: Dialect): string {
  return `SELECT * FROM scans WHERE status IN ('pending', 'active') ORDER BY status = 'active' DESC, priority, due_at, id LIMIT ${d.ph(1)} OFFSET ${d.ph(2)}`;
}

/** A page of finished scans, the newest first, filtered by status, source and a folder's text (any case). */
export function historySql(filter: HistoryFilter, d: Dialect): { sql: string; params: Array<string | number> } {
  const where = [`status IN ('done', 'failed')`];
  const params: Array<string | number> = [];
  if (filter.status) where.push(`status = ${d.ph(params.push(filter.status))}`);
  if (filter.source) where.push(`source = ${d.ph(params.push(filter.source))}`);
  if (filter.text) where.push(d.contains('lower(folder)', `lower(${d.ph(params.push(filter.text))})`));
  const limit = d.ph(params.push(Math.min(Math.max(filter.limit ?? 100, 1), 1000)));
  const offset = d.ph(params.push(Math.max(0, filter.offset ?? 0)));
  return { sql: `SELECT * FROM scans WHERE ${where.join(' AND ')} ORDER BY finished_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`, params };
}

export const SQLITE_DIALECT: Dialect = { ph: () => '?', contains: (hay, needle) => `instr(${hay}, ${needle}) > 0` };
export const PG_DIALECT: Dialect = { ph: (n) => `$${n}`, contains: (hay, needle) => `strpos(${hay}, ${needle}) > 0` };
