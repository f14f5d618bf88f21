import pino, { type Logger } from 'pino';

/*
 * The logger every layer is handed: pino's type, and the levels a user may set. Creating the relay's own logger
 * (stdout, the log file, pretty lines) is an edge of the program (src/log.ts); what the layers need of it lives
 * here, at the ground floor, so that no foundation imports the config or the edge to take a logger.
 */
export type { Logger };

/** The levels the relay logs at (--loglevel and its aliases are read in config/settings.ts). */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** A logger that drops everything, for unit tests and pure callers. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
