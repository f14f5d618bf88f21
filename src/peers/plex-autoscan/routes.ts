import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps, PluginDeps } from '../../server/deps.ts';
import { crossSiteReason } from '../../server/browser.ts';
import { trustFunction } from '../../config/trust-proxy.ts';

const KNOWN = '(known: queue_count, reset_page_token)';

/** plex_autoscan's cmd API at /api/<secret>, by GET or POST, behind the secret. */
export async function plexAutoscanRoutes(app: FastifyInstance, deps: PluginDeps): Promise<void> {
  app.route<{ Params: { secret: string } }>({
    method: ['GET', 'POST'],
    url: '/api/:secret',
    onRequest: deps.guards.secret,
    errorHandler: cmdApiErrorHandler,
    handler: (req, reply) => cmdApi(req, reply, deps),
  });
}

/**
 * plex_autoscan's API at /api/<secret>: field `cmd` from the query, a form or JSON. Every answer is 200 with
 * JSON, an error included (`{"error": "..."}`), as plex_autoscan's api_call answers (scan.py:242-276): its
 * clients read the JSON, not the status.
 */
export async function cmdApi(req: FastifyRequest, reply: FastifyReply, deps: AppDeps): Promise<unknown> {
  const fromBody = req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {};
  const fromQuery = (req.query ?? {}) as Record<string, unknown>;
  const cmd = fromBody.cmd ?? fromQuery.cmd;
  if (typeof cmd !== 'string' || cmd === '') {
    req.log.warn({ client: req.ip }, 'API call without cmd');
    return { error: `no cmd parameter was supplied ${KNOWN}` };
  }
  req.log.info({ client: req.ip, cmd }, 'API call');
  try {
    switch (cmd.toLowerCase()) {
      case 'queue_count':
        return { queue_count: await deps.store.countOpen() };
      case 'reset_page_token': {
        // plex_autoscan's scripts send this by GET, so GET stays; but a GET a browser sends from another
        // site's page (an <img>) is refused 403, as a cross-site POST is (browser.ts).
        const crossSite = crossSiteReason(req, trustFunction(deps.config.SERVER_TRUST_PROXY) !== false);
        if (crossSite) return reply.code(403).header('connection', 'close').send({ error: crossSite });
        if (!deps.drive?.enabled()) return { error: 'drive monitoring is off (GOOGLE.ENABLED is false), so there is no page token to reset' };
        await deps.drive.resetPageToken();
        return { success: true, message: 'drive page token reset: monitoring restarts from the current state' };
      }
      default:
        return { error: `unknown cmd: ${cmd} ${KNOWN}` };
    }
  } catch (err) {
    req.log.error({ err, cmd }, 'API call failed');
    return { error: `${cmd} failed: ${(err as Error).message}` };
  }
}

/**
 * A body fastify cannot read (bad JSON, an unknown content type) is answered like any other API error: 200
 * with `{"error": ...}` (Flask read such a body as no data, scan.py:246-256). A body over the size limit
 * keeps its 413.
 */
export function cmdApiErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err.statusCode === undefined || err.statusCode >= 500 || err.statusCode === 413) throw err;
  req.log.warn({ client: req.ip, error: err.message }, 'API call with a body that cannot be read');
  return reply.code(200).send({ error: `the request body cannot be read: ${err.message}` });
}
