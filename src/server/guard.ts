import type { FastifyReply, FastifyRequest } from 'fastify';
import { isDefaultCredentials } from '../peers/autopulse/default-auth.ts';
import type { Config } from '../config/schema.ts';
import { isHomeAddress } from '../config/trust-proxy.ts';
import type { FailedAuthLog } from './failed-auth.ts';
import { basicAuthMatches, makeSecretCheck } from './secret.ts';

/** Failed credential checks (401/404) a client may make per window before it is answered 429. */
export const AUTH_FAILURES_PER_MINUTE = 20;

/**
 * Counts failed credential checks per client in fixed one-minute windows. Kept apart from
 * SERVER_RATE_LIMIT: a client that authenticates is never counted here, so failures (a scanner, or a
 * neighbour behind the same proxy address) never use up a real sender's allowance.
 */
export class FailureBucket {
  private readonly hits = new Map<string, { n: number; resetAt: number }>();

  constructor(
    readonly max = AUTH_FAILURES_PER_MINUTE,
    private readonly windowMs = 60_000,
  ) {}

  /** Records one failure; returns the seconds to wait when the client is over the limit, else 0. */
  fail(client: string, now = Date.now()): number {
    let entry = this.hits.get(client);
    if (!entry || entry.resetAt <= now) {
      // Bounded memory under a spray of addresses: expired entries go when the map grows large.
      if (this.hits.size >= 10_000) for (const [k, v] of this.hits) if (v.resetAt <= now) this.hits.delete(k);
      if (this.hits.size >= 10_000) this.hits.clear();
      entry = { n: 0, resetAt: now + this.windowMs };
      this.hits.set(client, entry);
    }
    entry.n += 1;
    return entry.n > this.max ? Math.max(1, Math.ceil((entry.resetAt - now) / 1000)) : 0;
  }
}

export type Hook = (req: FastifyRequest, reply: FastifyReply, done: () => void) => void;
export type Send = (req: FastifyRequest, reply: FastifyReply, status: number, message: string) => FastifyReply;

export interface Guards {
  /** onRequest hook for routes under /<secret>: the secret, then Basic auth when configured. */
  secret: Hook;
  /** onRequest hook for routes with no secret in the URL (/metrics): Basic auth when configured. */
  basic: Hook;
}

/**
 * The credential checks, run as onRequest hooks: a wrong secret is answered 404 before a byte of the
 * body is read or parsed, and the connection is closed so the client cannot keep streaming into it.
 * Callback style: they run on every intake request, and need no promise.
 */
export function makeGuards(
  config: Pick<Config, 'SERVER_PASS' | 'SERVER_AUTH_USER' | 'SERVER_AUTH_PASS'>,
  send: Send,
  failures = new FailureBucket(),
  /** Told about each request refused for a wrong secret (WrongSecretLog). */
  onWrongSecret?: (req: FastifyRequest) => void,
  /** Told about each request refused for its Basic auth (one line a minute per client). */
  failedAuth?: Pick<FailedAuthLog, 'record'>,
): Guards {
  const isSecret = makeSecretCheck(config.SERVER_PASS);
  // Read on each request: `scanrelay setup` may give a running relay credentials (server/setup-api.ts).
  const needsBasic = () => Boolean(config.SERVER_AUTH_USER || config.SERVER_AUTH_PASS);
  // autopulse's admin/password is what anyone tries first: it opens the relay only to this machine and the
  // home network (a setup moved from autopulse keeps running), never to an address on the internet.
  const defaultPair = () => isDefaultCredentials(config.SERVER_AUTH_USER, config.SERVER_AUTH_PASS);
  const refuse = (req: FastifyRequest, reply: FastifyReply, status: 401 | 404): void => {
    reply.header('connection', 'close');
    const wait = failures.fail(req.ip);
    if (wait) {
      reply.header('retry-after', String(wait));
      send(req, reply, 429, `too many failed attempts from ${req.ip}: try again in ${wait} s`);
      return;
    }
    if (status === 401) reply.header('WWW-Authenticate', 'Basic realm="scanrelay", charset="UTF-8"');
    send(req, reply, status, status === 404 ? 'not found' : 'authentication required');
  };
  /** Why the request's Basic auth is refused, or undefined when it passes. */
  const basicProblem = (req: FastifyRequest): string | undefined => {
    if (!needsBasic()) return undefined;
    const header = req.headers.authorization;
    if (!basicAuthMatches(header, config.SERVER_AUTH_USER, config.SERVER_AUTH_PASS)) {
      return header === undefined ? 'no credentials sent' : /^Basic\s/i.test(header) ? 'wrong user name or password' : 'not Basic credentials';
    }
    if (defaultPair() && !isHomeAddress(req.ip)) {
      return "autopulse's default admin/password, from an address that is neither loopback nor a private network (change SERVER_AUTH_USER and SERVER_AUTH_PASS: `scanrelay import-autopulse --new-password`)";
    }
    return undefined;
  };
  const basicOk = (req: FastifyRequest, reply: FastifyReply): boolean => {
    const problem = basicProblem(req);
    if (!problem) return true;
    failedAuth?.record(req.ip, problem, req.routeOptions.url);
    refuse(req, reply, 401);
    return false;
  };
  return {
    secret: (req, reply, done) => {
      if (!isSecret((req.params as { secret?: string }).secret)) {
        onWrongSecret?.(req);
        return refuse(req, reply, 404);
      }
      if (basicOk(req, reply)) done();
    },
    basic: (req, reply, done) => {
      if (basicOk(req, reply)) done();
    },
  };
}
