import pino, { type Logger } from 'pino';
import { createRequire } from 'node:module';
import type { LogLevel } from './config/settings.ts';
import { rotatingLogFile } from './log-file.ts';

export type { Logger };

export interface LogOptions {
  level: LogLevel;
  /** Also append JSON lines to this file (plex_autoscan's --logfile), rotated. */
  file?: string;
  /** Rotation size; plex_autoscan's 2 MB unless a test wants a smaller one. */
  fileMaxBytes?: number;
  /** Human-readable lines; default: when stdout is a terminal. */
  pretty?: boolean;
}

/**
 * One JSON line per event on stdout (readable when it is a terminal), and optionally a log file.
 * JSON lines go through pino's buffered destination: a burst of requests shares a few writes instead of
 * one write(2) each, and pino flushes the buffer when the process exits.
 */
export async function createLogger(opts: LogOptions): Promise<Logger> {
  const wantPretty = opts.pretty ?? process.stdout.isTTY === true;
  const stdout = wantPretty ? prettyStream() : pino.destination({ dest: 1, sync: false });
  const options = { level: opts.level, base: undefined, timestamp: isoTimeCached };
  if (!opts.file) return pino(options, stdout);
  // Rotated at 2 MB, 5 kept, mode 0600, as log-file.ts says.
  const { stream: file, narrowed } = await rotatingLogFile(opts.file, opts.fileMaxBytes);
  const log = pino(options, pino.multistream([{ level: opts.level, stream: stdout }, { level: opts.level, stream: file }]));
  if (narrowed.length) log.warn({ files: narrowed }, 'log files were readable by others: narrowed to 0600 (their lines can hold the secret intake URL)');
  return log;
}

let stampedMs = -1;
let stamp = '';
/** pino's ISO time, formatted once per millisecond: a burst logs many lines in the same one. */
function isoTimeCached(): string {
  const now = Date.now();
  if (now !== stampedMs) {
    stampedMs = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

/** pino-pretty is loaded only for a terminal: a service writing JSON lines never pays for it. */
function prettyStream(): NodeJS.WritableStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as (opts: object) => NodeJS.WritableStream;
  return pretty({ colorize: true, sync: true, translateTime: 'SYS:standard', ignore: 'pid,hostname' });
}

/** A logger that drops everything, for unit tests and pure callers. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
