import type pg from 'pg';
import type { NormalizedScanRequest } from '../../core/scan.ts';
import { ancestors } from '../../paths/mapping.ts';
import { descendantRange } from '../coalesce.ts';
import { EnqueueBatch, runAsync, type EnqueueIO, type NewPart, type NewScan } from '../enqueue-batch.ts';
import type { EnqueueResult, ScanRow, Timing } from '../types.ts';

type Db = Pick<pg.ClientBase, 'query'>;

/** What a scan's sample holds, as far as this batch needs to know: its size, and which of the batch's files it has. */
interface Sample {
  size: number;
  has: Set<string>;
}

/**
 * One enqueue transaction on PostgreSQL in a fixed number of round trips, whatever the batch's size: one read of
 * every pending scan the batch can touch (with each possible holder's sample size and which of the batch's files
 * it already has), EnqueueBatch's rules run against that snapshot in memory, then one statement writes every new
 * scan, merge, file and part. Exact, because the caller holds the queue's advisory lock: no other writer changes
 * pending scans until the commit. A step the snapshot cannot answer (a new folder taking in pending folders below
 * it) writes what is buffered and goes to the table, as before.
 *
 * New scans get provisional ids (negative) until they are written; the results carry the real ones.
 */
export async function enqueueInTx(
  db: Db,
  requests: readonly NormalizedScanRequest[],
  timing: Timing,
  now: number,
  /** A NOTIFY sent in the same statement as the writes (none when `payload` gives undefined). */
  notify?: { channel: string; payload: (results: readonly EnqueueResult[]) => string | undefined },
): Promise<EnqueueResult[]> {
  const io = new PgEnqueueIO(db);
  await io.read(requests);
  const results = await runAsync(new EnqueueBatch(timing, now).addAll(requests), io);
  await io.write(notify && { channel: notify.channel, payload: notify.payload(results) });
  return results.map((r) => ({ ...r, id: io.realId(r.id) }));
}

class PgEnqueueIO implements EnqueueIO {
  /** Pending scans by the id the rules know them by (provisional for new ones). */
  private readonly rows = new Map<number, ScanRow>();
  private readonly samples = new Map<number, Sample>();
  /** Provisional id -> the id PostgreSQL gave it. */
  private readonly ids = new Map<number, number>();
  private nextProvisional = -1;
  // What is written at the end (or before the next statement that reads the tables).
  private inserts = new Map<number, NewScan & { filesMore: number }>();
  private merges = new Map<number, Partial<NewScan> & { more: number }>();
  private files: Array<[number, string]> = [];
  private parts: NewPart[] = [];

  constructor(private readonly db: Db) {}

  realId(id: number): number {
    return id < 0 ? (this.ids.get(id) ?? id) : id;
  }

  /** Every pending scan at the batch's folders and their parents, and below its folders, in one statement. */
  async read(requests: readonly NormalizedScanRequest[]): Promise<void> {
    const candidates = [...new Set(requests.flatMap((r) => [r.folder, ...ancestors(r.folder)]))];
    const ranges = [...new Set(requests.map((r) => r.folder))].map(descendantRange);
    const files = [...new Set(requests.flatMap((r) => r.files))];
    const { rows } = await this.db.query<ScanRow & { holder: boolean; sample_size: number | null; present: string[] | null }>({
      name: 'scanrelay.enqueue.read',
      text: `SELECT ${SCAN_COLUMNS}, true AS holder, (SELECT count(*) FROM scan_files f WHERE f.scan_id = s.id) AS sample_size,
              ARRAY(SELECT f.path FROM scan_files f WHERE f.scan_id = s.id AND f.path = ANY($2::text[])) AS present
         FROM scans s WHERE s.status = 'pending' AND s.folder = ANY($1::text[])
       UNION ALL
       SELECT ${SCAN_COLUMNS}, false, NULL, NULL FROM unnest($3::text[], $4::text[]) AS r(low, high)
         JOIN LATERAL (SELECT * FROM scans WHERE status = 'pending' AND folder >= r.low AND folder < r.high) s ON true`,
      values: [candidates, files, ranges.map((r) => r[0]), ranges.map((r) => r[1])],
    });
    for (const { holder, sample_size, present, ...row } of rows) {
      this.rows.set(row.id, row);
      // Only a scan at one of the batch's folders (or above) can take in a request's files.
      if (holder) this.samples.set(row.id, { size: Number(sample_size), has: new Set(present) });
    }
  }

  pendingIn(folders: string[], removal: number, targets: string | null, action: string | null): ScanRow[] {
    return [...this.rows.values()].filter((r) => r.removal === removal && (r.targets ?? null) === targets && (r.action ?? null) === action && folders.includes(r.folder));
  }

  pendingBelow(low: string, high: string, removal: number, targets: string | null, action: string | null): ScanRow[] {
    return [...this.rows.values()].filter((r) => r.removal === removal && (r.targets ?? null) === targets && (r.action ?? null) === action && r.folder >= low && r.folder < high);
  }

  insert(s: NewScan): number {
    const id = this.nextProvisional--;
    this.inserts.set(id, { ...s, filesMore: 0 });
    this.rows.set(id, {
      id, folder: s.folder, status: 'pending', priority: s.priority, source: s.source, event: s.event, title: s.title, ids: s.ids, update_type: s.updateType,
      requests: s.requests, upgrade: s.upgrade, first_at: s.firstAt, last_at: s.lastAt, due_at: s.dueAt, finished_at: null, removal: s.removal, hold_until: s.holdUntil, files_more: 0,
      targets: s.targets,
      action: s.action,
    });
    this.samples.set(id, { size: 0, has: new Set() });
    return id;
  }

  merge(s: NewScan & { id: number }): void {
    const row = this.rows.get(s.id);
    if (row) Object.assign(row, { requests: s.requests, priority: s.priority, last_at: s.lastAt, first_at: s.firstAt, due_at: s.dueAt, update_type: s.updateType, upgrade: s.upgrade, title: s.title ?? row.title, ids: s.ids ?? row.ids, event: s.event, source: s.source });
    const { id, ...columns } = s;
    const unwritten = this.inserts.get(id);
    // A merge into a scan this batch created is part of its INSERT (title and ids keep what they had when absent).
    if (unwritten) Object.assign(unwritten, { ...columns, title: s.title ?? unwritten.title, ids: s.ids ?? unwritten.ids });
    else this.merges.set(id, { ...this.merges.get(id), ...columns, more: this.merges.get(id)?.more ?? 0 });
  }

  async addFiles(id: number, files: string[]): Promise<number> {
    const sample = this.samples.get(id);
    if (!sample) {
      await this.flush();
      return (await this.db.query(`INSERT INTO scan_files (scan_id, path) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`, [this.realId(id), files])).rowCount ?? 0;
    }
    let added = 0;
    for (const f of files) {
      if (sample.has.has(f)) continue;
      sample.has.add(f);
      this.files.push([id, f]);
      added++;
    }
    sample.size += added;
    return added;
  }

  addMoreFiles(id: number, count: number): void {
    const unwritten = this.inserts.get(id);
    if (unwritten) unwritten.filesMore += count;
    else this.merges.set(id, { ...this.merges.get(id), more: (this.merges.get(id)?.more ?? 0) + count });
  }

  async sampleSize(id: number): Promise<number> {
    const sample = this.samples.get(id);
    if (sample) return sample.size;
    await this.flush();
    return (await this.db.query<{ n: number }>(`SELECT count(*) AS n FROM scan_files WHERE scan_id = $1`, [this.realId(id)])).rows[0]!.n;
  }

  /** A new folder takes in a pending one below it: written at once (it reads the absorbed scan's files in the table). */
  async absorb(to: number, from: number, room: number): Promise<number> {
    await this.flush();
    const [t, f] = [this.realId(to), this.realId(from)];
    this.rows.delete(from);
    this.samples.delete(from);
    await this.db.query(`UPDATE scan_parts SET scan_id = $1 WHERE scan_id = $2`, [t, f]);
    // Before the source rows go: what does not fit (all past `room`), and what the absorbed scan had not kept.
    await this.db.query(
      `UPDATE scans SET files_more = files_more +
         (SELECT f.files_more + greatest(0, (SELECT count(*) FROM scan_files WHERE scan_id = f.id) - $3) FROM scans f WHERE f.id = $2)
       WHERE id = $1`,
      [t, f, room],
    );
    const moved = await this.db.query<{ path: string }>(
      `INSERT INTO scan_files (scan_id, path) SELECT $1, path FROM scan_files WHERE scan_id = $2 ORDER BY path COLLATE "C" LIMIT $3
       ON CONFLICT DO NOTHING RETURNING path`,
      [t, f, room],
    );
    await this.db.query(`DELETE FROM scan_files WHERE scan_id = $1`, [f]);
    await this.db.query(`DELETE FROM scans WHERE id = $1`, [f]);
    // The new scan still knows its whole sample: what it had, and what moved in.
    const sample = this.samples.get(to);
    if (sample) {
      for (const r of moved.rows) sample.has.add(r.path);
      sample.size += moved.rows.length;
    }
    return moved.rowCount ?? 0;
  }

  addPart(p: NewPart): void {
    this.parts.push(p);
  }

  /** Writes what is buffered (before a statement that reads the tables). */
  private async flush(): Promise<void> {
    await this.write();
  }

  /**
   * Every buffered write in one statement: new scans (their ids come back for the rest), merges, files and parts.
   * A part recorded twice in the batch (the same folder under the same scan) goes in a second statement, since one
   * INSERT ... ON CONFLICT DO UPDATE may not touch a row twice.
   */
  async write(notify?: { channel: string; payload: string | undefined }): Promise<void> {
    const inserts = [...this.inserts.entries()];
    const merges = [...this.merges.entries()].map(([id, m]) => [this.realId(id), m] as const);
    const files = this.files.map(([id, path]) => [this.realId(id), path] as const);
    const [first, later] = firstOfEach(this.parts);
    const parts = first.map((p) => ({ ...p, scanId: this.realId(p.scanId) }));
    this.inserts = new Map();
    this.merges = new Map();
    this.files = [];
    this.parts = [];
    const note = notify?.payload !== undefined ? notify : undefined;
    if (!inserts.length && !merges.length && !files.length && !parts.length && !note) return;
    const col = <T, K extends keyof T>(list: readonly T[], key: K) => list.map((x) => x[key] ?? null);
    const n = inserts.map(([, s]) => s);
    const m = merges.map(([id, s]) => ({ id, ...s }));
    const { rows } = await this.db.query<{ pids: number[] | null; ids: number[] | null }>({
      name: 'scanrelay.enqueue.write',
      text: `WITH new AS (
         INSERT INTO scans (folder, status, priority, source, event, title, ids, update_type, requests, upgrade, first_at, last_at, due_at, removal, hold_until, files_more, targets, action)
         SELECT folder, 'pending', priority, source, event, title, ids, update_type, requests, upgrade, first_at, last_at, due_at, removal, hold_until, files_more, targets, action
         FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::int[], $10::bigint[], $11::bigint[], $12::bigint[], $13::int[], $14::bigint[], $15::int[], $45::text[], $46::text[])
           AS n(folder, priority, source, event, title, ids, update_type, requests, upgrade, first_at, last_at, due_at, removal, hold_until, files_more, targets, action)
         RETURNING id, folder, removal, coalesce(targets, '') AS route, coalesce(action, '') AS act
       ), ids AS (
         SELECT p.pid, new.id FROM unnest($16::bigint[], $1::text[], $13::int[], $45::text[], $46::text[]) AS p(pid, folder, removal, targets, action)
           JOIN new ON new.folder = p.folder AND new.removal = p.removal AND new.route = coalesce(p.targets, '') AND new.act = coalesce(p.action, '')
       ), merged AS (
         UPDATE scans s SET requests = coalesce(u.requests, s.requests), priority = coalesce(u.priority, s.priority), last_at = coalesce(u.last_at, s.last_at),
           first_at = coalesce(u.first_at, s.first_at), due_at = coalesce(u.due_at, s.due_at), update_type = coalesce(u.update_type, s.update_type),
           upgrade = coalesce(u.upgrade, s.upgrade), title = coalesce(u.title, s.title), ids = coalesce(u.ids, s.ids), event = coalesce(u.event, s.event),
           source = coalesce(u.source, s.source), files_more = s.files_more + u.more
         FROM unnest($17::bigint[], $18::int[], $19::int[], $20::bigint[], $21::bigint[], $22::bigint[], $23::text[], $24::int[], $25::text[], $26::text[], $27::text[], $28::text[], $29::int[])
           AS u(id, requests, priority, last_at, first_at, due_at, update_type, upgrade, title, ids, event, source, more)
         WHERE s.id = u.id
       ), files AS (
         INSERT INTO scan_files (scan_id, path)
         SELECT coalesce(ids.id, f.scan_id), f.path FROM unnest($30::bigint[], $31::text[]) AS f(scan_id, path) LEFT JOIN ids ON ids.pid = f.scan_id
         ON CONFLICT DO NOTHING
       ), parts AS (${PARTS_UPSERT.replace('$PARTS', '$32::bigint[], $33::text[], $34::int[], $35::text[], $36::text[], $37::text[], $38::text[], $39::text[], $40::int[], $41::int[], $42::bigint[]')})
       SELECT (SELECT array_agg(pid) FROM ids) AS pids, (SELECT array_agg(id) FROM ids) AS ids, (SELECT pg_notify($43, $44) WHERE $43 IS NOT NULL) AS notified`,
      values: [
        col(n, 'folder'), col(n, 'priority'), col(n, 'source'), col(n, 'event'), col(n, 'title'), col(n, 'ids'), col(n, 'updateType'), col(n, 'requests'),
        col(n, 'upgrade'), col(n, 'firstAt'), col(n, 'lastAt'), col(n, 'dueAt'), col(n, 'removal'), col(n, 'holdUntil'), col(n, 'filesMore'),
        inserts.map(([pid]) => pid),
        col(m, 'id'), col(m, 'requests'), col(m, 'priority'), col(m, 'lastAt'), col(m, 'firstAt'), col(m, 'dueAt'), col(m, 'updateType'), col(m, 'upgrade'),
        col(m, 'title'), col(m, 'ids'), col(m, 'event'), col(m, 'source'), col(m, 'more'),
        files.map((f) => f[0]), files.map((f) => f[1]),
        ...partColumns(parts),
        note?.channel ?? null, note?.payload ?? null,
        col(n, 'targets'),
        col(n, 'action'),
      ],
    });
    const [pids, ids] = [rows[0]?.pids ?? [], rows[0]?.ids ?? []];
    pids.forEach((pid, i) => this.ids.set(Number(pid), Number(ids[i])));
    if (pids.length !== inserts.length) throw new Error(`enqueue: ${inserts.length} new scans written, ${pids.length} ids returned`);
    for (let rest = later; rest.length; ) {
      const [now, next] = firstOfEach(rest);
      rest = next;
      await this.db.query({
        name: 'scanrelay.enqueue.parts',
        text: `WITH ids (pid, id) AS (SELECT NULL::bigint, NULL::bigint WHERE false), parts AS (${PARTS_UPSERT.replace('$PARTS', PART_PARAMS)}) SELECT 1`,
        values: partColumns(now.map((p) => ({ ...p, scanId: this.realId(p.scanId) }))),
      });
    }
  }
}

/**
 * The statements above are prepared once per connection (named). They list the columns they return, so a later
 * migration that adds one does not change a prepared statement's result.
 */
const SCAN_COLUMNS = ['id', 'folder', 'status', 'priority', 'source', 'event', 'title', 'ids', 'update_type', 'requests', 'upgrade', 'first_at', 'last_at', 'due_at', 'finished_at', 'removal', 'hold_until', 'files_more', 'targets', 'action']
  .map((c) => `s.${c}`)
  .join(', ');

/** A part's upsert from parallel arrays: requests add up, the most urgent priority and the earliest first_at win. */
const PARTS_UPSERT = `INSERT INTO scan_parts (scan_id, folder, priority, source, event, title, ids, update_type, upgrade, requests, first_at)
  SELECT coalesce(ids.id, p.scan_id), p.folder, p.priority, p.source, p.event, p.title, p.ids, p.update_type, p.upgrade, p.requests, p.first_at
  FROM unnest($PARTS) AS p(scan_id, folder, priority, source, event, title, ids, update_type, upgrade, requests, first_at) LEFT JOIN ids ON ids.pid = p.scan_id
  ON CONFLICT (scan_id, folder) DO UPDATE SET requests = scan_parts.requests + excluded.requests,
    priority = least(scan_parts.priority, excluded.priority), upgrade = greatest(scan_parts.upgrade, excluded.upgrade),
    first_at = least(scan_parts.first_at, excluded.first_at), source = excluded.source, event = excluded.event,
    update_type = CASE WHEN scan_parts.update_type = excluded.update_type THEN scan_parts.update_type ELSE 'Modified' END,
    title = coalesce(excluded.title, scan_parts.title), ids = coalesce(excluded.ids, scan_parts.ids)`;

const PART_PARAMS = '$1::bigint[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::int[], $11::bigint[]';

function partColumns(parts: readonly NewPart[]): unknown[][] {
  const keys: Array<keyof NewPart> = ['scanId', 'folder', 'priority', 'source', 'event', 'title', 'ids', 'updateType', 'upgrade', 'requests', 'firstAt'];
  return keys.map((k) => parts.map((p) => p[k] ?? null));
}

/** The first part of each (scan, folder) in order, and the repeats, which go in a later statement in the same order. */
function firstOfEach(parts: readonly NewPart[]): [NewPart[], NewPart[]] {
  const seen = new Set<string>();
  const first: NewPart[] = [];
  const rest: NewPart[] = [];
  for (const p of parts) {
    const key = `${p.scanId}\0${p.folder}`;
    (seen.has(key) ? rest : first).push(p);
    seen.add(key);
  }
  return [first, rest];
}
