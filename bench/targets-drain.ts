/**
 * Named targets (issue 39): the drain of BENCH_TARGET_SCANS (500) scans due at once through the real queue,
 * scheduler and targets, to Plex alone and to Plex beside a Jellyfin and a Tdarr. Plex takes one scan at a time
 * (its turn, paced by its notification stream); the others take theirs concurrently. The figure that matters is
 * Plex's own drain: the time until Plex received the last scan, and the idle gap Plex sees between scans. The
 * added targets must cost it nothing. The two set-ups take turns (BENCH_TARGET_RUNS pairs, default 3), each run on
 * fresh fakes and a fresh queue file; the table has each run and the medians. The fake Plex's scans may be
 * given a start delay and a length (BENCH_START_DELAY_MS, BENCH_TARGET_SCAN_MS; 0 by default). The fakes run in
 * this process (the servers' side of each request is then counted too) or, with BENCH_TARGET_FAKES=process, in
 * one of their own. Each run also reports the CPU time this process spent in the drain.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tdarrTargetSchema } from '../src/targets/tdarr/schema.ts';
import type { Target } from '../src/core/scan.ts';
import { silentLogger } from '../src/core/logger.ts';
import { QueueIntake } from '../src/queue/door.ts';
import { Scheduler } from '../src/queue/scheduler.ts';
import { QueueStore } from '../src/queue/store.ts';
import { mediaBrowserTarget } from '../src/targets/media-browser/target.ts';
import { createTdarrTarget } from '../src/targets/tdarr/target.ts';
import { FakeMediaServer } from '../test/fakes/jellyfin.ts';
import { FakePlex } from '../test/fakes/plex.ts';
import { FakeTdarr } from '../test/fakes/tdarr.ts';
import { tempDir, waitFor } from '../test/helpers/relay.ts';
import { report } from './lib.ts';
import { scanOnlyPlex } from './scan-only.ts';
import type { FakesCounts, FakesStart } from './targets-fakes.ts';

const SCANS = Number(process.env.BENCH_TARGET_SCANS ?? 500);
const RUNS = Number(process.env.BENCH_TARGET_RUNS ?? 3);
/** Each Plex scan shows this long after its request, and lasts this long (serial-drain.ts's kind of fake Plex). */
const START_DELAY_MS = Number(process.env.BENCH_START_DELAY_MS ?? 0);
const SCAN_MS = Number(process.env.BENCH_TARGET_SCAN_MS ?? 0);
/** The second set of runs: each Plex answer takes this long (FakePlex latencyMs), so Plex, not the relay, sets the pace. */
const LATENCY_MS = Number(process.env.BENCH_PLEX_ANSWER_MS ?? 10);
/** `process`: the fakes run in a process of their own (targets-fakes.ts), as real servers do; `inline` (default): in this one. */
const FAKES = process.env.BENCH_TARGET_FAKES === 'process' ? 'process' : 'inline';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Fakes {
  urls: { plex: string; plexToken: string; jellyfin: string; tdarr: string };
  counts(): Promise<FakesCounts>;
  gaps(): Promise<number[]>;
  stop(): Promise<void>;
}

/** The three fakes in this process. */
async function inlineFakes(opts: FakesStart): Promise<Fakes> {
  const plex = await new FakePlex({ sections: [{ id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] }] }).start();
  const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
  const tdarr = await new FakeTdarr().start();
  plex.scanStartDelayMs = opts.startDelayMs;
  plex.latencyMs = opts.latencyMs;
  plex.scanMsFor = () => opts.scanMs;
  return {
    urls: { plex: plex.url, plexToken: plex.token, jellyfin: jellyfin.url, tdarr: tdarr.url },
    counts: async () => ({ plexScans: plex.refreshes().length, lastPlexAt: plex.scans.at(-1)?.requestedAt ?? 0, others: jellyfin.updates.length + tdarr.scans.flatMap((x) => x.arrayOrPath).length, otherRequests: jellyfin.calls.filter((c) => c.path === '/Library/Media/Updated').length + tdarr.scans.length }),
    gaps: async () => {
      const s = plex.scans;
      return s.slice(1).map((x, i) => (s[i]!.endedAt !== undefined ? x.requestedAt - s[i]!.endedAt! : 0)).filter((g) => g >= 0);
    },
    stop: async () => void (await Promise.all([plex.stop(), jellyfin.stop(), tdarr.stop()])),
  };
}

/** The three fakes in a child process (targets-fakes.ts), asked over IPC. */
async function processFakes(opts: FakesStart): Promise<Fakes> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./targets-fakes.ts', import.meta.url)), { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let next = 0;
  const waiting = new Map<number, (out: unknown) => void>();
  child.on('message', (m: { id: number; out: unknown }) => waiting.get(m.id)?.(m.out));
  const ask = <T>(cmd: string, o?: FakesStart) =>
    new Promise<T>((resolve) => {
      const id = ++next;
      waiting.set(id, (out) => (waiting.delete(id), resolve(out as T)));
      child.send({ id, cmd, opts: o });
    });
  const urls = await ask<Fakes['urls']>('start', opts);
  return {
    urls,
    counts: () => ask<FakesCounts>('counts'),
    gaps: () => ask<number[]>('gaps'),
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      await ask('stop');
      await exited;
    },
  };
}

export async function drain(withOthers: boolean, latencyMs: number): Promise<{ plexMs: number; allMs: number; cpuMs: number; gapMs: number; plexScans: number; others: number; otherRequests: number }> {
  const opts = { latencyMs, startDelayMs: START_DELAY_MS, scanMs: SCAN_MS };
  const fakes = FAKES === 'process' ? await processFakes(opts) : await inlineFakes(opts);
  const store = new QueueStore(join(tempDir('scanrelay-bench-targets-'), 'queue.db'));
  const log = silentLogger();
  // Plex's turn ends when its scan request is answered (no completion watch, as coalesce.ts): the figure is what
  // the queue, the scheduler and the other targets cost Plex's deliveries. Pacing by Plex's own notification
  // stream is serial-drain.ts's subject.
  const targets: Target[] = [scanOnlyPlex({ url: fakes.urls.plex, token: fakes.urls.plexToken }, log)];
  if (withOthers) {
    targets.push(mediaBrowserTarget('jellyfin', fakes.urls.jellyfin, 'jf-key', log, undefined, 'jf'));
    targets.push(createTdarrTarget('tdarr', tdarrTargetSchema.parse({ TYPE: 'tdarr', URL: fakes.urls.tdarr, DB_ID: 'db' }), log));
  }
  try {
    const intake = new QueueIntake(store, [], () => ({ delayMs: 0, maxMs: 0 }));
    const requests = Array.from({ length: SCANS }, (_, i) => ({ folder: `/data/Movies/Movie ${i}`, files: [`/data/Movies/Movie ${i}/m${i}.mkv`], source: 'Manual' as const }));
    for (let i = 0; i < requests.length; i += 100) await intake.enqueue(requests.slice(i, i + 100));
    const scheduler = new Scheduler(store, targets, log, { concurrency: 8 });
    const started = Date.now();
    // CPU time is steadier than the clock on a shared machine: what this process spent, whoever else runs.
    const cpu = process.cpuUsage();
    void scheduler.start();
    // Plex's drain ends when the fake received the last scan request (its own clock: the same machine's).
    const last = await waitFor(async () => {
      const c = await fakes.counts();
      return c.plexScans >= SCANS ? c : undefined;
    }, 600_000, 'Plex drain');
    const plexMs = last!.lastPlexAt - started;
    await waitFor(() => store.countOpen() === 0, 600_000, 'every target');
    const allMs = Date.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    await scheduler.stop();
    // Plex's idle time between the end of one scan and the next request: what a slower turn would show.
    const gaps = await fakes.gaps();
    const c = await fakes.counts();
    return { plexMs, allMs, cpuMs: Math.round((user + system) / 1000), gapMs: gaps.length ? median(gaps) : 0, plexScans: c.plexScans, others: c.others, otherRequests: c.otherRequests };
  } finally {
    store.close();
    await fakes.stop();
  }
}

export async function benchTargetsDrain(): Promise<Record<string, unknown>> {
  const rows: Array<Record<string, unknown>> = [];
  const summary: Record<string, unknown> = {};
  // 0 ms: the relay's own cost decides the drain; LATENCY_MS: Plex's answers do, as a real Plex's do.
  for (const latency of [0, LATENCY_MS]) {
    const by: Record<string, Array<Awaited<ReturnType<typeof drain>>>> = { one: [], three: [] };
    for (let run = 1; run <= RUNS; run++) {
      for (const withOthers of [false, true]) {
        const r = await drain(withOthers, latency);
        by[withOthers ? 'three' : 'one']!.push(r);
        rows.push({ 'Plex answers ms': latency, run, targets: withOthers ? 'Plex + Jellyfin + Tdarr' : 'Plex', 'Plex drain ms': r.plexMs, 'all drained ms': r.allMs, 'relay CPU ms': r.cpuMs, 'Plex idle gap p50 ms': r.gapMs, 'Plex scans': r.plexScans, 'other deliveries': r.others, 'their requests': r.otherRequests });
      }
    }
    summary[`answers ${latency} ms`] = Object.fromEntries(Object.entries(by).map(([k, v]) => [k, { plexMs: median(v.map((r) => r.plexMs)), allMs: median(v.map((r) => r.allMs)), cpuMs: median(v.map((r) => r.cpuMs)) }]));
  }
  report('targets-drain', rows, { scans: SCANS, fakes: FAKES, median: summary });
  return summary;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchTargetsDrain();
