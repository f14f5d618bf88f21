import type { FastifyReply, FastifyRequest } from 'fastify';
import { PayloadError, UNKNOWN_SOURCE, type Intent } from '../intake/intent.ts';
import { resultPage } from './pages.ts';
import { PathProblem } from '../intake/resolve.ts';
import type { AppDeps } from './deps.ts';
import { withReadiness } from './readiness.ts';
import { sendError, wantsHtml } from './reply.ts';
import { submitIntent } from '../intake/submit.ts';

const EXPECTED =
  'expected eventType=Manual with filepath (form or JSON), eventType=Test, or a Sonarr/Radarr/Lidarr/Readarr webhook ' +
  '(JSON with eventType and series, movie, artist or author and their file paths)';

/** A client's field, safe to log: strings only, and short (bodies may be up to 1 MiB or deeply nested). */
function shown(value: unknown): string | undefined {
  if (typeof value !== 'string') return value === undefined ? undefined : `(${Array.isArray(value) ? 'array' : typeof value})`;
  return value.length > 100 ? `${value.slice(0, 100)}...` : value;
}

/** POST /<secret>: recognise the payload, map its paths, commit the scans, then answer. */
export async function handleScanPost(req: FastifyRequest, reply: FastifyReply, deps: AppDeps): Promise<unknown> {
  const body = req.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    deps.metrics?.request(UNKNOWN_SOURCE, 'rejected');
    return sendError(req, reply, 400, `empty or non-object body: ${EXPECTED}`);
  }
  let intent: Intent | undefined;
  try {
    for (const recognize of deps.recognizers) {
      intent = recognize(body as Record<string, unknown>);
      if (intent) break;
    }
  } catch (err) {
    if (err instanceof PayloadError) {
      deps.metrics?.request(err.source ?? UNKNOWN_SOURCE, 'rejected');
      req.log.warn({ client: req.ip, source: err.source ?? UNKNOWN_SOURCE, eventType: shown((body as Record<string, unknown>).eventType), error: err.message }, 'scan request rejected');
      return sendError(req, reply, 400, err.message);
    }
    throw err;
  }
  if (!intent) {
    deps.metrics?.request(UNKNOWN_SOURCE, 'rejected');
    req.log.warn({ client: req.ip, eventType: shown((body as Record<string, unknown>).eventType) }, 'unrecognised scan request');
    return sendError(req, reply, 400, `unrecognised payload: ${EXPECTED}`);
  }
  if (intent.kind === 'test') {
    deps.metrics?.request(intent.source, 'test');
    req.log.info({ client: req.ip, source: intent.source, event: 'Test' }, 'test request received');
    return reply.send({ status: 'ok', event: 'Test' });
  }
  if (intent.kind === 'ignore') {
    deps.metrics?.request(intent.source, 'ignored');
    req.log.info({ client: req.ip, source: intent.source, event: intent.event, reason: intent.reason }, 'nothing to scan for this event');
    return reply.send({ status: 'ignored', reason: intent.reason });
  }

  let result;
  try {
    result = await submitIntent(intent, deps, req.log, req.ip);
  } catch (err) {
    if (err instanceof PathProblem) {
      deps.metrics?.request(intent.source, 'rejected');
      req.log.warn({ client: req.ip, source: intent.source, event: intent.event, title: intent.title, error: err.message }, 'scan request rejected');
      return sendError(req, reply, 400, err.message);
    }
    throw err;
  }
  const answer = withReadiness(result, deps);
  if (wantsHtml(req)) {
    const first = result.scans[0];
    const reason = first && 'reason' in first ? first.reason : undefined;
    return reply.type('text/html; charset=utf-8').send(resultPage(result.status, result.path ?? '', reason, answer));
  }
  return reply.send(answer);
}
