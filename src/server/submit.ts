import type { FastifyBaseLogger } from 'fastify';
import type { EnqueueStatus } from '../queue/store.ts';
import type { Intent } from '../triggers/intent.ts';
import { resolveIntent } from '../triggers/resolve.ts';
import type { AppDeps } from './app.ts';

export type PathResult =
  | { path: string; folder: string; status: EnqueueStatus; id: number }
  | { path: string; status: 'ignored'; reason: string };

export interface SubmitResult {
  status: EnqueueStatus | 'ignored';
  path: string | undefined;
  scans: PathResult[];
}

/**
 * A recognised scan intent from any HTTP entry (the secret URL, the JSON API): map and check its paths,
 * commit the scans through the intake, log one line. Throws PathProblem for a bad path.
 */
export async function submitIntent(
  intent: Extract<Intent, { kind: 'scan' }>,
  deps: Pick<AppDeps, 'config' | 'probe' | 'intake' | 'onQueued' | 'metrics'>,
  log: FastifyBaseLogger,
  client: string,
): Promise<SubmitResult> {
  const outcomes = resolveIntent(intent, deps.config, deps.probe);
  const toQueue = outcomes.filter((o) => 'request' in o);
  const results = await deps.intake.enqueue(toQueue.map((o) => o.request));
  deps.onQueued?.();

  let i = 0;
  const scans = outcomes.map((o): PathResult => {
    if ('ignored' in o) return { path: o.mapped, status: 'ignored', reason: `matched "${o.ignored}" in SERVER_IGNORE_LIST` };
    const r = results[i++]!;
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
      received: outcomes.map((o) => o.received),
      mapped: scans.map((s) => s.path),
      folders: scans.map((s) => ('folder' in s ? s.folder : undefined)),
      status: scans.map((s) => s.status),
    },
    'scan request',
  );
  const status = scans.some((s) => s.status === 'queued') ? 'queued' : scans.some((s) => s.status === 'merged') ? 'merged' : 'ignored';
  return { status, path: scans[0]?.path, scans };
}
