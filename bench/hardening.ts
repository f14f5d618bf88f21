/**
 * Issue 23's figures: how the relay holds with 1,100 slow clients under a 1,024-file limit beside a
 * normal webhook load, how long a 25,000-file Sonarr payload blocks the event loop, and how fast a POST is
 * answered while another process holds the queue file's lock. Figures only; nothing asserts on time.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { FakePlex } from '../test/fakes/plex.ts';
import { buildTestApp, SECRET } from '../test/helpers/app.ts';
import { spawnRelay } from '../test/helpers/relay.ts';
import { openSlowClients } from '../test/helpers/slow-clients.ts';
import { load, report } from './lib.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const sonarr = readFileSync(new URL('../test/fixtures/arr/sonarr/download.json', import.meta.url), 'utf8');
const JSON_TYPE = { 'content-type': 'application/json', accept: 'application/json' };

async function timed(fn: () => Promise<Response>): Promise<{ ms: number; status: number }> {
  const t = performance.now();
  const res = await fn();
  await res.arrayBuffer();
  return { ms: Math.round((performance.now() - t) * 10) / 10, status: res.status };
}

/** Twenty webhooks one after another and twenty /healthz: the slowest of each, and their statuses. */
async function probe(url: string, base: string) {
  const hooks = [];
  const health = [];
  for (let i = 0; i < 20; i++) {
    hooks.push(await timed(() => fetch(url, { method: 'POST', headers: JSON_TYPE, body: sonarr })));
    health.push(await timed(() => fetch(`${base}/healthz`)));
  }
  return {
    webhookMaxMs: Math.max(...hooks.map((h) => h.ms)),
    webhookOk: hooks.filter((h) => h.status === 200).length,
    healthzMaxMs: Math.max(...health.map((h) => h.ms)),
  };
}

async function slowClients(): Promise<Record<string, unknown>> {
  const plex = await new FakePlex().start();
  const relay = await spawnRelay({
    config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_SCAN_DELAY: 3600, SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'] } },
    env: { SCANRELAY_LOGLEVEL: 'info' },
    prefix: ['prlimit', '--nofile=1024:1024', '--'],
  });
  const rows: Array<Record<string, unknown>> = [];
  try {
    const run = async (label: string) => {
      const single = await probe(relay.url, relay.base);
      const l = await load({ label, url: relay.url, connections: 10, durationSec: DURATION, body: sonarr, contentType: 'application/json' });
      rows.push({ load: label, ...single, 'req/s (c=10)': l.requestsPerSec, 'p99 ms': l.p99, errors: l.errors, non2xx: l.non2xx, closedByRelay: 0 });
    };
    // Warm-up (JIT, first queue writes), not reported.
    await probe(relay.url, relay.base);
    await run('no slow clients');
    for (const kind of ['headers', 'body'] as const) {
      const slow = await openSlowClients(relay.port, 1100, kind);
      await run(`1,100 slow ${kind === 'headers' ? 'headers' : 'bodies to a wrong path'}`);
      rows[rows.length - 1]!.closedByRelay = slow.closedByServer();
      slow.stop();
    }
  } finally {
    await relay.kill();
    await plex.stop();
  }
  report('slow clients (relay under prlimit --nofile=1024)', rows, {});
  return { rows };
}

/** The longest gap between 1 ms ticks while one request is handled in process: the event loop's longest block. */
async function fanOut(): Promise<Record<string, unknown>> {
  const payload = JSON.parse(readFileSync(new URL('../test/fixtures/arr/sonarr/download-v4-multi.json', import.meta.url), 'utf8'));
  const rows: Array<Record<string, unknown>> = [];
  for (const [files, folders] of [
    [25_000, 25_000],
    [25_000, 20],
    [2_000, 1_000],
    [25_000, 1],
  ] as const) {
    payload.episodeFiles = Array.from({ length: files }, (_, i) => ({ path: `/tv/W/S${i % folders}/${i}.mkv` }));
    const body = JSON.stringify(payload);
    // The first payload of its size meets code V8 has not optimised yet; the second shows a relay that has run a while.
    for (const run of ['first', 'second']) {
      const t = await buildTestApp({ SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'] } });
      let last = performance.now();
      let worst = 0;
      const tick = setInterval(() => {
        const now = performance.now();
        worst = Math.max(worst, now - last);
        last = now;
      }, 1);
      const started = performance.now();
      const res = await t.app.inject({ method: 'POST', url: `/${SECRET}`, payload: body, headers: JSON_TYPE });
      const took = performance.now() - started;
      await new Promise((r) => setTimeout(r, 5)); // let the tick after the last block run
      clearInterval(tick);
      rows.push({ files, folders, run, 'payload KB': Math.round(body.length / 1024), status: res.statusCode, queued: t.store.countOpen(), 'total ms': Math.round(took), 'longest block ms': Math.round(worst) });
      await t.close();
    }
  }
  report('fan-out (in process)', rows, {});
  return { rows };
}

async function lockedQueue(): Promise<Record<string, unknown>> {
  const relay = await spawnRelay({ config: {}, env: { SCANRELAY_LOGLEVEL: 'info' } });
  const sqlite = spawn('sqlite3', [relay.queuefile], { stdio: ['pipe', 'pipe', 'ignore'] });
  let out = '';
  sqlite.stdout.on('data', (d) => (out += d));
  sqlite.stdin.write(`BEGIN EXCLUSIVE;\nINSERT INTO meta (key, value) VALUES ('bench', 'x');\nSELECT 'locked';\n`);
  while (!out.includes('locked')) await new Promise((r) => setTimeout(r, 10));
  const [hook, health] = await Promise.all([
    timed(() => fetch(relay.url, { method: 'POST', headers: JSON_TYPE, body: sonarr })),
    timed(() => fetch(`${relay.base}/healthz`)),
  ]);
  sqlite.stdin.end('ROLLBACK;\n.quit\n');
  await new Promise((r) => sqlite.on('exit', r));
  await relay.kill();
  const rows = [
    { request: 'POST webhook', status: hook.status, ms: hook.ms },
    { request: 'GET /healthz (at the same time)', status: health.status, ms: health.ms },
  ];
  report('queue file locked by another process', rows, {});
  return { rows };
}

export async function benchHardening(): Promise<Record<string, unknown>> {
  return { slowClients: await slowClients(), fanOut: await fanOut(), lockedQueue: await lockedQueue() };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // `node --import tsx bench/hardening.ts fan-out` runs only the fan-out part.
  if (process.argv[2] === 'fan-out') await fanOut();
  else await benchHardening();
}
