import { z } from 'zod';

/*
 * Every timing key becomes a Node timer, and Node fires a timer longer than 2^31-1 ms (24.8 days) after
 * 1 ms instead: a scanner timeout of 3,000,000 s killed every run at once, and a poll interval that large
 * polled without pause. So each duration has that bound; a larger value is read as the bound, with one
 * warning (config/loose.ts), so a config that started before still starts.
 */

/** The longest wait a Node timer holds, in whole seconds: 2,147,483 s, about 24.8 days. */
export const MAX_DURATION_S = Math.floor((2 ** 31 - 1) / 1000);

const atMost = (schema: z.ZodNumber) => schema.max(MAX_DURATION_S, `at most ${MAX_DURATION_S} seconds (24.8 days, the longest wait a timer holds)`);

/** Seconds, 0 allowed. */
export const seconds = (def: number) => atMost(z.number().min(0)).default(def);
/** Seconds, above 0 (`why`: the message for 0 or less). */
export const positiveSeconds = (def: number, why?: string) => atMost(z.number().positive(why)).default(def);
/** Seconds or null. */
export const nullableSeconds = () => atMost(z.number().min(0)).nullable().default(null);

/** The keys built from the helpers above, as dotted paths (tests check each one). */
export const DURATION_KEYS = [
  'SERVER_SCAN_DELAY',
  'SERVER_SCAN_DELAY_MAX',
  'SERVER_FILE_CHECK_DELAY',
  'PLEX_SCANNER_TIMEOUT',
  'RUN_COMMAND_TIMEOUT',
  'GOOGLE.POLL_INTERVAL',
  'WATCH.POLL_INTERVAL',
  'SERVER_WAIT_FOR_FILES.FIRST_CHECK_DELAY',
  'SERVER_WAIT_FOR_FILES.MAX_CHECK_DELAY',
] as const;

const KEYS: ReadonlySet<string> = new Set(DURATION_KEYS);

/** A duration over the bound (JSON's 1e400 included, which parses as Infinity), read as the bound. */
export function clampDuration(key: string, value: unknown): { value: number; warning: string } | undefined {
  if (!KEYS.has(key) || typeof value !== 'number' || !(value > MAX_DURATION_S)) return undefined;
  const zeroMeans = key.endsWith('_TIMEOUT') ? '; 0 means never' : '';
  return {
    value: MAX_DURATION_S,
    warning: `${key}: ${value} s is longer than a timer holds; read as ${MAX_DURATION_S} s (24.8 days)${zeroMeans}`,
  };
}

/** A wait as people read it: "10 days", "2 hours", "90 s". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  const unit = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
  if (s >= 86_400 && s % 3600 === 0) return s % 86_400 === 0 ? unit(s / 86_400, 'day') : unit(s / 3600, 'hour');
  if (s >= 3600 && s % 60 === 0) return s % 3600 === 0 ? unit(s / 3600, 'hour') : unit(s / 60, 'minute');
  return `${s} s`;
}
