import type { FastifyInstance } from 'fastify';
import type { Intent, Recognizer } from '../intake/intent.ts';
import { PayloadError } from '../intake/intent.ts';
import { recognizeAutoscanManual } from '../triggers/manual/recognize.ts';
import { autoscanManualPage, resultPage } from './pages.ts';
import { PathProblem } from '../intake/resolve.ts';
import type { PluginDeps } from './deps.ts';
import { manualScanOff, sendError, wantsHtml } from './reply.ts';
import { handleScanPost } from './scan-post.ts';
import { submitIntent } from '../intake/submit.ts';
import { withReadiness } from './readiness.ts';

/**
 * autoscan's HTTP surface, so an autoscan user changes only host and port: GET /health, the media
 * managers' webhooks at POST /triggers/<name> (names and priorities from SERVER_AUTOSCAN_TRIGGERS) and
 * the manual trigger at /triggers/manual?dir=... These URLs carry no secret, so the /triggers/ routes are
 * served only when SERVER_AUTH_USER and SERVER_AUTH_PASS are both set, and always ask for Basic auth.
 */
export async function autoscanRoutes(app: FastifyInstance, deps: PluginDeps): Promise<void> {
  const { config } = deps;
  app.get('/health', { config: { rateLimit: false } }, async () => ({ status: 'ok' }));

  const triggers = Object.entries(config.SERVER_AUTOSCAN_TRIGGERS);
  if (!config.SERVER_AUTH_USER || !config.SERVER_AUTH_PASS) {
    app.all('/triggers/*', async (req, reply) =>
      sendError(req, reply, 404, "autoscan's /triggers/ routes are off: they carry no secret, so they need SERVER_AUTH_USER and SERVER_AUTH_PASS set"),
    );
    return;
  }

  // Checked before the body is read, and failures count in the same bucket as a wrong secret's (guard.ts).
  const requireAuth = deps.guards.basic;
  const manualPriority = config.SERVER_AUTOSCAN_TRIGGERS.manual;

  app.get('/triggers/manual', { onRequest: requireAuth }, async (req, reply) => {
    if (!config.SERVER_ALLOW_MANUAL_SCAN) return manualScanOff(req, reply);
    return reply.type('text/html; charset=utf-8').send(autoscanManualPage());
  });
  app.post<{ Querystring: { dir?: string | string[] } }>('/triggers/manual', { onRequest: requireAuth }, async (req, reply) => {
    // autoscan reads the folders from the query string; its page (and ours) posts them as a form field.
    const body = req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {};
    const dirs = [req.query.dir, body.dir].flat().filter((d) => d !== undefined);
    let intent: Extract<Intent, { kind: 'scan' }>;
    try {
      intent = recognizeAutoscanManual(dirs);
    } catch (err) {
      if (!(err instanceof PayloadError)) throw err;
      deps.metrics?.request('Manual', 'rejected');
      return sendError(req, reply, 400, err.message);
    }
    if (manualPriority !== undefined) intent.priority = manualPriority;
    try {
      const result = withReadiness(await submitIntent(intent, deps, req.log, req.ip), deps);
      if (wantsHtml(req)) return reply.type('text/html; charset=utf-8').send(resultPage(result.status, result.path ?? '', undefined, result));
      return reply.send(result);
    } catch (err) {
      if (!(err instanceof PathProblem)) throw err;
      deps.metrics?.request('Manual', 'rejected');
      return sendError(req, reply, 400, err.message);
    }
  });

  for (const [name, priority] of triggers) {
    if (name === 'manual') continue;
    // The same recognizers and intake as POST /<secret>; only the trigger's priority is added.
    const recognizers: Recognizer[] = deps.recognizers.map((recognize) => (body) => {
      const intent = recognize(body);
      if (intent?.kind === 'scan') intent.priority = priority;
      return intent;
    });
    const routeDeps = { ...deps, recognizers };
    app.route({
      // autoscan serves POST; the managers' Webhook connection can also send PUT.
      method: ['POST', 'PUT'],
      url: `/triggers/${name}`,
      onRequest: requireAuth,
      handler: (req, reply) => handleScanPost(req, reply, routeDeps),
    });
  }
}
