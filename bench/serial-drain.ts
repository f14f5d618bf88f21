/**
 * Drain with one scan at a time per Plex server, on the real `scanrelay server` process: N pending scans
 * (seeded into its queue file, all due at once) delivered to a fake Plex whose every partial scan shows as
 * a running library scan on /activities for `scanMs`, as a real Plex's does while it scans. The time runs
 * until the queue is empty and the last scan's after-steps (the completion watch) ended. Also checks from
 * Plex's own call log that no refresh was sent while another scan was still running.
 */
import { join } from 'node:path';
import { scanRequestSchema } from '../src/core/scan.ts';
import { QueueStore } from '../src/queue/store.ts';
import { FakePlex } from '../test/fakes/plex.ts';
import { spawnRelay, tempDir, waitFor } from '../test/helpers/relay.ts';
import { report } from './lib.ts';

function seed(queuefile: string, n: number): void {
  const store = new QueueStore(queuefile);
  const batch = Array.from({ length: n }, (_, j) =>
    scanRequestSchema.parse({ folder: `/data/Movies/Film ${j} (2000)`, files: [`/data/Movies/Film ${j} (2000)/f.mkv`], source: 'Manual' }),
  );
  store.enqueueMany(batch, { delayMs: 0, maxMs: 0 });
  store.close();
}

async function serialDrain(n: number, scanMs: number): Promise<Record<string, unknown>> {
  const plex = await new FakePlex().start();
  plex.scanActivityMs = scanMs;
  const dir = tempDir('scanrelay-bench-');
  seed(join(dir, 'queue.db'), n);
  const started = Date.now();
  const relay = await spawnRelay({ dir, config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_SCAN_DELAY: 3600 } });
  try {
    await waitFor(() => plex.refreshes().length >= n, 3_600_000, 'all scans sent');
    // The last scan counts once Plex finished it and scanrelay saw that (its turn ends with its after-steps).
    await waitFor(() => relay.logs.filter((l) => l.includes('"after-scan steps finished"')).length >= n, 600_000, 'last after-steps');
    const ms = Date.now() - started;
    const sent = plex.calls.filter((c) => c.status === 200 && /\/refresh$/.test(c.path));
    const overlaps = sent.filter((c, i) => i > 0 && c.at < sent[i - 1]!.at + scanMs).length;
    return { scans: n, 'plex scan ms': scanMs, seconds: Math.round(ms / 100) / 10, 'ms per scan': Math.round(ms / n), 'refreshes sent while Plex scanned': overlaps };
  } finally {
    await relay.kill();
    await plex.stop();
  }
}

export async function benchSerialDrain(): Promise<Record<string, unknown>> {
  const n = Number(process.env.BENCH_SERIAL_SCANS ?? 20);
  const rows = [await serialDrain(n, 0), await serialDrain(n, 500), await serialDrain(n, 3000)];
  report('serial drain', rows, {});
  return { serialDrain: rows };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSerialDrain();
