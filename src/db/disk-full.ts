import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '../core/logger.ts';

/** SQLite's answer when a write finds no room (SQLITE_FULL), or the file system's (ENOSPC, EDQUOT). */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_FULL') || code === 'ENOSPC' || code === 'EDQUOT');
}

/** Free space below which a disk that refused a write still counts as full (SQLite writes pages of 4 KiB and a WAL). */
const ROOM_AGAIN_BYTES = 1024 * 1024;

/** Room on the file system holding `file`'s folder: bytes and inodes an unprivileged writer may use; undefined when unknown. */
export function roomFor(file: string): { bytes: number; inodes: number } | undefined {
  return roomAt(dirname(file));
}

/** Room on the file system `path` (a file or a folder) is on; undefined when it cannot be asked (it is gone). */
export function roomAt(path: string): { bytes: number; inodes: number } | undefined {
  try {
    const s = statfsSync(path);
    // A file system without an inode count (btrfs says 0 of 0) never runs out of them.
    return { bytes: s.bavail * s.bsize, inodes: s.files === 0 ? Infinity : s.ffree };
  } catch {
    return undefined;
  }
}

/**
 * The queue's disk ran full: every refused write is counted, and the log says so once per interval (with
 * how many writes were refused), not a stack trace per request. The disk counts as full from the first
 * refused write until the file system shows room again, which /healthz reports.
 */
export class DiskFullMonitor {
  private fullSince: number | undefined;
  private refused = 0;
  private loggedAt = -Infinity;

  constructor(
    readonly file: string,
    private readonly log: Logger,
    private readonly logEveryMs = 60_000,
    private readonly room: (file: string) => { bytes: number; inodes: number } | undefined = roomFor,
  ) {}

  /** Records a write refused for lack of space (`what` names the writer: a scan request, the scheduler). */
  failed(what: string, now = Date.now()): void {
    this.fullSince ??= now;
    this.refused++;
    if (now - this.loggedAt < this.logEveryMs) return;
    this.loggedAt = now;
    this.log.error(
      { file: this.file, refused: this.refused, since: new Date(this.fullSince).toISOString(), freeBytes: this.room(this.file)?.bytes, last: what },
      `the disk holding ${this.file} is full: scan requests are answered 503 and nothing new is queued until there is room (queued scans are kept); said once a minute`,
    );
    this.refused = 0;
  }

  /** True from a refused write until the file system has room again. */
  full(): boolean {
    if (this.fullSince === undefined) return false;
    const room = this.room(this.file);
    if (room && room.bytes >= ROOM_AGAIN_BYTES && room.inodes !== 0) {
      this.log.info({ file: this.file, freeBytes: room.bytes }, `the disk holding ${this.file} has room again`);
      this.fullSince = undefined;
      this.refused = 0;
      this.loggedAt = -Infinity;
      return false;
    }
    return true;
  }
}
