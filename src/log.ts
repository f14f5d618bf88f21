import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import pino, { type Logger } from 'pino';
import { createRequire } from 'node:module';
import type { LogLevel } from './config/settings.ts';

export type { Logger };

export interface LogOptions {
  level: LogLevel;
  /** Also append JSON lines to this file (plex_autoscan's --logfile). */
  file?: string;
  /** Human-readable lines; default: when stdout is a terminal. */
  pretty?: boolean;
}

/** One JSON line per event on stdout (readable when it is a terminal), and optionally a log file. */
export function createLogger(opts: LogOptions): Logger {
  const streams: pino.StreamEntry[] = [];
  const wantPretty = opts.pretty ?? process.stdout.isTTY === true;
  streams.push({
    level: opts.level,
    stream: wantPretty ? prettyStream() : process.stdout,
  });
  if (opts.file) {
    mkdirSync(dirname(opts.file), { recursive: true });
    streams.push({ level: opts.level, stream: createWriteStream(opts.file, { flags: 'a' }) });
  }
  return pino({ level: opts.level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, pino.multistream(streams));
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
