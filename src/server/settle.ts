import type { FastifyInstance } from 'fastify';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from '../core/logger.ts';

/*
 * After a burst of requests V8 keeps the heap it grew to: its memory reducer waits for a quiet spell it
 * rarely judges long enough, so a relay that answered 40,000 requests in 5 s still held the memory 30 s
 * later (bench/README.md, "memory after a burst"). Once the requests stop, one full collection returns
 * the burst's garbage and V8 unmaps the emptied pages.
 */

export interface SettleOptions {
  /** How often the request count is looked at. */
  checkEveryMs?: number;
  /** Requests in one look that make it a burst. */
  burstRequests?: number;
  /** At most this many requests in a look after a burst: it is over. */
  quietRequests?: number;
  /** The collector (tests pass a recorder). */
  gc?: () => void;
}

/** V8's full collection, reachable without a start flag: the flag only has to be on when a context is made. */
export function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  setFlagsFromString('--no-expose-gc');
  // Two passes: the first frees the pages, the second lets V8 unmap them now rather than later.
  return () => {
    gc();
    gc();
  };
}

export class BurstSettler {
  private requests = 0;
  private busy = false;
  private timer: NodeJS.Timeout | undefined;
  private collector: (() => void) | undefined;

  constructor(
    private readonly log: Logger,
    private readonly opts: SettleOptions = {},
  ) {}

  /** Counts answered requests and looks every `checkEveryMs`. */
  attach(app: FastifyInstance): this {
    app.addHook('onResponse', (_req, _reply, done) => {
      this.requests++;
      done();
    });
    this.timer = setInterval(() => this.check(), this.opts.checkEveryMs ?? 5000);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look: true when it collected (a burst just ended). */
  check(): boolean {
    const seen = this.requests;
    this.requests = 0;
    if (seen >= (this.opts.burstRequests ?? 200)) {
      this.busy = true;
      return false;
    }
    if (!this.busy || seen > (this.opts.quietRequests ?? 10)) return false;
    this.busy = false;
    const before = process.memoryUsage().rss;
    const started = performance.now();
    this.collector ??= this.opts.gc ?? fullGc();
    this.collector();
    this.log.debug(
      { rssBeforeMB: Math.round(before / 1e5) / 10, rssAfterMB: Math.round(process.memoryUsage().rss / 1e5) / 10, ms: Math.round(performance.now() - started) },
      'a burst of requests ended: memory given back',
    );
    return true;
  }
}
