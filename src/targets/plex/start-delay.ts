/**
 * How long to wait for a scan that may never show up (docs/scanning.md, "A scan that never shows up"): Plex
 * announces each scan some time after the request, and a path Plex skips announces nothing. The wait is
 * learned from this server: a few times the slowest of its recent start delays, within bounds. Until one is
 * seen, the fixed wait scanrelay used before.
 */
export interface StartDelayOptions {
  /** The wait before any start delay was seen. */
  initialMs: number;
  /** The wait is this many times the slowest recent delay... */
  factor: number;
  /** ...and never below or above these. */
  minMs: number;
  maxMs: number;
  /** How many recent delays count. */
  keep: number;
}

export const DEFAULT_START_DELAY: StartDelayOptions = { initialMs: 2_000, factor: 3, minMs: 250, maxMs: 10_000, keep: 20 };

export class StartDelays {
  private readonly recent: number[] = [];

  constructor(private readonly opts: StartDelayOptions = DEFAULT_START_DELAY) {}

  /** One scan's delay between its request and its first sight. */
  add(ms: number): void {
    this.recent.push(Math.max(0, ms));
    if (this.recent.length > this.opts.keep) this.recent.shift();
  }

  /** The slowest recent delay, when there is one. */
  slowest(): number | undefined {
    return this.recent.length ? Math.max(...this.recent) : undefined;
  }

  /** How long after the request a scan that has not shown counts as one that never will. */
  waitMs(): number {
    const slowest = this.slowest();
    if (slowest === undefined) return this.opts.initialMs;
    return Math.round(Math.min(this.opts.maxMs, Math.max(this.opts.minMs, slowest * this.opts.factor)));
  }
}
