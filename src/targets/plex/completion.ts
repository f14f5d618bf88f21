import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log.ts';
import type { PlexActivity } from './api.ts';
import { runningScans } from './wait.ts';

export interface CompletionTimings {
  /** How often /activities is read while watching. */
  pollMs: number;
  /** No scan activity for the section within this long after the scan was sent: it already ended. */
  appearWithinMs: number;
  /** Longest watch; after it the scan counts as "sent, completion unknown". */
  maxMs: number;
  /** plex_autoscan's fixed wait before empty trash/analyze, used when /activities cannot be read. */
  fallbackMs: number;
}

export type Completion = { completed: true; scanSeen: boolean } | { completed: false; reason: string };

/**
 * Watches Plex's /activities after a partial scan was sent until the section's scan activity ends.
 * Plex may finish a small folder before the first poll, so no activity within `appearWithinMs` counts as
 * completed. When /activities cannot be read, waits plex_autoscan's fixed 10 s and reports "unknown".
 * `log` already carries the scan and section (the target's child logger), so lines here do not repeat them.
 */
export async function watchScanCompletion(readActivities: () => Promise<PlexActivity[]>, sectionId: string, timings: CompletionTimings, log: Logger, signal: AbortSignal): Promise<Completion> {
  const started = Date.now();
  let seen = false;
  for (;;) {
    let running: number;
    try {
      running = runningScans(await readActivities(), sectionId).length;
    } catch (err) {
      log.info({ err: (err as Error).message, waitMs: timings.fallbackMs }, 'cannot read Plex /activities; waiting a fixed time before the after-scan steps');
      await sleep(timings.fallbackMs, undefined, { signal });
      return { completed: false, reason: 'Plex /activities unavailable' };
    }
    const elapsed = Date.now() - started;
    if (running > 0) seen = true;
    else if (seen || elapsed >= timings.appearWithinMs) {
      if (seen) log.info({ ms: elapsed }, 'Plex scan completed: its scan activity for the section ended');
      else log.info({ ms: elapsed }, `Plex showed no scan activity for the section within ${Math.round(timings.appearWithinMs / 1000)} s: taking the scan as already finished`);
      return { completed: true, scanSeen: seen };
    }
    if (elapsed >= timings.maxMs) {
      log.warn({ ms: elapsed }, 'Plex is still scanning the section; stopped watching');
      return { completed: false, reason: `still scanning after ${Math.round(elapsed / 1000)} s` };
    }
    await sleep(timings.pollMs, undefined, { signal });
  }
}
