import { chmodSync, mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import pino from 'pino';
import { basename, dirname, extname, join } from 'node:path';

/*
 * The --logfile (PLEX_AUTOSCAN_LOGFILE) file, rotated. plex_autoscan rotates its log at
 * 2 MB and keeps 5 old files (scan.py:53-58, RotatingFileHandler maxBytes 2 MiB, backupCount 5).
 * Every file is numbered, the one in use included (as pino-roll, used before, named them): for `--logfile /logs/scanrelay.log` it writes
 * /logs/scanrelay.1.log, then scanrelay.2.log, ...; the highest number is the current file, and a
 * restart goes on appending to it. Besides the current file, the 5 newest are kept.
 * The files are 0600: their lines can hold the scan URL and its secret.
 */

/** plex_autoscan's maxBytes (scan.py:55). */
export const LOG_FILE_MAX_BYTES = 2 * 1024 * 1024;
/** plex_autoscan's backupCount (scan.py:56): old files kept beside the current one. */
export const LOG_FILE_KEPT = 5;
export const LOG_FILE_MODE = 0o600;

/**
 * The names of `path`'s files: `<dir>/<name>.<N><.ext>` (the last extension taken off and the number put before
 * it; a name without one gets `.log`), and the number in one of them. Only names made from `path`'s own
 * name count: an unrelated `wt2.log` in the same folder is not file 2 (pino-roll, used before, took the
 * trailing digits of any `.log` file there as its own numbering).
 */
export function rotatedFilePattern(path: string): { dir: string; matches(name: string): boolean; numberOf(name: string): number | undefined; nameOf(n: number): string } {
  const ext = extname(path) || '.log';
  const stem = basename(path, extname(path));
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`^${escape(stem)}\\.(\\d+)${escape(ext)}$`);
  const numberOf = (name: string) => {
    const m = re.exec(name);
    return m ? Number(m[1]) : undefined;
  };
  return { dir: dirname(path), matches: (name) => numberOf(name) !== undefined, numberOf, nameOf: (n) => join(dirname(path), `${stem}.${n}${ext}`) };
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

/** The numbers of `path`'s own files in its folder, lowest first. */
function ownNumbers(path: string): number[] {
  const { dir, numberOf } = rotatedFilePattern(path);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.map(numberOf).filter((n): n is number => n !== undefined).sort((a, b) => a - b);
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * A rotating, 0600 log file stream for pino. It appends to the highest-numbered file of `path`'s own (1 when
 * there is none), moves to the next number once a file holds `maxBytes`, and keeps LOG_FILE_KEPT older ones.
 * Each line is written at once (synchronously): asynchronous writes lost the last lines when the relay stopped
 * soon after they were logged (process.exit after SIGTERM, with a write still in flight), and the file is the
 * record a user reads after a stop; stdout stays buffered.
 */
export async function rotatingLogFile(path: string, maxBytes = LOG_FILE_MAX_BYTES): Promise<{ stream: NodeJS.WritableStream; narrowed: string[] }> {
  mkdirSync(dirname(path), { recursive: true });
  const narrowed = narrowExistingLogFiles(path);
  const { nameOf } = rotatedFilePattern(path);
  let number = ownNumbers(path).at(-1) ?? 1;
  let size = sizeOf(nameOf(number));
  // New files, rotated ones included, are created with this mode (open(2); the umask only removes bits).
  const dest = pino.destination({ dest: nameOf(number), sync: true, mode: LOG_FILE_MODE, append: true, mkdir: true });
  const roll = () => {
    number += 1;
    size = 0;
    dest.reopen(nameOf(number));
    for (const old of ownNumbers(path).filter((n) => n <= number - 1 - LOG_FILE_KEPT)) {
      try {
        unlinkSync(nameOf(old));
      } catch {
        // Removed meanwhile: nothing to do.
      }
    }
  };
  const stream = {
    write(line: string): boolean {
      dest.write(line);
      size += Buffer.byteLength(line);
      if (size >= maxBytes) roll();
      return true;
    },
    flush: (cb?: (err?: Error) => void) => dest.flush(cb),
    flushSync: () => dest.flushSync(),
    end: () => dest.end(),
  };
  return { stream: stream as unknown as NodeJS.WritableStream, narrowed };
}
