import formbody from '@fastify/formbody';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import type { AppDeps, PluginDeps } from './deps.ts';
import { sendError } from './reply.ts';
import { autoscanRoutes } from '../peers/autoscan/routes.ts';
import { plexAutoscanRoutes } from '../peers/plex-autoscan/routes.ts';
import { registerMultipart } from './multipart.ts';
import { manualPageRoute, scanDoorRoutes } from '../triggers/manual/routes.ts';
import { secretRouterOptions, secretUrlRewrite } from './secret-url.ts';
import { crossSiteRefusal, registerBrowserHeaders } from './browser.ts';
import { FailureBucket, makeGuards } from './guard.ts';
import { WrongSecretLog } from './wrong-secret.ts';
import { FailedAuthLog } from './failed-auth.ts';
import { connectionCap, drainOversizedBody, shedSlowConnections, softFileLimit, TIMEOUTS } from './limits.ts';
import { redactSecret } from './redact.ts';
import { isBusy } from '../db/sqlite.ts';
import { QueueUnavailableError } from '../queue/backend.ts';
import { DiskFullMonitor, isDiskFull } from '../db/disk-full.ts';
import { trustFunction } from '../config/trust-proxy.ts';

export const BODY_LIMIT = 1024 * 1024;

/**
 * Bodies are checked with zod where they are read (src/triggers), so no route has a JSON schema. Fastify's
 * default compilers load ajv and fast-json-stringify at start (about 3 MB of an idle relay's memory) for
 * schemas that never come; these say so at start-up if a route ever declares one.
 */
const NO_ROUTE_SCHEMAS = {
  buildValidator: () => () => {
    throw new Error('route schemas are not compiled here: validate the body with zod where it is read');
  },
  buildSerializer: () => () => {
    throw new Error('response schemas are not compiled here: reply with plain objects');
  },
};

/** The relay's HTTP surface: health, the secret-URL intake, and plex_autoscan's cmd API. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: withRedactedRequests(deps.log, config.SERVER_PASS) as unknown as FastifyBaseLogger,
    // One log line per scan request is written by the handlers; fastify's two per request would double it.
    logController: new LogController({ disableRequestLogging: true }),
    // Handlers log with the relay's logger as it is; a child logger per request (for a request id nobody
    // reads) is a measurable share of intake time.
    childLoggerFactory: (logger) => logger,
    bodyLimit: BODY_LIMIT,
    // SERVER_TRUST_PROXY: the client address (rate limits, logs) is the one the trusted hops saw.
    trustProxy: trustFunction(config.SERVER_TRUST_PROXY),
    ...slowClientTimeouts(),
    // Any SERVER_PASS plex_autoscan served (a "/", a space, more than 100 characters): see secret-url.ts.
    routerOptions: secretRouterOptions(config.SERVER_PASS),
    rewriteUrl: rewriteSecretUrl(config.SERVER_PASS),
    schemaController: { compilersFactory: NO_ROUTE_SCHEMAS },
  });
  shedSlowConnections(app.server, deps.maxConnections ?? connectionCap(softFileLimit()));
  registerBrowserHeaders(app);
  app.addHook('onRequest', crossSiteRefusal(trustFunction(config.SERVER_TRUST_PROXY) !== false, sendError));
  app.addHook('onRequest', notFoundBeforeBody);
  await app.register(formbody, { bodyLimit: BODY_LIMIT });
  await registerMultipart(app, BODY_LIMIT);
  // Only JSON and forms are scan requests; anything else (text/plain included) is answered 415.
  app.removeContentTypeParser('text/plain');
  if (config.SERVER_RATE_LIMIT > 0) {
    // Loaded only when configured: most installs never rate-limit and should not pay its memory.
    const { default: rateLimit } = await import('@fastify/rate-limit');
    await app.register(rateLimit, {
      max: config.SERVER_RATE_LIMIT,
      timeWindow: '1 minute',
      // After the onRequest credential checks: only clients that authenticated use up this allowance
      // (failed attempts have their own, stricter bucket in guard.ts).
      hook: 'preParsing',
      keyGenerator: (req) => req.ip,
      // Thrown to the error handler below, which answers {"error": message}: it must be an Error with a message.
      errorResponseBuilder: (_req, ctx) => Object.assign(new Error(`rate limit: at most ${ctx.max} requests per minute per client`), { statusCode: 429 }),
    });
  }

  const disk = deps.diskFull ?? new DiskFullMonitor(deps.store.location, deps.log);
  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    if (isBusy(err)) return queueBusy(req, reply, QUEUE_LOCKED);
    if (err instanceof QueueUnavailableError) return queueBusy(req, reply, QUEUE_LOST);
    if (isDiskFull(err)) return diskFull(req, reply, disk);
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) {
      req.log.error({ err, url: redactSecret(req.url, config.SERVER_PASS) }, 'internal error while handling a request');
      return sendError(req, reply, 500, 'internal error; see the relay log');
    }
    if (status === 413) drainOversizedBody(req.raw, reply);
    const message =
      status === 413
        ? `request body is larger than ${BODY_LIMIT} bytes`
        : status === 415
          ? `unsupported content type "${req.headers['content-type'] ?? ''}": send application/x-www-form-urlencoded, multipart/form-data or application/json`
          : err.message;
    return sendError(req, reply, status, message);
  });
  app.setNotFoundHandler((req, reply) => sendError(req, reply, 404, 'not found'));

  // The queue is checked too: a file locked by another process is reported at once, not waited for.
  app.get('/healthz', { config: { rateLimit: false } }, async (_req, reply) => {
    if (disk.full()) return reply.code(503).header('retry-after', String(DISK_FULL_RETRY_AFTER_S)).send({ status: 'unavailable', queue: DISK_FULL });
    if (await deps.store.writable()) return { status: 'ok' };
    const why = deps.store.shared ? QUEUE_LOST : QUEUE_LOCKED;
    return reply.code(503).header('retry-after', String(QUEUE_RETRY_AFTER_S)).send({ status: 'unavailable', queue: why });
  });

  const wrongSecret = new WrongSecretLog(deps.log);
  app.addHook('onClose', async () => wrongSecret.close());
  const failures = new FailureBucket(deps.authFailuresPerMinute);
  const failedAuth = new FailedAuthLog(deps.log);
  const guards = makeGuards(config, sendError, failures, (req) => wrongSecret.record(req.ip, req.method, req.routeOptions.url), failedAuth);
  const pluginDeps: PluginDeps = { ...deps, guards, quietRateLimit: quietRateLimit(config) };
  // /triggers/ is autopulse's when its triggers are configured, else autoscan's (docs/autopulse.md). autopulse's
  // routes are loaded only then (a relay keeps the source of every module it loads: bench/README.md "Memory").
  if (Object.keys(config.SERVER_AUTOPULSE_TRIGGERS).length) {
    const { autopulseRoutes, autopulseSend } = await import('../peers/autopulse/routes.ts');
    await autopulseRoutes(app, pluginDeps, makeGuards(config, autopulseSend, failures, undefined, failedAuth).basic);
  } else await autoscanRoutes(app, pluginDeps);

  // POST/PUT /<secret>: the form and the *arrs' webhooks; plex_autoscan's cmd API at /api/<secret>.
  await scanDoorRoutes(app, pluginDeps);
  await plexAutoscanRoutes(app, pluginDeps);

  for (const plugin of deps.plugins ?? []) await plugin(app, pluginDeps);

  // After the plugins: the dashboard serves GET /<secret> in place of the bare manual page.
  await manualPageRoute(app, pluginDeps);
  return app;
}

/** fastify's rewriteUrl for the secret, or undefined when the secret needs none. */
function rewriteSecretUrl(secret: string): ((req: { url?: string }) => string) | undefined {
  const rewrite = secretUrlRewrite(secret);
  return rewrite && ((req) => rewrite(req.url ?? '/'));
}

/**
 * The secret check as an onRequest hook (see guard.ts), for callers that build routes outside buildApp.
 * Failures count in a bucket of their own.
 */
export function makeGuard(config: Pick<Config, 'SERVER_PASS' | 'SERVER_AUTH_USER' | 'SERVER_AUTH_PASS'>) {
  return makeGuards(config, sendError).secret;
}

const QUEUE_RETRY_AFTER_S = 5;
const QUEUE_LOCKED = 'the queue file is locked by another process';
const QUEUE_LOST = 'the queue database cannot be reached';

/** 503 with Retry-After: the request was not queued, and a sender that retries loses nothing. */
function queueBusy(req: FastifyRequest, reply: FastifyReply, why: string): FastifyReply {
  req.log.warn({ client: req.ip }, `${why}; answered 503`);
  reply.header('retry-after', String(QUEUE_RETRY_AFTER_S));
  return sendError(req, reply, 503, `${why}: nothing was queued, try again in ${QUEUE_RETRY_AFTER_S} s`);
}

const DISK_FULL_RETRY_AFTER_S = 60;
const DISK_FULL = "the queue file's disk is full";

/** 503 with Retry-After: nothing was queued; the log line comes from the monitor, once a minute. */
function diskFull(req: FastifyRequest, reply: FastifyReply, disk: DiskFullMonitor): FastifyReply {
  disk.failed(`${req.method} from ${req.ip}`);
  reply.header('retry-after', String(DISK_FULL_RETRY_AFTER_S));
  return sendError(req, reply, 503, `${DISK_FULL} (${disk.file}): nothing was queued; free some space there, then send again (try in ${DISK_FULL_RETRY_AFTER_S} s)`);
}

/**
 * The relay's logger with fastify's own `req` serializer replaced: any line fastify logs about a request
 * (an aborted request, a reply sent twice) shows its URL with the secret redacted.
 */
function withRedactedRequests(log: Logger, secret: string): Logger {
  return log.child(
    {},
    { serializers: { req: (req: FastifyRequest) => ({ method: req.method, url: redactSecret(req.url ?? '', secret), remoteAddress: req.ip }) } },
  );
}

/** Node's timeouts for slow clients (limits.ts), in fastify's options. */
function slowClientTimeouts() {
  return {
    connectionTimeout: TIMEOUTS.idleMs,
    keepAliveTimeout: TIMEOUTS.keepAliveMs,
    requestTimeout: TIMEOUTS.requestMs,
    http: { headersTimeout: TIMEOUTS.headersMs, requestTimeout: TIMEOUTS.requestMs, connectionsCheckingInterval: TIMEOUTS.checkEveryMs },
  };
}

/** A path no route knows is answered 404 before its body is read, and the connection is closed. */
function notFoundBeforeBody(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (!req.is404) return done();
  reply.header('connection', 'close');
  sendError(req, reply, 404, 'not found');
}

/**
 * Routes a browser polls while the dashboard is open still count, in a bucket per route that is ten
 * times SERVER_RATE_LIMIT (at least 600 a minute), so an open tab never uses up the senders' allowance.
 */
function quietRateLimit(config: Pick<Config, 'SERVER_RATE_LIMIT'>): PluginDeps['quietRateLimit'] {
  if (config.SERVER_RATE_LIMIT <= 0) return { rateLimit: false };
  return { rateLimit: { max: Math.max(600, config.SERVER_RATE_LIMIT * 10), timeWindow: '1 minute' } };
}
