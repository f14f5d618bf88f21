import type { Config } from '../config/schema.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { FolderProbe } from '../paths/folder.ts';
import type { QueueIntake } from '../queue/intake.ts';
import type { EnqueueStatus } from '../queue/store.ts';
import type { LibraryRoots } from '../targets/library-roots.ts';
import type { Intent } from './intent.ts';
import { checkFolderCount, PathProblem, requestsPerFolder, resolveIntent, type PathOutcome } from './resolve.ts';

/** What the intake needs from the relay: the config, the queue's group commit, and optional checks and counters. */
export interface IntakeDeps {
  config: Config;
  intake: QueueIntake;
  probe?: FolderProbe;
  /** Library roots of the enabled targets: a folder in none of them is refused (built where the targets are). */
  libraries?: Pick<LibraryRoots, 'check'>;
  metrics?: Pick<Metrics, 'request'>;
  /** Called after a commit (wakes the scheduler). */
  onQueued?: () => void;
}

/** The request's logger (fastify's per-request logger or the relay's). */
export type IntakeLog = Pick<Logger, 'info' | 'warn'>;

export type PathResult =
  | { path: string; folder: string; status: EnqueueStatus; id: number }
  | { path: string; status: 'ignored'; reason: string };

export interface SubmitResult {
  status: EnqueueStatus | 'ignored';
  path: string | undefined;
  scans: PathResult[];
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Paths listed in the request's log line; a 25,000-file import logs the first ones and the count. */
const LOGGED_PATHS = 50;
const firstFew = <T>(list: T[]): T[] => (list.length > LOGGED_PATHS ? list.slice(0, LOGGED_PATHS) : list);

/**
 * A recognised scan intent from any HTTP entry (the secret URL, the JSON API): map and check its paths,
 * commit the scans through the intake, log one line. Throws PathProblem for a bad path.
 */
export async function submitIntent(
  intent: Extract<Intent, { kind: 'scan' }>,
  deps: IntakeDeps,
  log: IntakeLog,
  client: string,
): Promise<SubmitResult> {
  // A large import is handled in steps, each in its own turn of the event loop, so other requests (and
  // /healthz) are answered in between.
  if (intent.paths.length > 100) await yieldToLoop();
  const outcomes = await resolveInTurns(intent, deps);
  const { requests, indexOf } = requestsPerFolder(outcomes);
  if (deps.libraries && requests.length) await checkLibraries(requests.map((r) => r.folder), deps.libraries, log, client);
  if (intent.paths.length > 100) await yieldToLoop();
  const results = await deps.intake.enqueue(requests);
  deps.onQueued?.();
  // The commit ran in a turn of its own; the answer for every path gets another.
  if (intent.paths.length > 100) await yieldToLoop();

  const scans = outcomes.map((o, n): PathResult => {
    if ('ignored' in o) return { path: o.mapped, status: 'ignored', reason: `matched "${o.ignored}" in SERVER_IGNORE_LIST` };
    const r = results[indexOf[n]!]!;
    return { path: o.mapped, folder: r.folder, status: r.status, id: r.id };
  });
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
      ...(scans.length > LOGGED_PATHS ? { paths: scans.length } : {}),
    },
    'scan request',
  );
  const status = scans.some((s) => s.status === 'queued') ? 'queued' : scans.some((s) => s.status === 'merged') ? 'merged' : 'ignored';
  return { status, path: scans[0]?.path, scans };
}

/** Paths mapped in one turn of the event loop: a 25,000-file import is mapped in slices, other requests in between. */
const RESOLVE_SLICE = 2_000;

async function resolveInTurns(intent: Extract<Intent, { kind: 'scan' }>, deps: Pick<IntakeDeps, 'config' | 'probe'>): Promise<PathOutcome[]> {
  if (intent.paths.length <= RESOLVE_SLICE) return resolveIntent(intent, deps.config, deps.probe);
  checkFolderCount(intent.paths);
  const outcomes: PathOutcome[] = [];
  for (let from = 0; from < intent.paths.length; from += RESOLVE_SLICE) {
    if (from > 0) await yieldToLoop();
    for (const o of resolveIntent({ ...intent, paths: intent.paths.slice(from, from + RESOLVE_SLICE) }, deps.config, deps.probe)) outcomes.push(o);
  }
  return outcomes;
}

/**
 * plex_autoscan dropped a path in no Plex section (scan.py start_scan). Here such a folder (a manual scan of
 * "/" or of the folder above the libraries) is refused with the roots named, and nothing of the request is
 * queued, so it can never take in the scans queued below it. When a server's libraries cannot be read
 * (it is down), the folder is accepted; the queue then never merges it across a known root.
 */
async function checkLibraries(folders: string[], libraries: NonNullable<IntakeDeps['libraries']>, log: IntakeLog, client: string): Promise<void> {
  const { outside, roots, unknown } = await libraries.check(folders);
  if (outside.length === 0) return;
  if (unknown.length) {
    log.warn({ client, folders: outside, unknownLibraries: unknown, roots }, 'folder is in no known library, but some libraries cannot be read now; queued anyway');
    return;
  }
  throw new PathProblem(
    `"${outside[0]}" is in no library of an enabled media server (library roots: ${roots.join(', ') || 'none'}); nothing was queued. ` +
      'Scan a folder inside a library, or check SERVER_PATH_MAPPINGS',
  );
}
