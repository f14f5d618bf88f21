/**
 * Intake throughput: the real `scanrelay server` process (fake Plex on loopback, SQLite queue on disk)
 * against a bare node:http server that reads the body and answers 200, same load, same run.
 * Every accepted request is committed to the queue file before its answer.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakePlex } from '../test/fakes/plex.ts';
import { spawnRelay, tempDir } from '../test/helpers/relay.ts';
import { bareServer, fastifyFloor, load, relayNodeArgs, report, type LoadResult } from './lib.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,50,200').split(',').map(Number);

const sonarr = readSonarrPayload();

function readSonarrPayload(): string {
  try {
    return readFileSync(new URL('../test/fixtures/arr/sonarr/download.json', import.meta.url), 'utf8');
  } catch {
    return JSON.stringify({
      eventType: 'Download',
      series: { id: 12, title: 'Westworld', path: '/tv/Westworld', tvdbId: 296762 },
      episodeFile: { id: 901, relativePath: 'Season 01/Westworld - S01E01.mkv', path: '/tv/Westworld/Season 01/Westworld - S01E01.mkv' },
      isUpgrade: false,
    });
  }
}

/** Requests/s of one server over another's, to two decimals. */
const ratioOf = (a: LoadResult, b: LoadResult) => Math.round((a.requestsPerSec / b.requestsPerSec) * 100) / 100;

export async function benchIntake(): Promise<Record<string, unknown>> {
  const plex = await new FakePlex().start();
  const relay = await spawnRelay({
    config: {
      PLEX_LOCAL_URL: plex.url,
      PLEX_TOKEN: plex.token,
      SERVER_SCAN_DELAY: 3600,
      SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'], '/data/Movies/': ['/movies/'] },
    },
    env: { SCANRELAY_LOGLEVEL: 'info' },
    nodeArgs: relayNodeArgs(),
    logFile: join(tempDir('scanrelay-bench-log-'), 'relay.log'),
  });
  const bare = await bareServer();
  const floor = await fastifyFloor();
  const form = 'application/x-www-form-urlencoded';
  const manual = (folder: string) => `eventType=Manual&filepath=${encodeURIComponent(`/movies/${folder}/f.mkv`)}`;
  // The same folder every time is the best case (after the first, each commit updates one row); a new folder
  // every time inserts a scan per request; 1,000 folders round-robin merges into scans that already exist.
  const loads: Array<{ name: string; body: string | ((i: number) => string); type: string }> = [
    { name: 'manual form', body: 'eventType=Manual&filepath=%2Fmovies%2FHeat%20(1995)%2FHeat.mkv', type: form },
    { name: 'manual new folder', body: (i: number) => manual(`New ${process.pid}-${Date.now()}-${i} (2000)`), type: form },
    { name: 'manual round-robin', body: (i: number) => manual(`Film ${i % 1000} (2000)`), type: form },
    { name: 'sonarr webhook', body: sonarr, type: 'application/json' },
  ].filter((l) => !process.env.BENCH_LOADS || process.env.BENCH_LOADS.split(',').some((w) => l.name.startsWith(w)));
  const rows: Array<Record<string, unknown>> = [];
  const ratios: Record<string, number> = {};
  const floorRatios: Record<string, number> = {};
  try {
    for (const l of loads) {
      for (const c of CONCURRENCY) {
        const run = (label: string, url: string) => load({ label: `${label} ${l.name}`, url, connections: c, durationSec: DURATION, body: l.body, contentType: l.type });
        const ours: LoadResult = await run('scanrelay', relay.url);
        const base: LoadResult = await run('bare node:http', bare.url);
        const framework: LoadResult = await run('fastify floor', floor.url);
        const ratio = ratioOf(ours, base);
        const ofFloor = ratioOf(ours, framework);
        ratios[`${l.name} c${c}`] = ratio;
        floorRatios[`${l.name} c${c}`] = ofFloor;
        for (const r of [ours, base, framework]) rows.push({ load: r.label, c: r.connections, 'req/s': r.requestsPerSec, 'p50 ms': r.p50, 'p99 ms': r.p99, errors: r.errors, non2xx: r.non2xx });
        rows.push({ load: `ratio scanrelay/bare`, c, 'req/s': ratio, 'p50 ms': '', 'p99 ms': '', errors: '', non2xx: '' });
        rows.push({ load: `ratio scanrelay/fastify floor`, c, 'req/s': ofFloor, 'p50 ms': '', 'p99 ms': '', errors: '', non2xx: '' });
        const floorOfBare = ratioOf(framework, base);
        rows.push({ load: `ratio fastify floor/bare`, c, 'req/s': floorOfBare, 'p50 ms': '', 'p99 ms': '', errors: '', non2xx: '' });
      }
    }
  } finally {
    await bare.close();
    await floor.close();
    await relay.kill();
    await plex.stop();
  }
  const summary = { durationSec: DURATION, ratios, ofFastifyFloor: floorRatios };
  report('intake', rows, summary);
  return summary;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchIntake();
