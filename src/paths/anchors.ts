import { statSync } from 'node:fs';
import type { Logger } from '../core/logger.ts';

/** True when the path exists; any error (ENOENT, ENOTCONN of a dropped FUSE mount, EACCES) counts as missing. */
export function anchorExists(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

export interface MountGuardOptions {
  /** Background check period (the issue asks for about 15 s). */
  intervalMs?: number;
  /** A `held()` answer older than this is checked again on the spot (before a delivery is claimed). */
  maxAgeMs?: number;
  exists?: (path: string) => boolean;
  /** Called when the last missing anchor came back (wakes the scheduler). */
  onRelease?: () => void;
  now?: () => number;
}

export interface HoldStatus {
  held: boolean;
  /** The anchors missing at the last check. */
  missing: string[];
  /** Disks below SERVER_DISK_MIN_FREE at the last look (`holds`: an anchor's, which holds every scan). */
  fullDisks?: ReadonlyArray<{ path: string; freeBytes: number; holds: boolean }>;
}

/**
 * SERVER_ANCHOR_FILES: while any anchor file is missing (the mount it lives on dropped), every scan for
 * every target is held. Scanning an empty mount makes Plex mark the items unavailable and, with its
 * automatic empty trash, delete them. Requests are still accepted and queued; only delivery waits.
 * Each anchor's disappearance and return is logged once.
 */
export class MountGuard {
  private missing: string[] = [];
  private checkedAt = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  private readonly intervalMs: number;
  private readonly maxAgeMs: number;
  private readonly exists: (path: string) => boolean;
  private readonly now: () => number;

  constructor(
    readonly anchors: readonly string[],
    private readonly log: Logger,
    private readonly opts: MountGuardOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 15_000;
    this.maxAgeMs = opts.maxAgeMs ?? 1000;
    this.exists = opts.exists ?? anchorExists;
    this.now = opts.now ?? Date.now;
  }

  /** Checks every anchor now, logs what changed since the last check, and returns the missing ones. */
  check(): readonly string[] {
    const before = new Set(this.missing);
    const first = this.checkedAt === -Infinity;
    const missing = this.anchors.filter((a) => !this.exists(a));
    this.missing = missing;
    this.checkedAt = this.now();
    for (const a of missing) if (!before.has(a)) this.log.warn({ key: 'SERVER_ANCHOR_FILES', anchor: a }, 'anchor file is missing (is the mount down?): holding every scan until it is back');
    const now = new Set(missing);
    for (const a of before) if (!now.has(a)) this.log.info({ key: 'SERVER_ANCHOR_FILES', anchor: a }, 'anchor file is back');
    if (before.size > 0 && missing.length === 0) {
      this.log.info({ key: 'SERVER_ANCHOR_FILES' }, 'every anchor file is present: scans resume');
      this.opts.onRelease?.();
    } else if (first && missing.length === 0) {
      this.log.info({ key: 'SERVER_ANCHOR_FILES', anchors: this.anchors }, 'mount guard on: every anchor file is present');
    }
    return missing;
  }

  /** Whether scans are held; re-checks when the last check is older than `maxAgeMs` (a few stat calls). */
  held(): boolean {
    if (this.now() - this.checkedAt > this.maxAgeMs) this.check();
    return this.missing.length > 0;
  }

  status(): HoldStatus {
    return { held: this.missing.length > 0, missing: [...this.missing] };
  }

  start(): void {
    this.check();
    this.timer = setInterval(() => this.check(), this.intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
