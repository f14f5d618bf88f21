import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join } from 'node:path';

/*
 * The --logfile (PLEX_AUTOSCAN_LOGFILE) file, rotated by pino-roll. plex_autoscan rotates its log at
 * 2 MB and keeps 5 old files (scan.py:53-58, RotatingFileHandler maxBytes 2 MiB, backupCount 5).
 * pino-roll numbers every file, the one in use included: for `--logfile /logs/scanrelay.log` it writes
 * /logs/scanrelay.1.log, then scanrelay.2.log, ...; the highest number is the current file, and a
 * restart goes on appending to it. Besides the current file, the 5 newest are kept.
 * The files are 0600: their lines can hold the scan URL and its secret.
 */

/** plex_autoscan's maxBytes (scan.py:55). */
export const LOG_FILE_MAX_BYTES = 2 * 1024 * 1024;
/** plex_autoscan's backupCount (scan.py:56): old files kept beside the current one. */
export const LOG_FILE_KEPT = 5;
export const LOG_FILE_MODE = 0o600;

interface PinoRollOptions {
  file: string;
  size: string;
  limit: { count: number; removeOtherLogFiles: boolean };
  mkdir: boolean;
  mode: number;
  sync: boolean;
}

type PinoRoll = (opts: PinoRollOptions) => Promise<NodeJS.WritableStream>;

/**
 * The names pino-roll gives `path`'s files: `<dir>/<name>.<N><.ext>`. (pino-roll takes the last
 * extension off and puts the number before it; a name without one gets `.log`.)
 */
export function rotatedFilePattern(path: string): { dir: string; matches(name: string): boolean } {
  const ext = extname(path) || '.log';
  const stem = basename(path, extname(path));
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`^${escape(stem)}\\.\\d+${escape(ext)}$`);
  return { dir: dirname(path), matches: (name) => re.test(name) };
}

/**
 * An existing log file of ours that others can read (written before this rule, or copied in) is
 * narrowed to 0600 at start, the old numbered files included: they hold the same lines.
 * Returns the files it narrowed.
 */
export function narrowExistingLogFiles(path: string): string[] {
  const { dir, matches } = rotatedFilePattern(path);
  const narrowed: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return narrowed;
  }
  for (const name of names.filter(matches)) {
    const file = join(dir, name);
    try {
      const st = statSync(file);
      if (st.isFile() && (st.mode & 0o777) !== LOG_FILE_MODE) {
        chmodSync(file, LOG_FILE_MODE);
        narrowed.push(file);
      }
    } catch {
      // Removed meanwhile, or not ours to change: the new files are still created 0600.
    }
  }
  return narrowed;
}

/** A rotating, 0600 log file stream for pino (async: pino-roll looks for the newest numbered file first). */
export async function rotatingLogFile(path: string, maxBytes = LOG_FILE_MAX_BYTES): Promise<{ stream: NodeJS.WritableStream; narrowed: string[] }> {
  mkdirSync(dirname(path), { recursive: true });
  const narrowed = narrowExistingLogFiles(path);
  const pinoRoll = createRequire(import.meta.url)('pino-roll') as PinoRoll;
  const stream = await pinoRoll({
    file: path,
    size: `${maxBytes}b`,
    // removeOtherLogFiles: files left by earlier runs count too, found by their names. In that mode
    // pino-roll's count includes the current file (pino-roll 4.0.0 removeOldFiles), hence the + 1.
    limit: { count: LOG_FILE_KEPT + 1, removeOtherLogFiles: true },
    mkdir: true,
    // New files, rotated ones included, are created with this mode (open(2); the umask only removes bits).
    mode: LOG_FILE_MODE,
    // Each line is written at once. Asynchronous writes lost the last lines when the relay stopped soon
    // after they were logged (process.exit after SIGTERM, with a write still in flight), and the file is
    // the record a user reads after a stop; stdout stays buffered.
    sync: true,
  });
  return { stream, narrowed };
}
