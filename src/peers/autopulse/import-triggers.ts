import type { JsonObject } from '../../config/load.ts';
import { filterOf, rewriteOf, type ImportNotes } from './import-common.ts';
import type { AutopulseTrigger } from './settings.ts';

/** notify.rs:156: autopulse's polling backend looks every 10 s. */
const AUTOPULSE_POLL_INTERVAL = 10;

/**
 * Route triggers as SERVER_AUTOPULSE_TRIGGERS (served at /triggers/<name>), notify triggers as WATCH.PATHS, and
 * SERVER_SCAN_DELAY_MAX as the longest wait. `problem` refuses the file with a key and a reason.
 */
export function importTriggers(
  triggers: Record<string, AutopulseTrigger>,
  ctx: { targetNames: ReadonlyMap<string, string>; defaultWait: number; problem: (key: string, message: string) => never },
  config: JsonObject,
  { carried, notes }: ImportNotes,
): void {
  const routes: JsonObject = {};
  const watchPaths: JsonObject[] = [];
  let watchPoll = false;
  /** Each notify trigger's debounce (s): the watcher's one SETTLE. */
  const watchSettles: Array<[string, number]> = [];
  const watchInclude: string[] = [];
  const watchAnyFile: string[] = [];
  let maxDelay = ctx.defaultWait;
  const excludesOf = (where: string, names: string[] | undefined): string[] | undefined => {
    if (names === undefined) return undefined;
    const known = names.filter((n) => ctx.targetNames.has(n)).map((n) => ctx.targetNames.get(n)!);
    const unknown = names.filter((n) => !ctx.targetNames.has(n));
    if (unknown.length) notes.push(`${where}.excludes: ${unknown.join(', ')} name no target; left out`);
    return known.length ? known : undefined;
  };
  for (const [name, t] of Object.entries(triggers)) {
    const where = `triggers.${name}`;
    if (!/^[A-Za-z0-9._~-]+$/.test(name)) ctx.problem(where, 'the name must be one URL path segment');
    const wait = t.timer.wait;
    const excluded = excludesOf(where, t.excludes);
    if (t.type === 'notify') {
      // filter: on the rewritten path, as the entry's INCLUDE/EXCLUDE (docs/watch.md); filters: on the watched
      // path before the rewrite (notify.rs:106-119), as WATCH.INCLUDE.
      const f = filterOf(t.filter);
      // notify.rs:47-73: recursive (true), timer and excludes are the trigger's own: each of its folders keeps them.
      const own: JsonObject = { ...(t.recursive ? {} : { RECURSIVE: false }), ...(wait !== undefined ? { DELAY: wait } : {}), ...(excluded ? { EXCLUDE_TARGETS: excluded } : {}) };
      for (const p of t.paths) watchPaths.push({ PATH: p, ...rewriteOf(t.rewrite), ...f, ...own });
      if (t.filters?.length) watchInclude.push(...t.filters);
      else watchAnyFile.push(where);
      if (t.backend === 'polling') watchPoll = true;
      if (wait !== undefined) maxDelay = Math.max(maxDelay, wait);
      // notify.rs:144: a change is reported once its file was quiet `debounce` seconds (2); the watcher has one setting.
      watchSettles.push([where, t.debounce]);
      const parts = [t.recursive ? undefined : 'RECURSIVE false', wait !== undefined ? `DELAY ${wait} s` : undefined, excluded ? `EXCLUDE_TARGETS ${excluded.join(', ')}` : undefined].filter(Boolean);
      carried.push(`${where} (notify) -> WATCH.PATHS ${t.paths.join(', ')}${parts.length ? ` (${parts.join(', ')})` : ''}`);
      continue;
    }
    const entry: JsonObject = { TYPE: t.type, ...(t.rewrite.length ? { REWRITE: t.rewrite } : {}), ...filterOf(t.filter) };
    if (wait !== undefined) entry.DELAY = wait;
    maxDelay = Math.max(maxDelay, wait ?? ctx.defaultWait);
    if (excluded) entry.EXCLUDE_TARGETS = excluded;
    if ('event_timers' in t && t.event_timers) {
      const delays: Record<string, number> = {};
      for (const { event, wait: w } of t.event_timers) {
        if (w === undefined) continue;
        delays[event.toLowerCase()] = w;
        // timer.rs:11-20: the event's wait adds to the trigger's, or stands alone when the trigger has none.
        maxDelay = Math.max(maxDelay, (wait ?? 0) + w);
      }
      if (Object.keys(delays).length) entry.EVENT_DELAYS = delays;
    }
    routes[name] = entry;
  }
  config.SERVER_AUTOPULSE_TRIGGERS = routes;
  carried.push(`triggers -> SERVER_AUTOPULSE_TRIGGERS (served at /triggers/<name>): ${Object.entries(routes).map(([n, e]) => `${n} (${String((e as JsonObject).TYPE)})`).join(', ')}`);
  if (watchPaths.length) {
    // notify.rs:151-156: the polling backend looks every 10 s.
    const settle = Math.max(...watchSettles.map(([, d]) => d));
    config.WATCH = {
      ENABLED: true,
      PATHS: watchPaths,
      POLL: watchPoll,
      ...(watchPoll ? { POLL_INTERVAL: AUTOPULSE_POLL_INTERVAL } : {}),
      ...(settle > 0 && settle !== 2 ? { SETTLE: settle } : {}),
      ...(watchInclude.length ? { INCLUDE: [...new Set(watchInclude)] } : {}),
    };
    if (watchPoll) carried.push(`notify backend polling -> WATCH.POLL, every ${AUTOPULSE_POLL_INTERVAL} s as autopulse (notify.rs:156)`);
    if (settle > 0 && settle !== 2) carried.push(`notify debounce -> WATCH.SETTLE ${settle} s (a changed file is taken once it was unchanged that long)`);
    const differ = watchSettles.filter(([, d]) => d !== settle);
    if (differ.length) notes.push(`${differ.map(([w, d]) => `${w}.debounce (${d} s)`).join(', ')}: the watcher has one WATCH.SETTLE for every folder; it is the longest, ${settle} s`);
    if (settle === 0) notes.push('notify debounce 0: WATCH.SETTLE stays 2 s, the shortest the watcher takes (a file still being written is not taken)');
    if (watchInclude.length && watchAnyFile.length) {
      notes.push(`${watchAnyFile.join(', ')}: no filters, but another notify trigger's filters are WATCH.INCLUDE, which applies to every watched folder; add a pattern that matches its files`);
    } else if (!watchInclude.length) {
      notes.push(`${watchAnyFile.join(', ')}: autopulse reported every file; without WATCH.INCLUDE the watcher takes only media, subtitle and metadata files (docs/watch.md). Set WATCH.INCLUDE to [".*"] for every file`);
    }
  }
  // autopulse scans at first request + wait and never later (triggers.rs:88-95); the cap keeps that.
  config.SERVER_SCAN_DELAY_MAX = maxDelay;
  notes.push(
    `timers: autopulse scans each file its timer's wait after the request, never later; scanrelay waits SERVER_SCAN_DELAY after a folder's last request, so SERVER_SCAN_DELAY_MAX is ${maxDelay} s (the longest wait) to keep that bound`,
  );
}
