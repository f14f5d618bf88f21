import { triggerRouting } from '../../config/named-targets.ts';
import type { TriggerRoute } from '../../config/targets.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Recognizer, ScanIntent } from '../../intake/intent.ts';
import { PayloadError } from '../../intake/intent.ts';
import { recognizeAutoscanManual } from '../../triggers/manual/recognize.ts';
import { autoscanManualPage, resultPage } from '../../server/pages.ts';
import { PathProblem } from '../../intake/resolve.ts';
import type { PluginDeps } from '../../server/deps.ts';
import { manualScanOff, sendError, wantsHtml } from '../../server/reply.ts';
import { handleScanPost } from '../../triggers/manual/routes.ts';
import { submitIntent } from '../../intake/submit.ts';
import { withReadiness } from '../../server/readiness.ts';
import { placeRewriter } from '../../paths/rewrite.ts';
import { cleanFolder } from '../../paths/mapping.ts';
import { rewriteIntent } from '../../triggers/rewrite.ts';
import { aTrainRewriter, recognizeATrain } from './a-train.ts';

/** Methods chi answers 405 on a route registered for POST only (cmd/autoscan/router.go:88-115 uses r.Post). */
const NOT_ALLOWED = ['GET', 'HEAD', 'DELETE', 'PATCH'] as const;

/**
 * autoscan's HTTP surface, so an autoscan user changes only host and port: GET /health, the media
 * managers' webhooks at POST /triggers/<name> (names and priorities from SERVER_AUTOSCAN_TRIGGERS) and
 * the manual trigger at /triggers/manual?dir=..., A-Train at POST /triggers/a-train/{drive}. These URLs carry
 * no secret, so the /triggers/ routes are served only when SERVER_AUTH_USER and SERVER_AUTH_PASS are both
 * set, and always ask for Basic auth. Each trigger's own rules (REWRITE) take its paths to the relay's path.
 */
export async function autoscanRoutes(app: FastifyInstance, deps: PluginDeps): Promise<void> {
  const { config } = deps;
  app.get('/health', { config: { rateLimit: false } }, async () => ({ status: 'ok' }));

  // The credentials and the triggers are read on each request: `scanrelay setup` may change them in a running
  // relay (server/setup-api.ts). Without both credentials the routes are off.
  const routesOff = () => !config.SERVER_AUTH_USER || !config.SERVER_AUTH_PASS;
  // Checked before the body is read, and failures count in the same bucket as a wrong secret's (guard.ts).
  const requireAuth: typeof deps.guards.basic = (req, reply, done) => {
    if (routesOff()) {
      reply.header('connection', 'close');
      sendError(req, reply, 404, "autoscan's /triggers/ routes are off: they carry no secret, so they need SERVER_AUTH_USER and SERVER_AUTH_PASS set");
      return;
    }
    deps.guards.basic(req, reply, done);
  };
  app.all('/triggers/*', { onRequest: requireAuth }, async (req, reply) => sendError(req, reply, 404, 'not found'));
  const manual = config.SERVER_AUTOSCAN_TRIGGERS.manual;
  const manualRewrite = placeRewriter(manual?.REWRITE);
  const manualRouting = triggerRouting(config, manual as TriggerRoute | undefined);
  const notAllowed = (allow: string) => async (req: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', allow);
    return sendError(req, reply, 405, `${req.method} is not allowed here: use ${allow}`);
  };

  const manualScan = async (req: FastifyRequest<{ Querystring: { dir?: string | string[]; action?: string | string[] } }>, reply: FastifyReply) => {
    // autoscan reads the folders from the query string; its page (and ours) posts them as a form field.
    const body = req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {};
    const malformed = malformedQuery(req.raw.url ?? '');
    if (malformed) {
      deps.metrics?.request('Manual', 'rejected');
      return sendError(req, reply, 400, `the query parameter ${malformed} is not valid percent-encoding (each % needs two hex digits, and together they must spell UTF-8)`);
    }
    const dirs = [req.query.dir, body.dir].flat().filter((d) => d !== undefined);
    let intent: ScanIntent;
    try {
      intent = recognizeAutoscanManual(dirs, req.query.action ?? body.action);
    } catch (err) {
      if (!(err instanceof PayloadError)) throw err;
      deps.metrics?.request('Manual', 'rejected');
      return sendError(req, reply, 400, err.message);
    }
    // autoscan cleans each folder (path.Clean) before the trigger's rewrite (manual.go:78).
    intent = rewriteIntent({ ...intent, paths: intent.paths.map((p) => ({ ...p, path: cleanFolder(p.path) })) }, manualRewrite);
    if (manual && manual.PRIORITY !== 0) intent.priority = manual.PRIORITY;
    // The request's own `action=` wins over the trigger's ACTION.
    intent = { ...intent, ...manualRouting, ...(intent.action ? { action: intent.action } : {}) };
    return submitAnswer(intent, req, reply, deps);
  };
  // chi serves the manual trigger with and without the trailing slash (router.go:72-79 mounts it at /manual).
  for (const url of ['/triggers/manual', '/triggers/manual/']) {
    app.get(url, { onRequest: requireAuth }, async (req, reply) => {
      if (!config.SERVER_ALLOW_MANUAL_SCAN) return manualScanOff(req, reply);
      return reply.type('text/html; charset=utf-8').send(autoscanManualPage());
    });
    // autoscan's manual handler scans on any method but GET and HEAD (triggers/manual/manual.go:56-64).
    app.route<{ Querystring: { dir?: string | string[]; action?: string | string[] } }>({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url, onRequest: requireAuth, handler: manualScan });
  }

  const aTrain = config.A_TRAIN;
  const aTrainRewrite = aTrainRewriter(aTrain);
  const aTrainRouting = triggerRouting(config, aTrain);
  app.post<{ Params: { drive: string } }>('/triggers/a-train/:drive', { onRequest: requireAuth }, async (req, reply) => {
    let intent;
    try {
      intent = recognizeATrain(req.body, req.params.drive, aTrainRewrite, aTrain.PRIORITY);
    } catch (err) {
      if (!(err instanceof PayloadError)) throw err;
      deps.metrics?.request('A-Train', 'rejected');
      return sendError(req, reply, 400, err.message);
    }
    if (!intent) return reply.send({ status: 'ignored', reason: 'the event names no folder' });
    return submitAnswer({ ...intent, ...aTrainRouting }, req, reply, deps);
  });
  app.route({ method: [...NOT_ALLOWED], url: '/triggers/a-train/:drive', onRequest: requireAuth, handler: notAllowed('POST') });

  /** A trigger's route as its settings are now; undefined for a name SERVER_AUTOSCAN_TRIGGERS lacks. */
  const triggerDeps = (name: string): PluginDeps | undefined => {
    if (name === 'manual' || name === 'a-train' || !Object.hasOwn(config.SERVER_AUTOSCAN_TRIGGERS, name)) return undefined;
    const trigger = config.SERVER_AUTOSCAN_TRIGGERS[name]!;
    const rewrite = placeRewriter(trigger.REWRITE);
    const routing = triggerRouting(config, trigger as TriggerRoute);
    // The same recognizers and intake as POST /<secret>; the trigger's rewrite and priority are added.
    const recognizers: Recognizer[] = deps.recognizers.map((recognize) => (body) => {
      let intent = recognize(body);
      // autoscan answers 400 to a Lidarr import that lists no track file (triggers/lidarr/lidarr.go:75-79).
      if (intent?.kind === 'ignore' && intent.source === 'Lidarr' && /^download$/i.test(intent.event) && emptyList(body.trackFiles)) {
        throw new PayloadError('Required fields are missing: a Lidarr Download needs trackFiles', 'Lidarr');
      }
      intent = intent && rewriteIntent(intent, rewrite);
      if (intent?.kind === 'scan') Object.assign(intent, { priority: trigger.PRIORITY }, routing);
      return intent;
    });
    return { ...deps, recognizers };
  };
  app.route<{ Params: { name: string } }>({
    // autoscan serves POST; the managers' Webhook connection can also send PUT.
    method: ['POST', 'PUT'],
    url: '/triggers/:name',
    onRequest: requireAuth,
    handler: (req, reply) => {
      const routeDeps = triggerDeps(req.params.name);
      return routeDeps ? handleScanPost(req, reply, routeDeps) : sendError(req, reply, 404, 'not found');
    },
  });
  const allowed = notAllowed('POST, PUT');
  app.route<{ Params: { name: string } }>({
    method: [...NOT_ALLOWED],
    url: '/triggers/:name',
    onRequest: requireAuth,
    handler: (req, reply) => (triggerDeps(req.params.name) ? allowed(req, reply) : sendError(req, reply, 404, 'not found')),
  });
}

/**
 * The first query parameter whose percent-encoding is broken (`%E0%A4%A`), by name, or undefined. The query
 * parser keeps such a value literally, which would scan a folder nobody named.
 */
export function malformedQuery(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  for (const pair of url.slice(q + 1).split('&')) {
    const [name = '', value = ''] = pair.split(/=(.*)/s);
    for (const part of [name, value]) {
      try {
        decodeURIComponent(part.replace(/\+/g, ' '));
      } catch {
        return JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}...` : name);
      }
    }
  }
  return undefined;
}

const emptyList = (v: unknown) => v === undefined || v === null || (Array.isArray(v) && v.length === 0);

async function submitAnswer(intent: ScanIntent, req: FastifyRequest, reply: FastifyReply, deps: PluginDeps): Promise<unknown> {
  try {
    const result = withReadiness(await submitIntent(intent, deps, req.log, req.ip), deps);
    if (wantsHtml(req)) return reply.type('text/html; charset=utf-8').send(resultPage(result.status, result.path ?? '', undefined, result));
    return reply.send(result);
  } catch (err) {
    if (!(err instanceof PathProblem)) throw err;
    deps.metrics?.request(intent.source, 'rejected');
    return sendError(req, reply, 400, err.message);
  }
}
