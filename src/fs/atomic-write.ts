import { closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `path` with `text` so that after a crash or power loss the file is either the old one or
 * the new one, whole: the new contents are written to a temp file in the same folder and fsynced,
 * renamed over the old file, and the folder is fsynced so the rename itself is on disk.
 * `mode` applies to the new file (0600 for files that hold secrets).
 */
export function writeFileAtomic(path: string, text: string, opts: { mode?: number } = {}): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  const mode = opts.mode ?? 0o644;
  try {
    const fd = openSync(tmp, 'wx', mode);
    try {
      fchmodSync(fd, mode); // exactly `mode`: open() narrowed it by the umask
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* never created, or already renamed */
    }
    throw err;
  }
  syncFolder(dir);
}

/** fsync of a folder, which makes a rename in it durable. Some file systems refuse it; then it is moot. */
function syncFolder(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    /* not supported here (e.g. some network file systems) */
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
