import type { Config } from '../config/schema.ts';

/**
 * The keys a running relay takes from its config file without a restart: the /triggers/ routes read them on
 * each request (peers/autoscan/routes.ts, guard.ts). Everything else is read once at start.
 */
export const LIVE_KEYS = ['SERVER_AUTOSCAN_TRIGGERS', 'SERVER_AUTH_USER', 'SERVER_AUTH_PASS'] as const;

/** Puts the live keys of `fresh` into the running config (the same object every route reads); returns those that changed. */
export function applyLive(running: Config, fresh: Pick<Config, (typeof LIVE_KEYS)[number]>): string[] {
  const changed: string[] = [];
  for (const key of LIVE_KEYS) {
    if (JSON.stringify(running[key]) === JSON.stringify(fresh[key])) continue;
    (running as Record<string, unknown>)[key] = fresh[key];
    changed.push(key);
  }
  return changed;
}
