/** How often a target that does not answer is logged, at most. */
export const RETRY_LOG_EVERY_MS = 60_000;

/** What a line about a target that does not answer tells, beyond the scan it was written for. */
export interface RetrySummary {
  /** Attempts that failed since the last line (this one included). */
  failedAttempts: number;
  /** Distinct scans among them. */
  scans: number;
  /** Milliseconds those attempts span. */
  overMs: number;
}

/**
 * One WARN line per target per minute for deliveries that did not get through, with counts, instead of one line per
 * scan per attempt (a dead target with a backlog wrote 1,200 lines in 35 s). Pure bookkeeping with the caller's clock:
 * `failed` says whether this attempt gets a line now (with what it stands for) or is only counted.
 */
export class RetryLog {
  private readonly open = new Map<string, { lastLineAt: number; since: number; attempts: number; scans: Set<number> }>();

  constructor(private readonly everyMs = RETRY_LOG_EVERY_MS) {}

  /** An attempt of scan `scan` to `target` failed at `now`: a summary to log now, or undefined (counted for the next line). */
  failed(target: string, scan: number, now: number): RetrySummary | undefined {
    let entry = this.open.get(target);
    if (!entry) {
      // The first failure is told at once.
      this.open.set(target, { lastLineAt: now, since: now, attempts: 0, scans: new Set() });
      return { failedAttempts: 1, scans: 1, overMs: 0 };
    }
    entry.attempts++;
    entry.scans.add(scan);
    if (now - entry.lastLineAt < this.everyMs) return undefined;
    const summary = { failedAttempts: entry.attempts, scans: entry.scans.size, overMs: now - entry.since };
    this.open.set(target, { lastLineAt: now, since: now, attempts: 0, scans: new Set() });
    return summary;
  }

  /** `target` answered: what was counted and not yet told (undefined: nothing), and its next failure is told at once. */
  answered(target: string, now: number): RetrySummary | undefined {
    const entry = this.open.get(target);
    this.open.delete(target);
    if (!entry || entry.attempts === 0) return undefined;
    return { failedAttempts: entry.attempts, scans: entry.scans.size, overMs: now - entry.since };
  }
}
