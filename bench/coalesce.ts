/**
 * Coalescing: a burst of N requests over M distinct folders (plus requests for nested folders below
 * them) through the real intake -> queue -> scheduler -> Plex target, counting the scans Plex receives.
 * Target: exactly M, for N up to 100,000.
 */
import { join } from 'node:path';
import { silentLogger } from '../src/core/logger.ts';
import { QueueIntake } from '../src/queue/door.ts';
import { Scheduler } from '../src/queue/scheduler.ts';
import { QueueStore } from '../src/queue/store.ts';
import { FakePlex } from '../test/fakes/plex.ts';
import { tempDir, waitFor } from '../test/helpers/relay.ts';
import { report } from './lib.ts';
import { scanOnlyPlex } from './scan-only.ts';

async function burst(n: number, m: number, plex: FakePlex): Promise<Record<string, unknown>> {
  const store = new QueueStore(join(tempDir('scanrelay-bench-'), 'queue.db'));
  const log = silentLogger();
  const scheduler = new Scheduler(store, [scanOnlyPlex(plex, log)], log, { concurrency: 8 });
  // The cap is longer than the burst, so only the debounce decides: the scan follows the last request.
  const timing = { delayMs: 1000, maxMs: 120_000 };
  const intake = new QueueIntake(store, [], () => timing, () => scheduler.poke());
  scheduler.start();
  const before = plex.refreshes().length;
  const started = Date.now();
  // Requests arrive in waves of 500 concurrent callers, as a busy import would send them.
  for (let i = 0; i < n; i += 500) {
    const wave = [];
    for (let j = i; j < Math.min(n, i + 500); j++) {
      const folder = `/data/TV/Show ${j % m}`;
      // Every third request names a nested season folder: the pending show folder absorbs it.
      const target = j % 3 === 0 && j >= m ? `${folder}/Season ${j % 7}` : folder;
      wave.push(intake.enqueue([{ folder: target, files: [`${target}/e${j}.mkv`], source: 'Manual' }]));
    }
    await Promise.all(wave);
  }
  const intakeMs = Date.now() - started;
  await waitFor(() => store.countOpen() === 0, 120_000, 'drain');
  const scans = plex.refreshes().length - before;
  await scheduler.stop();
  store.close();
  return { requests: n, folders: m, 'scans issued': scans, 'scans per folder': Math.round((scans / m) * 100) / 100, 'intake ms': intakeMs };
}

export async function benchCoalesce(): Promise<Record<string, unknown>> {
  const plex = await new FakePlex({ sections: [{ id: '2', title: 'TV', type: 'show', locations: ['/data/TV'] }] }).start();
  const rows = [];
  try {
    for (const [n, m] of [[1_000, 5], [10_000, 50], [100_000, 500]] as const) rows.push(await burst(n, m, plex));
  } finally {
    await plex.stop();
  }
  const exact = rows.every((r) => r['scans issued'] === r.folders);
  report('coalesce', rows, { exact });
  return { exact };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchCoalesce();
