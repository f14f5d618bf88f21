/**
 * Idle memory of the real `scanrelay server` process, its queue in SQLite and in PostgreSQL (issue 43, item 11):
 * RSS and its anonymous part after BENCH_SETTLE_S (default 20) at rest, each relay with a fake Plex, started
 * with `npm start`'s node flags. Run: `node --import tsx -e "console.log(await (await import('./bench/pg-memory.ts')).pgMemory())"`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakePlex } from '../test/fakes/plex.ts';
import { startPgCluster } from '../test/helpers/postgres.ts';
import { spawnRelay, tempDir } from '../test/helpers/relay.ts';
import { relayNodeArgs } from './lib.ts';

const SETTLE_MS = Number(process.env.BENCH_SETTLE_S ?? 20) * 1000;
const RUNS = Number(process.env.BENCH_RUNS ?? 2);

function memoryOf(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (key: string) => Math.round(Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 102.4) / 10;
  return { rss: mb('VmRSS'), anon: mb('RssAnon') };
}

export async function pgMemory(): Promise<string> {
  const cluster = await startPgCluster();
  const plex = await new FakePlex().start();
  const lines = ['store    | RSS idle (MB) | anonymous (MB)', '---|---|---'];
  try {
    for (let run = 0; run < RUNS; run++) {
      for (const store of ['sqlite', 'postgres'] as const) {
        const extra = store === 'postgres' ? { SERVER_QUEUE_URL: await cluster.createDatabase(), SERVER_RELAY_ID: `bench-${run}` } : {};
        const relay = await spawnRelay({
          config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_SCAN_DELAY: 3600, ...extra },
          env: { SCANRELAY_LOGLEVEL: 'info' },
          nodeArgs: relayNodeArgs(),
          logFile: join(tempDir('scanrelay-bench-log-'), 'relay.log'),
        });
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        const m = memoryOf(relay.proc.pid!);
        lines.push(`${store} | ${m.rss} | ${m.anon}`);
        await relay.kill('SIGTERM');
      }
    }
  } finally {
    await plex.stop();
    cluster.destroy();
  }
  return lines.join('\n');
}
