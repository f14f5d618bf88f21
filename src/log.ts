import pino from 'pino';
import type { Logger, LogLevel } from './core/logger.ts';
import { createRequire } from 'node:module';
import { rotatingLogFile } from './log-file.ts';

export interface LogOptions {
  level: LogLevel;
  /** Also append JSON lines to this file (plex_autoscan's --logfile), rotated. */
  file?: string;
  /** Rotation size; plex_autoscan's 2 MB unless a test wants a smaller one. */
  fileMaxBytes?: number;
  /** Human-readable lines; default: when stdout is a terminal. */
  pretty?: boolean;
  /** Fields the first line carries, whatever it says (the release: CHANGELOG.md). */
  first?: Record<string, unknown>;
}

/**
 * One JSON line per event on stdout (readable when it is a terminal), and optionally a log file.
 * JSON lines go through pino's buffered destination: a burst of requests shares a few writes instead of
 * one write(2) each, and pino flushes the buffer when the process exits.
 */
export async function createLogger(opts: LogOptions): Promise<Logger> {
  const wantPretty = opts.pretty ?? process.stdout.isTTY === true;
  const stdout = wantPretty ? prettyStream() : joinedPerTurn(pino.destination({ dest: 1, sync: false }));
  // The first line carries `first` instead of a line of its own: a start that fails early stays one line.
  let first = opts.first;
  const mixin = () => {
    const fields = first ?? {};
    first = undefined;
    return fields;
  };
  const options = { level: opts.level, base: undefined, timestamp: isoTimeCached, ...(first ? { mixin } : {}) };
  if (!opts.file) return pino(options, stdout);
  // Rotated at 2 MB, 5 kept, mode 0600, as log-file.ts says.
  const { stream: file, narrowed } = await rotatingLogFile(opts.file, opts.fileMaxBytes);
  const log = pino(options, pino.multistream([{ level: opts.level, stream: stdout }, { level: opts.level, stream: file }]));
  if (narrowed.length) log.warn({ files: narrowed }, 'log files were readable by others: narrowed to 0600 (their lines can hold the secret intake URL)');
  return log;
}

/** What pino needs of a destination, and what it calls when it is asked to flush or the process exits. */
interface Destination {
  write(data: string): boolean;
  flush(cb?: (err?: Error) => void): void;
  flushSync(): void;
}

/** Hands every batch's pending lines over before any destination flushes itself at exit (see joinedPerTurn). */
const pendingBatches = new Set<() => void>();

/**
 * The lines logged in one turn of the event loop, handed to `dest` as one string. sonic-boom 4 measures the
 * UTF-8 length of its whole pending chunk (up to 16 KB) on every write, which flattens it each time: in a burst
 * of requests the one log line each cost about 8 KB of garbage (bench/README.md). Joined once a turn, a line
 * costs about its own length. Order is kept, and a line waits at most for the end of its turn; at exit the
 * pending lines go to `dest` first, and pino's own exit hook then flushes it synchronously.
 */
export function joinedPerTurn(dest: Destination): Destination {
  let lines: string[] = [];
  let scheduled = false;
  const handOver = () => {
    scheduled = false;
    if (lines.length === 0) return;
    const text = lines.join('');
    lines = [];
    dest.write(text);
  };
  if (pendingBatches.size === 0) {
    // Prepended: 'exit' listeners run in order, and pino's (registered with the first destination) flushes it.
    process.prependListener('exit', () => pendingBatches.forEach((hand) => hand()));
  }
  pendingBatches.add(handOver);
  return {
    write(line) {
      lines.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(handOver);
      }
      return true;
    },
    flush(cb) {
      handOver();
      dest.flush(cb);
    },
    flushSync() {
      handOver();
      dest.flushSync();
    },
  };
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
  return pretty({
    colorize: true,
    sync: true,
    translateTime: 'SYS:standard',
    ignore: 'pid,hostname',
    // A line about a config key names it in its message already; the field is there for JSON readers.
    customPrettifiers: { key: (value: unknown, _name: string, line: { msg?: unknown }) => (typeof line.msg === 'string' && line.msg.includes(String(value)) ? undefined : String(value)) },
  });
}

