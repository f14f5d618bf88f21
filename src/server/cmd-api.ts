import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from './deps.ts';

/** plex_autoscan's API at /api/<secret>: field `cmd` from the query, a form or JSON. */
export async function cmdApi(req: FastifyRequest, reply: FastifyReply, deps: AppDeps): Promise<unknown> {
  const fromBody = req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {};
  const fromQuery = (req.query ?? {}) as Record<string, unknown>;
  const cmd = fromBody.cmd ?? fromQuery.cmd;
  if (typeof cmd !== 'string' || cmd === '') {
    return reply.code(400).send({ error: 'no cmd parameter was supplied (known: queue_count, reset_page_token)' });
  }
  req.log.info({ client: req.ip, cmd }, 'API call');
  switch (cmd.toLowerCase()) {
    case 'queue_count':
      return { queue_count: deps.store.countOpen() };
    case 'reset_page_token':
      if (!deps.drive?.enabled()) {
        return reply.code(409).send({ error: 'drive monitoring is off (GOOGLE.ENABLED is false), so there is no page token to reset' });
      }
      await deps.drive.resetPageToken();
      return { success: true, message: 'drive page token reset: monitoring restarts from the current state' };
    default:
      return reply.code(400).send({ error: `unknown cmd: ${cmd} (known: queue_count, reset_page_token)` });
  }
}
