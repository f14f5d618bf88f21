import helmet from 'helmet';
import { hash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NOSCRIPT_STYLE, PAGE_STYLE } from './pages.ts';

const sha256 = (text: string) => `'sha256-${hash('sha256', text, 'base64')}'`;

/**
 * Headers that keep a browser from being turned against the dashboard: scripts and styles only from the
 * relay (the two inline styles are allowed by hash), no framing, no sniffing, and no Referer, because the
 * secret is in the page's URL. No HSTS and no upgrade-insecure-requests: the relay usually speaks plain
 * HTTP on a LAN address, and those would break it.
 *
 * helmet itself, built once: @fastify/helmet builds helmet's middleware again for every request (parsing the
 * policy each time), which was a sixth of all the memory a request allocated.
 */
export function registerBrowserHeaders(app: FastifyInstance): void {
  const setHeaders = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", sha256(PAGE_STYLE), sha256(NOSCRIPT_STYLE)],
        imgSrc: ["'self'", 'data:'],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    noSniff: true,
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: false,
    crossOriginEmbedderPolicy: false,
  });
  app.addHook('onRequest', (req, reply, done) => setHeaders(req.raw, reply.raw, (err?: unknown) => (err ? done(err instanceof Error ? err : new Error(String(err))) : done())));
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A page on another site must not make the dashboard's browser queue or delete scans. Browsers say where
 * a request comes from in Sec-Fetch-Site (same-origin, or none when the user typed it); older ones only
 * in Origin. Webhooks and scripts send neither and pass. Because of Referrer-Policy no-referrer, a
 * browser sends `Origin: null` even for the dashboard's own form, so null alone decides nothing when
 * Sec-Fetch-Site is there; without it, null (sandboxed frames, file: pages) is another site.
 */
export function crossSiteRefusal(trustProxy: boolean, send: (req: FastifyRequest, reply: FastifyReply, status: number, message: string) => FastifyReply) {
  return (req: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    if (!STATE_CHANGING.has(req.method) && !queuesWork(req)) return done();
    const why = crossSiteReason(req, trustProxy);
    if (!why) return done();
    reply.header('connection', 'close');
    send(req, reply, 403, why);
  };
}

/**
 * Route config of a GET that queues work (autopulse's GET /triggers/<name>): an <img> on another site must not
 * queue scans through it any more than a form's POST may.
 */
export const QUEUES_WORK = { queuesWork: true };
const queuesWork = (req: FastifyRequest): boolean => req.routeOptions.config?.queuesWork === true;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A GET (or HEAD) that queues work: refused across sites (crossSiteRefusal). */
    queuesWork?: boolean;
  }
}

/** Why a browser's request came from another site, or undefined when it did not (or no browser sent it). */
export function crossSiteReason(req: FastifyRequest, trustProxy: boolean): string | undefined {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') {
    if (site === 'same-origin' || site === 'none') return undefined;
    return `cross-site request refused: it came from another site (Sec-Fetch-Site: ${site})`;
  }
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  const forwarded = trustProxy ? req.headers['x-forwarded-host'] : undefined;
  const hosts = [req.headers.host, ...(typeof forwarded === 'string' ? forwarded.split(',').map((h) => h.trim()) : [])];
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).host;
  } catch {
    originHost = undefined;
  }
  if (originHost && hosts.some((h) => h && h.toLowerCase() === originHost.toLowerCase())) return undefined;
  return `cross-site request refused: Origin ${origin} is not this relay`;
}
