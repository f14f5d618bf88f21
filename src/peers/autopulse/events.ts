import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { packageVersion } from '../../core/version.ts';
import type { EventQuery } from './event-list.ts';
import type { QueueBackend } from '../../queue/backend.ts';
import type { DeliveryRow, QueueEntry } from '../../queue/types.ts';
import { HOLD_PREFIX, parseHold, type Hold } from './holds.ts';

/*
 * How autopulse's routes answer for what scanrelay keeps differently (crates/server/src/routes/*, at
 * dan-online/autopulse 55124fd). autopulse keeps one row per file; scanrelay one scan per folder, so a file's event
 * is its scan seen from that file.
 */

/** routes/index.rs:10-17: GET / answers `{"autopulse": <version>}` (mod.rs:9: "prefixed with v"). */
export function indexBody(): { autopulse: string } {
  return { autopulse: `v${packageVersion()}` };
}

/**
 * A file's own event id: its scan's number and a tag of its path. autopulse answers a webhook with one row per file,
 * each with its own uuid (triggers.rs:80-104); two files of one folder share one scan here, so the scan number alone
 * would name both. `/status/<id>` finds the scan by the number and the file by the tag.
 */
export function fileEventId(scanId: number, path: string): string {
  return `${scanId}-${pathTag(path)}`;
}

const pathTag = (path: string) => createHash('sha256').update(path).digest('hex').slice(0, 12);

/** The scan number and path tag of a fileEventId(), or undefined for any other id. */
export function parseFileEventId(id: string): { scanId: number; tag: string } | undefined {
  const m = /^([1-9]\d{0,15})-([0-9a-f]{12})$/.exec(id);
  return m ? { scanId: Number(m[1]), tag: m[2]! } : undefined;
}

/** The file (or the folder) of a scan that a fileEventId()'s tag names; undefined when the scan no longer has it. */
export function pathOfTag(entry: Pick<QueueEntry, 'files' | 'folder'>, tag: string): string | undefined {
  return [...entry.files, entry.folder].find((p) => pathTag(p) === tag);
}

/**
 * autopulse's failed_times counts failures only (runner.rs:307: raised when a target failed): a scan every target
 * took on the first try has 0. A delivery's attempts count its successful (or running) try too.
 */
export function failedTimes(deliveries: readonly Pick<DeliveryRow, 'status' | 'attempts'>[]): number {
  return Math.max(0, ...deliveries.map((d) => d.attempts - (d.status === 'done' || d.status === 'sending' ? 1 : 0)));
}

/**
 * found_status: autopulse sets `found` once its file check saw the file (runner.rs:37-107), and only with
 * opts.check_path (runner.rs:38-40; imported as SERVER_FILE_CHECKS_ENABLED). With checks on (`look` given), the
 * path is looked at as autopulse's runner looks at it, where `look` says the relay sees it; `look` answers
 * undefined for a path outside every known library (paths/library.ts), which is never stat'ed and reads
 * `not_found`. With checks off the relay may not see the disk, so a scan reads `found` once its targets took it,
 * and `not_found` before.
 */
export async function foundStatusOf(path: string, status: string, look: ((path: string) => Promise<string | undefined>) | undefined): Promise<'found' | 'not_found'> {
  if (!look) return status === 'done' ? 'found' : 'not_found';
  const disk = await look(path);
  if (disk === undefined) return 'not_found';
  try {
    await stat(disk);
    return 'found';
  } catch {
    return 'not_found';
  }
}

/**
 * A `//` made by a user's rewrite (`from: /downloads`, `to: /`, autopulse #190) is one separator: autopulse hands
 * the path to the filesystem and the targets, where it names the same file.
 */
export function collapseSlashes(path: string): string {
  return path.replace(/\/{2,}/g, '/');
}

/** Every hold in the queue's meta table (holds.ts). */
export async function readHolds(store: Pick<QueueBackend, 'meta'>): Promise<Hold[]> {
  return (await store.meta.list(HOLD_PREFIX)).flatMap(([, value]) => parseHold(value) ?? []);
}

/** Open holds (a request waiting for its file or its hash, not yet queued): autopulse's pending, not-found rows. */
export const openHolds = (holds: readonly Hold[]) => holds.filter((h) => h.scanId === undefined && h.found !== 'found');

/** Whether a hold is in a /list query: process_status pending, and the search in its path (manager.rs:270-277). */
function holdMatches(h: Hold, q: Pick<EventQuery, 'status' | 'search'>): boolean {
  if (q.status !== undefined && q.status !== 'pending') return false;
  return q.search === undefined || q.search === '' || h.path.toLowerCase().includes(q.search.toLowerCase());
}

type Key = number | string;
/** The sort key of a scan, as the list's SQL orders it (event-list.ts EVENT_SORT_COLUMNS). */
function scanKey(e: QueueEntry, sort: EventQuery['sort'], processStatus: string): Key {
  switch (sort) {
    case 'id':
      return e.id;
    case 'file_path':
      return e.folder;
    case 'process_status':
      return processStatus;
    case 'event_source':
      return e.title ?? e.source;
    case 'created_at':
      return e.firstAt;
    case 'updated_at':
      return e.finishedAt ?? e.lastAt;
  }
}
function holdKey(h: Hold, sort: EventQuery['sort']): Key {
  switch (sort) {
    case 'id':
      return h.id;
    case 'file_path':
      return h.path;
    case 'process_status':
      return 'pending';
    case 'event_source':
      return `autopulse trigger ${h.trigger}`;
    case 'created_at':
      return h.createdAt;
    case 'updated_at':
      return h.updatedAt;
  }
}
const cmp = (a: Key, b: Key) => (typeof a === 'number' && typeof b === 'number' ? a - b : String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0);

/**
 * One page of /list with the open holds among the scans, in the query's order. With k holds in the query, the
 * page's rows are among the scans from `offset - k` to `offset + limit` and the holds; `readScans` reads that
 * window, so a long queue is never read whole.
 */
export async function pageWithHolds(
  q: EventQuery,
  holds: readonly Hold[],
  readScans: (q: EventQuery) => Promise<QueueEntry[]>,
  processStatus: (e: QueueEntry) => string,
): Promise<Array<{ scan: QueueEntry } | { hold: Hold }>> {
  const wanted = openHolds(holds).filter((h) => holdMatches(h, q));
  if (!wanted.length) return (await readScans(q)).map((scan) => ({ scan }));
  const start = Math.max(0, q.offset - wanted.length);
  const scans = await readScans({ ...q, offset: start, limit: q.limit + (q.offset - start) });
  const dir = q.asc ? 1 : -1;
  const rows = [
    ...scans.map((scan) => ({ key: scanKey(scan, q.sort, processStatus(scan)), tie: scan.id as Key, row: { scan } as const })),
    ...wanted.map((hold) => ({ key: holdKey(hold, q.sort), tie: hold.id as Key, row: { hold } as const })),
  ].sort((a, b) => dir * (cmp(a.key, b.key) || cmp(a.tie, b.tie)));
  return rows.slice(q.offset - start, q.offset - start + q.limit).map((r) => r.row);
}
