import type { Logger } from '../core/logger.ts';

/*
 * Requests at a wrong secret URL are answered 404 (guard.ts) and would leave no trace at INFO, so an operator
 * could not see that Sonarr calls an old URL. They are logged at INFO, one line a minute at most: the first at
 * once, the rest of that minute counted into one line when it ends. A line names the client addresses and the
 * route kinds ("POST /<secret>", "GET /api/<secret>"), never the path that was sent: a wrong secret may be a
 * near-miss of the right one, and a log line must not help guess it.
 */

/** Client addresses named in one line at most; the rest are counted. */
const CLIENTS_NAMED = 5;

interface Window {
  requests: number;
  clients: Map<string, number>;
  routes: Set<string>;
}

export class WrongSecretLog {
  private pending: Window | undefined;
  private quietUntil = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** One request refused for a wrong secret: `route` is the route pattern (`/:secret`), never the URL. */
  record(client: string, method: string, route: string | undefined): void {
    const kind = `${method} ${(route ?? '/<secret>').replace(/:secret\b/, '<secret>')}`;
    const window = (this.pending ??= { requests: 0, clients: new Map(), routes: new Set() });
    window.requests += 1;
    window.clients.set(client, (window.clients.get(client) ?? 0) + 1);
    window.routes.add(kind);
    if (this.timer) return;
    const wait = this.quietUntil - this.now();
    if (wait <= 0) this.flush();
    else {
      this.timer = setTimeout(() => this.flush(), wait);
      this.timer.unref();
    }
  }

  /** Writes the counted requests as one line, and starts the quiet minute (also called at the end of one). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const w = this.pending;
    this.pending = undefined;
    if (!w) return;
    this.quietUntil = this.now() + this.windowMs;
    const named = [...w.clients.keys()].slice(0, CLIENTS_NAMED);
    const more = w.clients.size - named.length;
    const clients = `${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
    this.log.info(
      { requests: w.requests, clients: named, moreClients: more, routes: [...w.routes] },
      `${w.requests} request${w.requests === 1 ? '' : 's'} at a wrong secret URL (answered 404) from ${clients}, at ${[...w.routes].join(', ')}: a sender (Sonarr, Radarr, a script) may use an old scan URL; the URL it sent is not logged`,
    );
  }

  /** Ends the pending minute without waiting (on stop). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
