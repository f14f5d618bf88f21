/** Now on the database's clock, in ms since 1970: the one clock that the relays sharing a queue compare times on. */
export const DB_NOW = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`;

/** A difference smaller than this is round-trip noise, not a clock that is off: it is not applied. */
const NOISE_MS = 250;

/**
 * The relay's clock translated to the database's. A relay stamps every time it writes or compares in the queue
 * (due times, retry times, claims) on the database's clock: a relay whose own clock is minutes ahead must not
 * find another relay's debounce over, or a live claim run out. The difference is read from PostgreSQL at start
 * and again with each lease renewal (a clock stepped by NTP); the relay's own clock then only sets its timers.
 */
export class DbClock {
  /** Database time minus this relay's time. */
  private skewMs = 0;

  /** `local`: the relay's clock (a test seam: a relay whose clock is off). */
  constructor(readonly local: () => number = Date.now) {}

  get skew(): number {
    return this.skewMs;
  }

  /** The database's time now. */
  now(): number {
    return this.local() + this.skewMs;
  }

  toDb(localMs: number): number {
    return localMs + this.skewMs;
  }

  toLocal(dbMs: number): number {
    return dbMs - this.skewMs;
  }

  /** `dbMs` was read between `before` and `after` on the relay's clock. */
  observe(dbMs: number, before: number, after: number): void {
    const skew = dbMs - Math.round((before + after) / 2);
    if (Math.abs(skew - this.skewMs) >= NOISE_MS) this.skewMs = Math.abs(skew) < NOISE_MS ? 0 : skew;
  }
}
