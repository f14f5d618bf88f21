import type { Config } from '../config/schema.ts';
import type { Source } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { FolderProbe } from '../paths/folder.ts';
import type { QueueIntake } from '../queue/door.ts';
import type { EnqueueStatus } from '../queue/store.ts';
import type { LibraryRoots } from '../targets/library-roots.ts';
import type { ScanIntent } from './intent.ts';
import { checkFolderCount, PathProblem, requestsPerFolder, resolveIntent, type PathOutcome } from './resolve.ts';

/** What the intake needs from the relay: the config, the queue's group commit, and optional checks and counters. */
export interface IntakeDeps {
  config: Config;
  intake: QueueIntake;
  probe?: FolderProbe;
  /** Library roots of the enabled targets: a folder in none of them is refused (built where the targets are). */
  libraries?: Pick<LibraryRoots, 'check'>;
  metrics?: Pick<Metrics, 'request'>;
}

/** The request's logger (fastify's per-request logger or the relay's). */
export type IntakeLog = Pick<Logger, 'info' | 'warn'>;

/** What a stored request came to (a request no target takes is answered `ignored`, with why). */
type StoredStatus = Exclude<EnqueueStatus, 'unrouted'>;

export type PathResult =
  | { path: string; folder: string; status: StoredStatus; id: number; due: string }
  | { path: string; status: 'ignored'; reason: string };

export interface SubmitResult {
  status: StoredStatus | 'ignored';
  path: string | undefined;
  /** When the first of its scans is due (ISO time), and in how many seconds: what the requester waits for. */
  due?: string;
  dueIn?: number;
  scans: PathResult[];
}

/** Why a request went to no target. */
const NO_ROUTE = "the trigger's TARGETS or EXCLUDE_TARGETS leave none, or each target's INCLUDE/EXCLUDE refuse its path (docs/targets.md)";

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Paths listed in the request's log line; a 25,000-file import logs the first ones and the count. */
const LOGGED_PATHS = 50;
const firstFew = <T>(list: T[]): T[] => (list.length > LOGGED_PATHS ? list.slice(0, LOGGED_PATHS) : list);

/**
 * A recognised scan intent from any HTTP entry (the secret URL, the JSON API): map and check its paths,
 * commit the scans through the intake, log one line. Throws PathProblem for a bad path.
 */
export async function submitIntent(
  intent: ScanIntent,
  deps: IntakeDeps,
  log: IntakeLog,
  client: string,
  /** Queue values written in the same commit as the scans, and those that must be there for it (QueueIntake.enqueue). */
  commit: { meta?: Readonly<Record<string, string | null>>; expect?: Readonly<Record<string, string | null>> } = {},
): Promise<SubmitResult> {
  // A large import is handled in steps, each in its own turn of the event loop, so other requests (and
  // /healthz) are answered in between.
  if (intent.paths.length > 100) await yieldToLoop();
  const resolved = await resolveInTurns(intent, deps);
  const outcomes = deps.libraries ? await checkLibraries(resolved, intent.source, deps.libraries, log, client) : resolved;
  const { requests, indexOf } = requestsPerFolder(outcomes);
  if (intent.paths.length > 100) await yieldToLoop();
  // The intake's commit sets the scheduler's timer for the scans' due time (server/run.ts).
  const results = await deps.intake.enqueue(requests, commit.meta, commit.expect);
  // The commit ran in a turn of its own; the answer for every path gets another.
  if (intent.paths.length > 100) await yieldToLoop();

  const scans = outcomes.map((o, n): PathResult => {
    if ('ignored' in o) return { path: o.mapped, status: 'ignored', reason: o.reason };
    const r = results[indexOf[n]!]!;
    if (r.status === 'unrouted') return { path: o.mapped, status: 'ignored', reason: `"${r.folder}" goes to no target: ${NO_ROUTE}` };
    return { path: o.mapped, folder: r.folder, status: r.status, id: r.id, due: new Date(r.dueAt).toISOString() };
  });
  const stored = results.filter((r) => r.status !== 'unrouted');
  const firstDue = stored.length ? Math.min(...stored.map((r) => r.dueAt)) : undefined;
  const due = firstDue === undefined ? {} : { due: new Date(firstDue).toISOString(), dueIn: Math.max(0, Math.round((firstDue - Date.now()) / 1000)) };
  deps.metrics?.request(intent.source, 'ignored', scans.filter((s) => s.status === 'ignored').length);
  log.info(
    {
      client,
      source: intent.source,
      event: intent.event,
      title: intent.title,
      ids: intent.ids,
      received: firstFew(outcomes.map((o) => o.received)),
      mapped: firstFew(scans.map((s) => s.path)),
      folders: firstFew(scans.map((s) => ('folder' in s ? s.folder : undefined))),
      status: firstFew(scans.map((s) => s.status)),
      // Which targets the trigger named (absent: all), and an item action: the log says where it goes and what for.
      ...(intent.targets ? { targets: intent.targets } : {}),
      ...(intent.action !== undefined && intent.action !== 'scan' ? { action: intent.action } : {}),
      ...(scans.length > LOGGED_PATHS ? { paths: scans.length } : {}),
      ...due,
    },
    'scan request',
  );
  const status = scans.some((s) => s.status === 'queued') ? 'queued' : scans.some((s) => s.status === 'merged') ? 'merged' : 'ignored';
  return { status, path: scans[0]?.path, ...due, scans };
}

/** Paths mapped in one turn of the event loop: a 25,000-file import is mapped in slices, other requests in between. */
const RESOLVE_SLICE = 2_000;

async function resolveInTurns(intent: ScanIntent, deps: Pick<IntakeDeps, 'config' | 'probe' | 'libraries'>): Promise<PathOutcome[]> {
  // A file or a folder: where the path lies in a library the media server names, the disk says which
  // (the roots are cached; a server that is down adds none).
  const roots = deps.libraries ? (await deps.libraries.check([])).roots : [];
  if (intent.paths.length <= RESOLVE_SLICE) return resolveIntent(intent, deps.config, deps.probe, roots);
  checkFolderCount(intent.paths);
  const outcomes: PathOutcome[] = [];
  for (let from = 0; from < intent.paths.length; from += RESOLVE_SLICE) {
    if (from > 0) await yieldToLoop();
    for (const o of resolveIntent({ ...intent, paths: intent.paths.slice(from, from + RESOLVE_SLICE) }, deps.config, deps.probe, roots)) outcomes.push(o);
  }
  return outcomes;
}

/**
 * plex_autoscan dropped a path in no Plex section (scan.py:115-118 start_scan) and still answered the webhook
 * 200 "OK" (scan.py:469). A webhook's folder in no library of an enabled server is answered `ignored` with the
 * reason (200), and its other folders are queued. A manual request for such a folder (a scan of "/" or of the
 * folder above the libraries) is refused with the roots named, and nothing of it is queued, so it can never take
 * in the scans queued below it. When a server's libraries cannot be read (it is down), the folder is accepted;
 * the queue then never merges it across a known root.
 */
async function checkLibraries(
  outcomes: PathOutcome[],
  source: Source,
  libraries: NonNullable<IntakeDeps['libraries']>,
  log: IntakeLog,
  client: string,
): Promise<PathOutcome[]> {
  const folders = [...new Set(outcomes.flatMap((o) => ('folder' in o ? [o.folder] : [])))];
  if (folders.length === 0) return outcomes;
  const { outside, roots, unknown } = await libraries.check(folders);
  if (outside.length === 0) return outcomes;
  if (unknown.length) {
    log.warn({ client, folders: outside, unknownLibraries: unknown, roots }, 'folder is in no known library, but some libraries cannot be read now; queued anyway');
    return outcomes;
  }
  const where = `library roots: ${roots.join(', ') || 'none'}`;
  if (!ARR_SOURCES.has(source)) {
    throw new PathProblem(`"${outside[0]}" is in no library of an enabled media server (${where}); nothing was queued. Scan a folder inside a library, or check SERVER_PATH_MAPPINGS`);
  }
  log.warn({ client, source, folders: outside, roots }, 'webhook folder is in no library of an enabled media server: not scanned (answered 200, as plex_autoscan did)');
  const out = new Set(outside);
  return outcomes.map((o) =>
    'folder' in o && out.has(o.folder)
      ? { received: o.received, mapped: o.mapped, ignored: o.folder, reason: `"${o.folder}" is in no library of an enabled media server (${where}): not scanned; check SERVER_PATH_MAPPINGS` }
      : o,
  );
}

/** The media managers: their webhooks are answered 200 whatever plex_autoscan made of them (scan.py:469). */
const ARR_SOURCES: ReadonlySet<Source> = new Set(['Sonarr', 'Radarr', 'Lidarr', 'Readarr']);
