import type { Logger } from '../core/logger.ts';

/*
 * Failed Basic-auth checks are logged, one line a minute at most per client: the first at once, the others of
 * that minute counted into the client's next line. A line names the client and why it failed, never what it
 * sent as a password (nor the user name, which is sometimes the password typed in the wrong field).
 */

/** Clients remembered at most: a spray of addresses cannot grow the map without bound. */
const MAX_CLIENTS = 10_000;

export class FailedAuthLog {
  private readonly clients = new Map<string, { quietUntil: number; since: number }>();

  constructor(
    private readonly log: Pick<Logger, 'warn'>,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** One refused request from `client`; `why` says what was wrong with its credentials, in words. */
  record(client: string, why: string, route: string | undefined): void {
    const now = this.now();
    const entry = this.clients.get(client);
    if (entry && now < entry.quietUntil) {
      entry.since += 1;
      return;
    }
    if (!entry && this.clients.size >= MAX_CLIENTS) {
      for (const [k, v] of this.clients) if (v.quietUntil <= now) this.clients.delete(k);
      if (this.clients.size >= MAX_CLIENTS) this.clients.clear();
    }
    const earlier = entry?.since ?? 0;
    this.clients.set(client, { quietUntil: now + this.windowMs, since: 0 });
    const more = earlier ? ` (${earlier} more refused since this client's last line)` : '';
    this.log.warn(
      { client, route: (route ?? '').replace(/:secret\b/, '<secret>'), ...(earlier ? { moreFailures: earlier } : {}) },
      `Basic auth failed from ${client}: ${why}; answered 401${more}. At most one such line a minute per client; the password sent is never logged`,
    );
  }
}
