import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { UserError } from '../core/errors.ts';
import type { ScanAction } from '../core/scan.ts';
import { actionText, scanState, shownRoute } from '../queue/state.ts';
import type { QueueEntry } from '../queue/types.ts';
import { action, settingsOf } from './context.ts';
import { openCommandQueue, queueConfigOf } from './queue-open.ts';

/** One scan as the command shows it: pending or running, or finished (--history). */
export interface QueueLine {
  folder: string;
  /** What the targets are asked to do: scan (the default), or refresh or analyze the items at its files. */
  action: ScanAction;
  /** The targets it was routed to when queued (its trigger's TARGETS, each target's INCLUDE/EXCLUDE); null: all. */
  targets: string[] | null;
  status: string;
  due: string;
  /** When it was done or failed (ISO); null while open. */
  finished: string | null;
  attempts: number;
  lastError: string | null;
  /**
   * Each target's delivery, once the scan is due; `relay` is the relay that claimed it last (a shared queue), else
   * null; `name`, the server as people read it (`plex (Living Room)` on a shared queue); `unserved`, it waits and no
   * running relay has its server.
   */
  deliveries: Array<{ target: string; name: string; status: string; attempts: number; relay: string | null; unserved: boolean }>;
  /** Why a due scan still waits (a shared queue with no relay that has a target), else null. */
  waiting: string | null;
  /** What it is doing (queue/state.ts): pending, sending, "waiting to retry", "waiting for its turn", done, failed. */
  state: string;
  /** The same as a line: "waiting to retry (Plex refused the token (401))". */
  stateText: string;
}

/** `every`: the relay's target names; a route naming all of them is shown as none (null), as before routes were stored. */
export function queueLine(entry: QueueEntry, every: readonly string[] = []): QueueLine {
  const failing = entry.deliveries.filter((d) => d.last_error);
  return {
    folder: entry.folder,
    action: entry.action ?? 'scan',
    targets: shownRoute(entry.targets, every),
    status: entry.status,
    due: new Date(dueTime(entry)).toISOString(),
    finished: entry.finishedAt === null ? null : new Date(entry.finishedAt).toISOString(),
    attempts: entry.deliveries.reduce((n, d) => n + d.attempts, 0),
    lastError: failing.length ? failing.map((d) => `${d.label ?? d.target}: ${d.last_error}`).join('; ') : null,
    deliveries: entry.deliveries.map((d) => ({
      target: d.target,
      name: d.label ?? d.target,
      status: d.status,
      attempts: d.attempts,
      relay: d.relay ?? null,
      unserved: d.unserved ?? false,
    })),
    waiting: entry.waiting ?? null,
    state: scanState(entry).state,
    stateText: scanState(entry).text,
  };
}

/** A scan that failed and waits to be tried again is due at its next try, not at its first due time. */
function dueTime(entry: QueueEntry): number {
  const retries = entry.deliveries.filter((d) => d.status === 'waiting' && d.attempts > 0).map((d) => d.next_at);
  return retries.length ? Math.max(entry.dueAt, Math.min(...retries)) : entry.dueAt;
}

/** "in 8 s", "3 min ago": when a scan is due, next to its ISO time. */
export function relative(dueAt: number, now: number): string {
  const s = Math.round((dueAt - now) / 1000);
  const size = (n: number) => (n >= 5400 ? `${Math.round(n / 3600)} h` : n >= 90 ? `${Math.round(n / 60)} min` : `${n} s`);
  return s >= 0 ? `in ${size(s)}` : `${size(-s)} ago`;
}

/** Which relay sends, sent or last tried each target's delivery (a shared queue); empty when no relay is named. */
function relayNote(line: QueueLine): string {
  const said = { sending: 'being sent by', done: 'delivered by', failed: 'failed at', waiting: 'last tried by' } as Record<string, string>;
  return line.deliveries
    .filter((d) => d.relay)
    .map((d) => `${d.name} ${said[d.status] ?? `${d.status} at`} relay ${d.relay}`)
    .join(', ');
}

/** Deliveries that wait with no running relay beside their server (a shared queue). */
function unservedNote(line: QueueLine): string {
  const names = line.deliveries.filter((d) => d.unserved).map((d) => d.name);
  return names.length ? `${names.join(', ')}: no running relay has this server; it goes when one is back` : '';
}

/** `where`: the queue file, or the shared queue's URL without its password. */
export function formatQueue(where: string, counts: Record<string, number>, entries: QueueEntry[], now: number, history = false, every: readonly string[] = []): string {
  const open = (counts.pending ?? 0) + (counts.active ?? 0);
  const out = [`${where}: ${counts.pending ?? 0} pending, ${counts.active ?? 0} active (being sent or waiting to retry), ${counts.done ?? 0} done, ${counts.failed ?? 0} failed`];
  for (const e of entries) {
    const l = queueLine(e, every);
    // A scan stays "active" between its targets' tries; it is being sent only while a delivery is, and one that
    // failed says it waits to retry, and why.
    const when =
      e.finishedAt !== null
        ? `${e.status} ${l.finished} (${relative(e.finishedAt, now)})`
        : l.state === 'sending'
          ? 'being sent now'
          : l.state === 'waiting to retry'
            ? `${l.stateText}, next try ${l.due} (${relative(dueTime(e), now)})`
            : `due ${l.due} (${relative(dueTime(e), now)})${l.waiting ? `, waiting: ${l.waiting}` : ''}`;
    const asked = actionText(e.action);
    // Until it is due a scan has no deliveries to name its targets: its route does.
    const route = l.targets && !l.deliveries.length ? `for ${l.targets.join(', ')}` : '';
    const notes = [asked ? `asked: ${asked}` : '', route, relayNote(l), unservedNote(l)].filter(Boolean).map((n) => `\n    ${n}`).join('');
    out.push(`  ${l.folder}\n    ${when}, ${l.attempts} attempt(s)${l.lastError ? `, last error: ${l.lastError}` : ''}${notes}`);
  }
  if (!history && open > entries.length) out.push(`  ... and ${open - entries.length} more (--limit)`);
  return `${out.join('\n')}\n`;
}

/**
 * `scanrelay queue`: what waits in the queue, read directly (no running relay, URL or secret needed): the queue
 * file, or with SERVER_QUEUE_URL (config or environment) the queue the relays share.
 */
export function registerQueue(program: Command): void {
  program
    .command('queue')
    .description('list the scans waiting in the queue (folder, due time, attempts, last error, and on a shared queue the relay) and the counts; needs no running relay')
    .option('--limit <n>', 'scans listed at most', '50')
    .option('--history', 'list the latest finished scans (done or failed, newest first) instead, each with who delivered it on a shared queue')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { limit: string; json?: boolean; history?: boolean }, cmd: Command) => {
        const settings = settingsOf(cmd);
        const limit = Number(opts.limit);
        if (!Number.isInteger(limit) || limit < 0) throw new UserError(`--limit: expected a whole number, got "${opts.limit}"`);
        const config = queueConfigOf(settings);
        // Opening a missing file would create an empty queue and report nothing wrong.
        if (!config.SERVER_QUEUE_URL && !existsSync(settings.queuefile)) {
          throw new UserError(`no queue file at ${settings.queuefile}: the relay has not run with this config yet, or pass --queuefile / --config (or set SERVER_QUEUE_URL for a shared queue)`);
        }
        // It only reads: on a database no relay has used it says so, and creates no tables.
        const store = await openCommandQueue(settings, config, 'queue', { readOnly: true });
        try {
          const counts = await store.view.counts();
          // History pages hold at most 1,000 (QueueReads.listHistory); --limit 0 lists none, as for the open scans.
          const entries = opts.history ? (limit === 0 ? [] : await store.view.listHistory({ limit })) : await store.view.listOpen(limit);
          const queuefile = store.shared ? null : settings.queuefile;
          const every = [...config.targets.keys()];
          if (opts.json) process.stdout.write(`${JSON.stringify({ queue: store.location, queuefile, counts, scans: entries.map((e) => queueLine(e, every)) })}\n`);
          else process.stdout.write(formatQueue(store.location, counts, entries, Date.now(), opts.history, every));
        } finally {
          await store.close();
        }
      }),
    );
}
