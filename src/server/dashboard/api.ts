import type { FastifyInstance } from 'fastify';
import type { PluginDeps } from '../deps.ts';
import { onFirstUse } from '../first-use.ts';

type SecretParams = { secret: string };
type IdParams = SecretParams & { id: string };

/**
 * JSON API under /api/<secret>/ beside plex_autoscan's cmd API at /api/<secret>. It reads and edits the
 * queue; a scan it is asked for goes through the same checks and intake as a manual request. What answers its
 * routes (api-handlers.ts) is loaded with the first request.
 */
export async function apiPlugin(app: FastifyInstance, deps: PluginDeps): Promise<void> {
  const opts = { onRequest: deps.guards.secret };
  const handlers = onFirstUse(async () => (await import('./api-handlers.ts')).apiHandlers(deps));

  app.post<{ Params: SecretParams }>('/api/:secret/notify-test', opts, async (req, reply) => (await handlers()).notifyTest(req, reply));
  // Each NOTIFICATIONS destination's health: when its service last took a message, what waits, what was given up.
  app.get<{ Params: SecretParams }>('/api/:secret/notifications', { ...opts, config: deps.quietRateLimit }, async () => ({ notifications: deps.notifications?.() ?? [] }));
  app.get<{ Params: SecretParams }>('/api/:secret/queue', opts, async (req, reply) => (await handlers()).queue(req, reply));
  app.get<{ Params: SecretParams }>('/api/:secret/history', opts, async (req, reply) => (await handlers()).history(req, reply));
  app.get<{ Params: IdParams }>('/api/:secret/queue/:id/files', opts, async (req, reply) => (await handlers()).files(req, reply));
  // The preview asks while the user types; keep it out of SERVER_RATE_LIMIT's bucket, it changes nothing.
  app.get<{ Params: SecretParams }>('/api/:secret/map', { ...opts, config: deps.quietRateLimit }, async (req, reply) => (await handlers()).map(req, reply));
  app.post<{ Params: SecretParams }>('/api/:secret/scan', opts, async (req, reply) => (await handlers()).scan(req, reply));
  app.post<{ Params: IdParams }>('/api/:secret/queue/:id/retry', opts, async (req, reply) => (await handlers()).retry(req, reply));
  app.delete<{ Params: IdParams }>('/api/:secret/queue/:id', opts, async (req, reply) => (await handlers()).cancel(req, reply));
}
