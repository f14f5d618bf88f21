import { existsSync } from 'node:fs';
import { autopulseTitle, safeName } from './names.ts';
import { UserError } from '../../core/errors.ts';
import type { Config } from '../../config/schema.ts';
import { triggerSelection } from '../../config/targets.ts';
import type { ScanRequest } from '../../core/scan.ts';
import { openReadOnly } from '../../db/read-only.ts';
import { resolveEach } from '../../intake/resolve.ts';
import type { QueueIntake } from '../../queue/door.ts';
import { takeOverOnce, type QueueTakeover } from '../../triggers/takeover.ts';

/*
 * autopulse's pending scans: the table scan_events (crates/database/migrations/*: id, event_source, file_path,
 * process_status pending|retry|complete|failed, targets_hit "a,b", can_process ...), in its SQLite file or its
 * PostgreSQL database. Rows pending or being retried are taken; complete and failed ones are only counted. The
 * paths are autopulse's own, after the trigger's rewrite and before any target's: queued as they are.
 */
export interface AutopulseRow {
  id: string;
  event_source: string;
  file_path: string;
  process_status: string;
  targets_hit: string;
  can_process: string;
}

export interface AutopulseQueue {
  /** Pending and retrying rows, in the order autopulse's runner reads them (insertion order). */
  pending: AutopulseRow[];
  /** Rows already complete or failed: left alone, counted. */
  processed: number;
}

/** Queue meta key recording which autopulse rows were taken over, and when (JSON). */
export const AUTOPULSE_QUEUE_IMPORT_KEY = 'autopulse.queue_import';

const PENDING_SQL = `SELECT id, event_source, file_path, process_status, targets_hit, CAST(can_process AS TEXT) AS can_process
  FROM scan_events WHERE process_status IN ('pending', 'retry')`;
const PROCESSED_SQL = `SELECT COUNT(*) AS n FROM scan_events WHERE process_status NOT IN ('pending', 'retry')`;

/** A database URL or path as autopulse writes it: sqlite://<path> (conn.rs:121-126), postgres://..., or a bare path. */
export function autopulseDatabase(where: string): { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string } {
  if (/^postgres(ql)?:\/\//.test(where)) return { kind: 'postgres', url: where };
  const file = where.replace(/^sqlite:\/\//, '');
  if (file === ':memory:') throw new UserError("autopulse's database is in memory (sqlite://:memory:): it kept no pending scans to take over");
  return { kind: 'sqlite', file };
}

/** runner.rs:147-159 reads without ORDER BY: SQLite's rowid order, the order the rows were added. */
export function readAutopulseSqlite(file: string): AutopulseQueue {
  if (!existsSync(file)) throw new UserError(`autopulse's database ${file} does not exist (give its path with --database)`);
  const db = openReadOnly(file, "autopulse's database");
  try {
    const table = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'scan_events'`).get();
    if (!table) throw new UserError(`${file} has no scan_events table: it is not autopulse's database`);
    const pending = db.prepare<[], AutopulseRow>(`${PENDING_SQL} ORDER BY rowid ASC`).all();
    const { n } = db.prepare<[], { n: number }>(PROCESSED_SQL).get()!;
    return { pending, processed: n };
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot read autopulse's database ${file}: ${(err as Error).message}`);
  } finally {
    db.close();
  }
}

/** The same from PostgreSQL (only read); the order is the rows' creation. */
export async function readAutopulsePostgres(url: string): Promise<AutopulseQueue> {
  const [{ default: pg }, { clientConfig }, { redactUrl }] = await Promise.all([import('pg'), import('../../db/pg/connection.ts'), import('../../db/pg/redact.ts')]);
  let client: InstanceType<typeof pg.Client>;
  try {
    client = new pg.Client(clientConfig(url, 'scanrelay import-autopulse'));
  } catch (err) {
    throw new UserError(`cannot read autopulse's database ${redactUrl(url)}: ${(err as Error).message}; percent-encode the password's special characters (@ as %40, / as %2F, # as %23, ? as %3F)`);
  }
  try {
    await client.connect();
    const pending = (await client.query<AutopulseRow>(`${PENDING_SQL.replace('CAST(can_process AS TEXT)', "to_char(can_process, 'YYYY-MM-DD HH24:MI:SS.US')")} ORDER BY created_at ASC, id ASC`)).rows;
    const { n } = (await client.query<{ n: string }>(PROCESSED_SQL)).rows[0]!;
    return { pending, processed: Number(n) };
  } catch (err) {
    throw new UserError(`cannot read autopulse's database ${redactUrl(url)}: ${(err as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** autopulse's NaiveDateTime text (UTC, "YYYY-MM-DD HH:MM:SS[.ffffff]" or with a "T") in ms; NaN when unreadable. */
export function naiveUtcMs(text: string): number {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?/.exec(text.trim());
  if (!m) return Number.NaN;
  return Date.parse(`${m[1]}T${m[2]}${m[3] ? m[3].slice(0, 4) : ''}Z`);
}

/**
 * Rows -> scan requests. Each row goes to the targets autopulse would still send it to: every target, less
 * its trigger's excludes and less those in targets_hit (runner.rs:254-263). It is due when autopulse would
 * have processed it (can_process), or now when that time has passed. Its title names its trigger as a live
 * request's does (peers/autopulse/routes.ts intentOf), so /list shows the trigger's name, not `api`.
 */
export function requestsFromAutopulseQueue(
  rows: readonly AutopulseRow[],
  config: Pick<Config, 'SERVER_PATH_MAPPINGS' | 'SERVER_FILE_EXIST_PATH_MAPPINGS' | 'SERVER_IGNORE_LIST' | 'SERVER_SCAN_PRIORITIES' | 'SERVER_AUTOPULSE_TRIGGERS'>,
  targetNames: readonly string[],
  now = Date.now(),
): { requests: ScanRequest[]; skipped: Array<{ path: string; reason: string }>; rowOf: AutopulseRow[] } {
  const requests: ScanRequest[] = [];
  const skipped: Array<{ path: string; reason: string }> = [];
  // The row each request came from, in the same order: its uuid and trigger stay findable (/status/<uuid>).
  const rowOf: AutopulseRow[] = [];
  for (const row of rows) {
    const hit = new Set(row.targets_hit.split(',').filter(Boolean).map(safeName));
    const trigger = Object.hasOwn(config.SERVER_AUTOPULSE_TRIGGERS, row.event_source) ? config.SERVER_AUTOPULSE_TRIGGERS[row.event_source] : undefined;
    let targets: string[] | undefined;
    if (targetNames.length) {
      const chosen = triggerSelection(trigger, targetNames) ?? targetNames;
      targets = chosen.filter((n) => !hit.has(n));
      if (!targets.length) {
        skipped.push({ path: row.file_path, reason: `every target it goes to has it already (${[...hit].join(', ')})` });
        continue;
      }
    }
    const due = naiveUtcMs(row.can_process);
    const delay = Number.isFinite(due) ? Math.max(0, Math.ceil((due - now) / 1000)) : 0;
    const { requests: r, skipped: s } = resolveEach(
      [{ source: 'API' as const, event: `autopulse ${row.process_status}`, title: autopulseTitle(row.event_source), updateType: 'Modified' as const, path: { path: row.file_path, kind: 'guess' as const } }],
      { ...config, SERVER_PATH_MAPPINGS: {}, SERVER_PATH_REWRITES: [] },
    );
    requests.push(...r.map((q) => ({ ...q, delay, ...(targets ? { targets } : {}) })));
    rowOf.push(...r.map(() => row));
    skipped.push(...s.map(({ path, reason }) => ({ path, reason })));
  }
  return { requests, skipped, rowOf };
}

export interface AutopulseQueueImport extends QueueTakeover {
  processed: number;
  /**
   * Each row queued, by autopulse's uuid, with the scan it became: kept so that autopulse's /status/<uuid> answers
   * for it as autopulse did, for the scripts that saved the id (issue 48 item 3).
   */
  taken: TakenRow[];
}

export interface TakenRow {
  uuid: string;
  trigger: string;
  path: string;
  scanId: number;
  folder: string;
}

/** autopulse's rows, read from its SQLite file or PostgreSQL URL; throws (a UserError) when they cannot be read. */
export async function readAutopulseQueue(database: string): Promise<AutopulseQueue> {
  const db = autopulseDatabase(database);
  return db.kind === 'sqlite' ? readAutopulseSqlite(db.file) : readAutopulsePostgres(db.url);
}

/** Takes autopulse's pending scans into scanrelay's queue once (again only with `replace`); its database is only read. */
export async function importAutopulseQueue(opts: {
  database: string;
  config: Config;
  targetNames: readonly string[];
  intake: QueueIntake;
  replace?: boolean;
  /** The rows, when read already (readAutopulseQueue): read before anything is written, so a bad database writes nothing. */
  queue?: AutopulseQueue;
}): Promise<AutopulseQueueImport> {
  const db = autopulseDatabase(opts.database);
  const queue = opts.queue ?? (await readAutopulseQueue(opts.database));
  let made: ReturnType<typeof requestsFromAutopulseQueue> | undefined;
  // The digest names the rows by id and state, so a row retried since (targets_hit grew) is taken again.
  const taken = await takeOverOnce({
    file: db.kind === 'sqlite' ? db.file : 'postgres',
    key: AUTOPULSE_QUEUE_IMPORT_KEY,
    rows: queue.pending.map((r) => [r.id, r.process_status, r.targets_hit]),
    intake: opts.intake,
    replace: opts.replace,
    toRequests: () => (made = requestsFromAutopulseQueue(queue.pending, opts.config, opts.targetNames)),
  });
  const rows = made?.rowOf ?? [];
  const kept = (taken.results ?? []).flatMap((r, i) => (r.id > 0 && rows[i] ? [{ uuid: rows[i].id, trigger: rows[i].event_source, path: rows[i].file_path, scanId: r.id, folder: r.folder }] : []));
  return { ...taken, processed: queue.processed, taken: kept };
}

export function describeAutopulseQueueImport(r: AutopulseQueueImport): string {
  const processed = `${r.processed} row(s) already complete or failed were left alone`;
  if (r.already) return `autopulse's pending scans in ${r.file} were already taken over (${r.already}): not queued again (use --replace to queue its ${r.rows} row(s) again); ${processed}`;
  const head = `took over autopulse's pending scans from ${r.file}: ${r.rows} pending or retrying row(s), ${r.queued} queued in autopulse's order, each to the targets it had not reached; ${processed}`;
  return r.skipped.length ? `${head}; skipped: ${r.skipped.map((s) => `${s.path} (${s.reason})`).join('; ')}` : head;
}
