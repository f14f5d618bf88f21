import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PayloadError, UNKNOWN_SOURCE, type Intent } from '../../intake/intent.ts';
import { manualScanPage, resultPage } from '../../server/pages.ts';
import { PathProblem } from '../../intake/resolve.ts';
import type { AppDeps, PluginDeps } from '../../server/deps.ts';
import { withReadiness } from '../../server/readiness.ts';
import { manualScanOff, sendError, wantsHtml } from '../../server/reply.ts';
import { submitIntent } from '../../intake/submit.ts';

/*
 * The manual trigger's HTTP edge (server layer, as a peer's routes.ts: .dependency-cruiser.cjs TRIGGER_FILES).
 * POST /<secret> is plex_autoscan's one URL for the form and the *arrs' webhooks alike, and fastify registers a
 * path once: the body, not the path, says which trigger sent it. So the door is here, where the manual page posts,
 * and tries the recognizers it is given (deps.recognizers: manual, the *arrs', Test); triggers/arr has no route.
 */

/** The managers' Webhook connection sends POST, or PUT when the user picks it. */
export async function scanDoorRoutes(app: FastifyInstance, deps: PluginDeps): Promise<void> {
  app.route<{ Params: { secret: string } }>({
    method: ['POST', 'PUT'],
    url: '/:secret',
    onRequest: deps.guards.secret,
    handler: (req, reply) => handleScanPost(req, reply, deps),
  });
}

/**
 * GET /<secret>: the bare manual page, unless a plugin (the dashboard) serves this URL; so it is registered
 * after the plugins.
 */
export async function manualPageRoute(app: FastifyInstance, deps: PluginDeps): Promise<void> {
  if (app.hasRoute({ method: 'GET', url: '/:secret' })) return;
  const { config } = deps;
  app.get<{ Params: { secret: string } }>('/:secret', { onRequest: deps.guards.secret }, async (req, reply) => {
    if (!config.SERVER_ALLOW_MANUAL_SCAN) return manualScanOff(req, reply);
    return reply.type('text/html; charset=utf-8').send(manualScanPage());
  });
}

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
