import type { settingsOf } from './context.ts';

/** autopulse's pending scans into the relay's queue (filled in by the takeover module). */
export async function takeOverAutopulse(_database: string, _settings: ReturnType<typeof settingsOf>, _replace?: boolean): Promise<string> {
  return "autopulse's pending scans: not taken over (not built yet)";
}
