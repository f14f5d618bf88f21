import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { UserError } from '../config/errors.ts';
import { QueueStore } from '../queue/store.ts';
import type { QueueEntry } from '../queue/store.ts';
import { action, settingsOf } from './context.ts';

/** One pending (or running) scan as the command shows it. */
export interface QueueLine {
  folder: string;
  status: string;
  due: string;
  attempts: number;
  lastError: string | null;
}

export function queueLine(entry: QueueEntry): QueueLine {
  const failing = entry.deliveries.filter((d) => d.last_error);
  return {
    folder: entry.folder,
    status: entry.status,
    due: new Date(dueTime(entry)).toISOString(),
    attempts: entry.deliveries.reduce((n, d) => n + d.attempts, 0),
    lastError: failing.length ? failing.map((d) => `${d.target}: ${d.last_error}`).join('; ') : null,
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

export function formatQueue(file: string, counts: Record<string, number>, entries: QueueEntry[], now: number): string {
  const open = (counts.pending ?? 0) + (counts.active ?? 0);
  const out = [`${file}: ${counts.pending ?? 0} pending, ${counts.active ?? 0} in progress, ${counts.done ?? 0} done, ${counts.failed ?? 0} failed`];
  for (const e of entries) {
    const l = queueLine(e);
    // A scan stays "active" between its targets' tries; it is being sent only while a delivery is.
    const when = e.deliveries.some((d) => d.status === 'sending') ? 'being sent now' : `due ${l.due} (${relative(dueTime(e), now)})`;
    out.push(`  ${l.folder}\n    ${when}, ${l.attempts} attempt(s)${l.lastError ? `, last error: ${l.lastError}` : ''}`);
  }
  if (open > entries.length) out.push(`  ... and ${open - entries.length} more (--limit)`);
  return `${out.join('\n')}\n`;
}

/** `scanrelay queue`: what waits in the queue file, read directly (no running relay, URL or secret needed). */
export function registerQueue(program: Command): void {
  program
    .command('queue')
    .description('list the scans waiting in the queue file (folder, due time, attempts, last error) and the counts; needs no running relay')
    .option('--limit <n>', 'scans listed at most', '50')
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { limit: string; json?: boolean }, cmd: Command) => {
        const { queuefile } = settingsOf(cmd);
        const limit = Number(opts.limit);
        if (!Number.isInteger(limit) || limit < 0) throw new UserError(`--limit: expected a whole number, got "${opts.limit}"`);
        // Opening a missing file would create an empty queue and report nothing wrong.
        if (!existsSync(queuefile)) throw new UserError(`no queue file at ${queuefile}: the relay has not run with this config yet, or pass --queuefile / --config`);
        const store = new QueueStore(queuefile);
        try {
          const counts = store.view.counts();
          const entries = store.view.listOpen(limit);
          if (opts.json) process.stdout.write(`${JSON.stringify({ queuefile, counts, scans: entries.map(queueLine) })}\n`);
          else process.stdout.write(formatQueue(queuefile, counts, entries, Date.now()));
        } finally {
          store.close();
        }
      }),
    );
}
