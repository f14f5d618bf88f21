import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { roomAt } from '../db/disk-full.ts';
import type { Logger } from '../core/logger.ts';

/** A disk the relay keeps an eye on: named by a file on it (an anchor, the queue file). */
export interface WatchedDisk {
  file: string;
  /** True: scans wait while it is full (the media's disk). False: it is only told (the queue file's disk). */
  holds: boolean;
  /** What it is, in the log and the event: "the media (SERVER_ANCHOR_FILES)". */
  what: string;
}

/** A disk below the line, as the scheduler tells it (`waiting`) and the dashboard shows it. */
export interface FullDisk {
  /** The folder checked (the file's folder: its mount). */
  path: string;
  freeBytes: number;
  holds: boolean;
  reason: string;
}

export interface DiskSpaceOptions {
  /** Free bytes below which a disk is full; room again at twice this (hysteresis). */
  minFreeBytes: number;
  /** Background check period. */
  intervalMs?: number;
  /** A `full()` answer older than this is checked again on the spot (one statfs per disk). */
  maxAgeMs?: number;
  /** Room on the file system a file is on (a test seam; default statfs of the file itself, so a missing anchor tells nothing). */
  room?: (file: string) => { bytes: number; inodes: number } | undefined;
  /** Called when a disk became full or has room again (wakes the scheduler, which tells it). */
  onChange?: () => void;
  now?: () => number;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(bytes < 10e6 ? 1 : 0)} MB`;

/** The watched disks, one per file system: the first of two on the same device wins (list the holding ones first). */
export function distinctDisks(disks: readonly WatchedDisk[], device: (path: string) => number | undefined = deviceOf): WatchedDisk[] {
  const seen = new Set<number>();
  return disks.filter((d) => {
    const dev = device(d.file);
    if (dev === undefined) return true;
    if (seen.has(dev)) return false;
    seen.add(dev);
    return true;
  });
}

function deviceOf(path: string): number | undefined {
  try {
    return statSync(path).dev;
  } catch {
    return undefined;
  }
}

/**
 * SERVER_DISK_MIN_FREE: a disk counts as full when its free space (what an unprivileged writer may use) drops
 * below the line or it has no inode left, and has room again at twice the line, so a disk hovering at the line
 * is told once, not on every look. A disk that cannot be asked (a mount that dropped) keeps its state: the mount
 * guard tells that. Each change is logged once.
 */
export class DiskSpaceGuard {
  private readonly full = new Map<string, FullDisk>();
  private checkedAt = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  private readonly room: NonNullable<DiskSpaceOptions['room']>;
  private readonly now: () => number;

  constructor(
    readonly disks: readonly WatchedDisk[],
    private readonly log: Logger,
    private readonly opts: DiskSpaceOptions,
  ) {
    this.room = opts.room ?? roomAt;
    this.now = opts.now ?? Date.now;
  }

  /** Looks at every disk now; returns the full ones. */
  check(): readonly FullDisk[] {
    let changed = false;
    const line = this.opts.minFreeBytes;
    for (const d of this.disks) {
      const path = dirname(d.file);
      // The file itself is asked: when an anchor's mount dropped, its folder is on the disk under the mount.
      const room = this.room(d.file);
      if (!room) continue;
      const was = this.full.get(path);
      const full = room.inodes === 0 || room.bytes < (was ? 2 * line : line);
      if (full && !was) {
        const then = d.holds
          ? `scans for every target wait until ${mb(2 * line)} is free`
          : `scans go on, and scan requests are refused (503) once no room is left: free some space (${mb(2 * line)} ends this)`;
        const reason = `the disk of ${d.what} (${path}) is full: ${mb(room.bytes)} free${room.inodes === 0 ? ', no inode left' : ''}, below SERVER_DISK_MIN_FREE (${mb(line)}); ${then}`;
        this.full.set(path, { path, freeBytes: room.bytes, holds: d.holds, reason });
        this.log.warn({ key: 'SERVER_DISK_MIN_FREE', path, freeBytes: room.bytes, inodes: room.inodes }, reason);
        changed = true;
      } else if (full && was) {
        was.freeBytes = room.bytes;
      } else if (!full && was) {
        this.full.delete(path);
        this.log.info({ key: 'SERVER_DISK_MIN_FREE', path, freeBytes: room.bytes }, `the disk of ${d.what} (${path}) has room again: ${mb(room.bytes)} free${d.holds ? '; scans resume' : ''}`);
        changed = true;
      }
    }
    this.checkedAt = this.now();
    if (changed) this.opts.onChange?.();
    return [...this.full.values()];
  }

  /** The full disks; looks again when the last look is older than `maxAgeMs`. */
  fullDisks(): readonly FullDisk[] {
    if (this.now() - this.checkedAt > (this.opts.maxAgeMs ?? 5000)) return this.check();
    return [...this.full.values()];
  }

  /** The full disks at the last look (the dashboard, /metrics: no new look). */
  status(): FullDisk[] {
    return [...this.full.values()];
  }

  start(): void {
    this.check();
    this.timer = setInterval(() => this.check(), this.opts.intervalMs ?? 30_000);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
