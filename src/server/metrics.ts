import type { FastifyInstance } from 'fastify';
import { sendError, type AppDeps } from './app.ts';
import { basicAuthMatches } from './secret.ts';

/**
 * GET /metrics in Prometheus text format. Off (404) when SERVER_METRICS is false. Not under the secret
 * URL, as scrapers expect a fixed path; when SERVER_AUTH_USER/PASS are set it asks for them like every
 * other route but /healthz.
 */
export async function metricsPlugin(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { config, metrics } = deps;
  if (!config.SERVER_METRICS || !metrics) return;
  const needsAuth = Boolean(config.SERVER_AUTH_USER || config.SERVER_AUTH_PASS);
  app.get('/metrics', { config: { rateLimit: false } }, async (req, reply) => {
    if (needsAuth && !basicAuthMatches(req.headers.authorization, config.SERVER_AUTH_USER, config.SERVER_AUTH_PASS)) {
      reply.header('WWW-Authenticate', 'Basic realm="scanrelay", charset="UTF-8"');
      return sendError(req, reply, 401, 'authentication required');
    }
    return reply.type(metrics.contentType).send(await metrics.text());
  });
}
