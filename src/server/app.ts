import formbody from '@fastify/formbody';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Config } from '../config/schema.ts';
import type { Target } from '../core/scan.ts';
import type { DriveStatus } from '../core/status.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { FolderProbe } from '../paths/folder.ts';
import type { QueueIntake } from '../queue/intake.ts';
import type { QueueStore } from '../queue/store.ts';
import type { Recognizer } from '../triggers/intent.ts';
import { errorPage, manualScanPage } from '../triggers/manual/page.ts';
import { cmdApi, type DriveControl } from './cmd-api.ts';
import { handleScanPost } from './scan-post.ts';
import { basicAuthMatches, makeSecretCheck } from './secret.ts';

export interface AppDeps {
  config: Config;
  log: Logger;
  intake: QueueIntake;
  store: QueueStore;
  /** Payload recognizers tried in order on POST /<secret>. */
  recognizers: Recognizer[];
  drive?: DriveControl;
  probe?: FolderProbe;
  /** Called after a scan request was committed or made due again (wakes the scheduler). */
  onQueued?: () => void;
  /** The enabled targets, for status displays and the mapping preview (never called to scan from here). */
  targets?: readonly Target[];
  metrics?: Metrics;
  /** The drive monitor's state; absent when there is no drive monitor ("off"). */
  driveStatus?: () => DriveStatus;
  /** Extra plugins (dashboard, metrics) registered with the same deps. */
  plugins?: Array<(app: FastifyInstance, deps: AppDeps) => Promise<void>>;
}

export const BODY_LIMIT = 1024 * 1024;

export function wantsHtml(req: FastifyRequest): boolean {
  return (req.headers.accept ?? '').includes('text/html');
}

export function sendError(req: FastifyRequest, reply: FastifyReply, status: number, message: string): FastifyReply {
  reply.code(status);
  if (wantsHtml(req)) return reply.type('text/html; charset=utf-8').send(errorPage(status, message));
  return reply.send({ error: message });
}

/** The relay's HTTP surface: health, the secret-URL intake, and plex_autoscan's cmd API. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.log as unknown as FastifyBaseLogger,
    // One log line per scan request is written by the handlers; fastify's two per request would double it.
    logController: new LogController({ disableRequestLogging: true }),
    // Handlers log with the relay's logger as it is; a child logger per request (for a request id nobody
    // reads) is a measurable share of intake time.
    childLoggerFactory: (logger) => logger,
    bodyLimit: BODY_LIMIT,
    trustProxy: false,
  });
  await app.register(formbody, { bodyLimit: BODY_LIMIT });
  // Only JSON and forms are scan requests; anything else (text/plain included) is answered 415.
  app.removeContentTypeParser('text/plain');
  if (config.SERVER_RATE_LIMIT > 0) {
    // Loaded only when configured: most installs never rate-limit and should not pay its memory.
    const { default: rateLimit } = await import('@fastify/rate-limit');
    await app.register(rateLimit, {
      max: config.SERVER_RATE_LIMIT,
      timeWindow: '1 minute',
      // Thrown to the error handler below, which answers {"error": message}: it must be an Error with a message.
      errorResponseBuilder: (_req, ctx) => Object.assign(new Error(`rate limit: at most ${ctx.max} requests per minute per client`), { statusCode: 429 }),
    });
  }

  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) {
      req.log.error({ err, url: req.url }, 'internal error while handling a request');
      return sendError(req, reply, 500, 'internal error; see the relay log');
    }
    const message =
      status === 413
        ? `request body is larger than ${BODY_LIMIT} bytes`
        : status === 415
          ? `unsupported content type "${req.headers['content-type'] ?? ''}": send application/x-www-form-urlencoded or application/json`
          : err.message;
    return sendError(req, reply, status, message);
  });
  app.setNotFoundHandler((req, reply) => sendError(req, reply, 404, 'not found'));

  app.get('/healthz', { config: { rateLimit: false } }, async () => ({ status: 'ok' }));

  const guard = makeGuard(config);

  // The managers' Webhook connection sends POST, or PUT when the user picks it.
  app.route<{ Params: { secret: string } }>({
    method: ['POST', 'PUT'],
    url: '/:secret',
    preHandler: guard,
    handler: (req, reply) => handleScanPost(req, reply, deps),
  });

  app.route<{ Params: { secret: string } }>({
    method: ['GET', 'POST'],
    url: '/api/:secret',
    preHandler: guard,
    handler: (req, reply) => cmdApi(req, reply, deps),
  });

  for (const plugin of deps.plugins ?? []) await plugin(app, deps);

  // The bare manual page, unless a plugin (the dashboard) serves this URL.
  if (!app.hasRoute({ method: 'GET', url: '/:secret' })) {
    app.get<{ Params: { secret: string } }>('/:secret', { preHandler: guard }, async (req, reply) => {
      if (!config.SERVER_ALLOW_MANUAL_SCAN) return manualScanOff(req, reply);
      return reply.type('text/html; charset=utf-8').send(manualScanPage());
    });
  }
  return app;
}

/** plex_autoscan answers the page with 401 when manual scans are off; so do we. */
export function manualScanOff(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(req, reply, 401, 'manual scans are off (SERVER_ALLOW_MANUAL_SCAN is false)');
}

/**
 * preHandler for routes under the secret: wrong secret (or Basic auth when configured) gets 404/401 and
 * nothing else happens. Callback style: it runs on every intake request, and needs no promise.
 */
export function makeGuard(config: Pick<Config, 'SERVER_PASS' | 'SERVER_AUTH_USER' | 'SERVER_AUTH_PASS'>) {
  const isSecret = makeSecretCheck(config.SERVER_PASS);
  const basicAuth = Boolean(config.SERVER_AUTH_USER || config.SERVER_AUTH_PASS);
  return (req: FastifyRequest<{ Params: { secret: string } }>, reply: FastifyReply, done: () => void): void => {
    if (!isSecret(req.params.secret)) {
      sendError(req, reply, 404, 'not found');
      return;
    }
    if (basicAuth && !basicAuthMatches(req.headers.authorization, config.SERVER_AUTH_USER, config.SERVER_AUTH_PASS)) {
      reply.header('WWW-Authenticate', 'Basic realm="scanrelay", charset="UTF-8"');
      sendError(req, reply, 401, 'authentication required');
      return;
    }
    done();
  };
}
