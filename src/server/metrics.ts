import type { FastifyInstance } from 'fastify';
import type { PluginDeps } from './deps.ts';

/**
 * GET /metrics in Prometheus text format. Off (404) when SERVER_METRICS is false. Not under the secret
 * URL, as scrapers expect a fixed path; when SERVER_AUTH_USER/PASS are set it asks for them like every
 * other route but /healthz.
 */
export async function metricsPlugin(app: FastifyInstance, deps: PluginDeps): Promise<void> {
  const { config, metrics } = deps;
  if (!config.SERVER_METRICS || !metrics) return;
  // Failed Basic auth counts in the failure bucket; scrapes count in a bucket of their own.
  app.get('/metrics', { onRequest: deps.guards.basic, config: deps.quietRateLimit }, async (_req, reply) => {
    return reply.type(metrics.contentType).send(await metrics.text());
  });
}
