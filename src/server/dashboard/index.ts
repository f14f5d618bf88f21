import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PluginDeps } from '../deps.ts';
import { onFirstUse } from '../first-use.ts';
import { manualScanOff } from '../reply.ts';

type SecretParams = { secret: string };

/**
 * The dashboard at GET /<secret>: manual scan form (plain HTML form, works without JavaScript), mapping
 * preview, queue, history and status. Off (401, as plex_autoscan) when SERVER_ALLOW_MANUAL_SCAN is false.
 * What answers its routes (handlers.ts: pages, data, event feed, script and style) is loaded with the first request.
 */
export async function dashboardPlugin(app: FastifyInstance, deps: PluginDeps): Promise<void> {
  const guard = deps.guards.secret;
  const enabled = async (req: FastifyRequest<{ Params: SecretParams }>, reply: FastifyReply) => {
    if (!deps.config.SERVER_ALLOW_MANUAL_SCAN) return manualScanOff(req, reply);
    return undefined;
  };
  const opts = { onRequest: guard, preHandler: enabled };
  // An open dashboard refreshes every few seconds; that must not use up SERVER_RATE_LIMIT meant for senders.
  const quiet = { ...opts, config: deps.quietRateLimit };
  const handlers = onFirstUse(async () => (await import('./handlers.ts')).dashboardHandlers(deps));
  app.addHook('preClose', async () => (await handlers.started())?.close());

  app.get<{ Params: SecretParams }>('/:secret', opts, async (req, reply) => (await handlers()).page(req, reply));
  app.get<{ Params: SecretParams }>('/:secret/parts', quiet, async (req, reply) => (await handlers()).parts(req, reply));
  app.get<{ Params: SecretParams }>('/:secret/events', quiet, async (req, reply) => (await handlers()).events(req, reply));
  app.get<{ Params: SecretParams }>('/:secret/dashboard.js', quiet, async (req, reply) => (await handlers()).script(req, reply));
  app.get<{ Params: SecretParams }>('/:secret/dashboard.css', quiet, async (req, reply) => (await handlers()).style(req, reply));
}
