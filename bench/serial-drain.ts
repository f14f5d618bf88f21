/**
 * Drain with one scan at a time per Plex server, on the real `scanrelay server` process: N pending scans
 * (seeded into its queue file, all due at once) delivered to a fake Plex that runs its scans one at a time,
 * announcing each `BENCH_START_DELAY_MS` (60) after the request on its notification stream, /activities and
 * `refreshing`, for the scan's own time. From Plex's own record it prints the drain time (first request to
 * the last scan's end, as scanrelay saw it) against Plex's own work (the sum of its scan times), the idle gap
 * between the end of one scan and the next request (average and longest), requests sent while Plex was
 * scanning, and whether every folder was scanned exactly once.
 *
 * Rows: scans of 0 ms, 150 ms and 3 s (BENCH_SERIAL_SCANS each, default 20), and issue 31's mix: 40 folders,
 * 37 of 150 ms and 3 of 2.5 s. Each with the notification stream ("after"), with a Plex that never streams
 * ("after, polling"), and with BENCH_BEFORE_TREE set (a checkout of the code before, e.g.
 * `git archive <commit> | tar -x -C /tmp/before` with node_modules linked in) that relay ("before").
 */
import { join } from 'node:path';
import { scanRequestSchema } from '../src/core/scan.ts';
import { QueueStore } from '../src/queue/store.ts';
import { FakePlex } from '../test/fakes/plex.ts';
import { spawnRelay, tempDir, waitFor } from '../test/helpers/relay.ts';
import { report } from './lib.ts';

type Variant = 'before' | 'after' | 'after, polling';

function seed(queuefile: string, folders: string[]): void {
  const store = new QueueStore(queuefile);
  store.enqueueMany(folders.map((folder) => scanRequestSchema.parse({ folder, files: [], source: 'Manual' })), { delayMs: 0, maxMs: 0 });
  store.close();
}

const round = (ms: number) => Math.round(ms) / 1000;

async function drain(label: string, variant: Variant, scanMs: number[]): Promise<Record<string, unknown>> {
  const plex = await new FakePlex().start();
  const folders = scanMs.map((_, i) => `/data/Movies/Film ${String(i).padStart(3, '0')} (2000)`);
  const msOf = new Map(folders.map((f, i) => [f, scanMs[i]!]));
  plex.scanStartDelayMs = Number(process.env.BENCH_START_DELAY_MS ?? 60);
  plex.scanMsFor = (path) => msOf.get(path) ?? 0;
  plex.streaming = variant === 'after';
  const dir = tempDir('scanrelay-bench-');
  seed(join(dir, 'queue.db'), folders);
  const before = process.env.BENCH_BEFORE_TREE;
  // The older relay runs in place of this one: the harness's `node <CLI>` is dropped and its launcher used.
  const prefix = variant === 'before' ? ['sh', '-c', `shift 2; exec "${process.execPath}" "${join(before!, 'bin', 'scanrelay.js')}" "$@"`, 'sh'] : undefined;
  const relay = await spawnRelay({ dir, prefix, config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_SCAN_DELAY: 3600 } });
  try {
    await waitFor(() => relay.logs.filter((l) => l.includes('"after-scan steps finished"')).length >= folders.length, 3_600_000, 'every after-step');
    const done = Date.now();
    const scans = [...plex.scans].sort((a, b) => a.requestedAt - b.requestedAt);
    const gaps = scans.slice(1).map((s, i) => s.requestedAt - (scans[i]!.endedAt ?? scans[i]!.requestedAt));
    const work = scans.reduce((sum, s) => sum + ((s.endedAt ?? 0) - (s.startedAt ?? 0)), 0);
    const once = new Set(scans.map((s) => s.path)).size === folders.length && scans.length === folders.length;
    return {
      scans: label,
      relay: variant,
      'drain s': round(done - scans[0]!.requestedAt),
      "Plex's work s": round(work),
      'idle gap avg s': round(gaps.reduce((a, b) => a + b, 0) / Math.max(1, gaps.length)),
      'idle gap max s': round(Math.max(0, ...gaps)),
      'sent while Plex scanned': scans.filter((s) => s.whileBusy).length,
      'each once': once ? 'yes' : `no (${scans.length} requests for ${folders.length} folders)`,
    };
  } finally {
    await relay.kill();
    await plex.stop();
  }
}

export async function benchSerialDrain(): Promise<Record<string, unknown>> {
  const n = Number(process.env.BENCH_SERIAL_SCANS ?? 20);
  const variants: Variant[] = [...(process.env.BENCH_BEFORE_TREE ? (['before'] as const) : []), 'after', 'after, polling'];
  const loads: Array<[string, number[]]> = [
    [`${n} x 0 ms`, Array(n).fill(0)],
    [`${n} x 150 ms`, Array(n).fill(150)],
    [`${n} x 3 s`, Array(n).fill(3000)],
    // Issue 31's drain: 37 scans of 150 ms and 3 of 2.5 s, the long ones spread through the queue.
    ['40: 37 x 150 ms, 3 x 2.5 s', Array.from({ length: 40 }, (_, i) => (i % 13 === 6 ? 2500 : 150))],
  ];
  const only = (process.env.BENCH_SERIAL_LOADS ?? '').split(',').filter(Boolean);
  const rows: Array<Record<string, unknown>> = [];
  for (const [label, ms] of loads) {
    if (only.length && !only.some((o) => label.startsWith(o))) continue;
    for (const v of variants) rows.push(await drain(label, v, ms));
  }
  report('serial drain', rows, {});
  return { serialDrain: rows };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSerialDrain();
