import autocannon from 'autocannon';
import type { QueueBackend } from '../src/queue/backend.ts';
import { PgQueueStore } from '../src/queue/pg/store.ts';
import { QueueStore } from '../src/queue/store.ts';
import { postgresBinDir, startPgCluster } from '../test/helpers/postgres.ts';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startNodeFlags } from '../test/helpers/relay.ts';

/**
 * The node flags of the relay's process: those `npm start` runs it with (package.json), as users run it,
 * then BENCH_NODE_OPTIONS (e.g. `--max-semi-space-size=16` to compare with V8's default young generation).
 */
export function relayNodeArgs(): string[] {
  return [...startNodeFlags(), ...(process.env.BENCH_NODE_OPTIONS ?? '').split(' ').filter(Boolean)];
}

export interface LoadResult {
  label: string;
  connections: number;
  requestsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
}

/** Runs autocannon against one URL with one body for a fixed duration. */
export async function load(opts: {
  label: string;
  url: string;
  connections: number;
  durationSec: number;
  /** One body for every request, or the body of the i-th request (a new folder each time, round-robin...). */
  body: string | ((i: number) => string);
  contentType: string;
  /** At most this many requests per second over all connections (default: as fast as answered). */
  overallRate?: number;
  /** A fixed number of requests instead of `durationSec` (the same work on a busy machine as on an idle one). */
  amount?: number;
}): Promise<LoadResult> {
  const bodyOf = opts.body;
  let i = 0;
  const result = await autocannon({
    url: opts.url,
    method: 'POST',
    connections: opts.connections,
    ...(opts.amount ? { amount: opts.amount } : { duration: opts.durationSec }),
    overallRate: opts.overallRate,
    headers: { 'content-type': opts.contentType, accept: 'application/json' },
    ...(typeof bodyOf === 'string' ? { body: bodyOf } : { requests: [{ setupRequest: (req: object) => ({ ...req, body: bodyOf(i++) }) }] }),
  });
  return {
    label: opts.label,
    connections: opts.connections,
    requestsPerSec: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}

/** A server script from bench/ in its own process, as the relay is; it prints its port when listening. */
async function serverProcess(script: string, path: string): Promise<{ url: string; close: () => Promise<void> }> {
  const proc = spawn(process.execPath, [fileURLToPath(new URL(script, import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    proc.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
  });
  proc.removeAllListeners('exit');
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: async () => {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** The baseline the issue names: node:http that reads the body and answers 200 (bench/bare-server.mjs). */
export const bareServer = () => serverProcess('./bare-server.mjs', '/');

/** The framework floor: fastify + formbody parsing the body, nothing else (bench/fastify-floor.mjs). */
export const fastifyFloor = () => serverProcess('./fastify-floor.mjs', '/secret');

export function table(rows: Array<Record<string, unknown>>): string {
  if (rows.length === 0) return '';
  const cols = Object.keys(rows[0]!);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(width[i]!)).join('  ');
  return [line(cols), line(width.map((w) => '-'.repeat(w))), ...rows.map((r) => line(cols.map((c) => String(r[c]))))].join('\n');
}

export function report(name: string, rows: Array<Record<string, unknown>>, summary: Record<string, unknown>): void {
  process.stdout.write(`\n== ${name} ==\n${table(rows)}\n`);
  process.stdout.write(`${JSON.stringify({ bench: name, ...summary, rows })}\n`);
}

/** A store a bench runs against, and how to throw it away after. */
export type BenchStore = [name: string, open: () => Promise<{ store: QueueBackend; stop: () => void }>];

/** SQLite (at `sqlitePath`, in memory by default) and, when PostgreSQL's programs are installed, a throwaway cluster. */
export function benchStores(sqlitePath = ':memory:'): BenchStore[] {
  const stores: BenchStore[] = [['SQLite', async () => ({ store: new QueueStore(sqlitePath), stop: () => undefined })]];
  if (postgresBinDir()) {
    stores.push([
      'PostgreSQL',
      async () => {
        const cluster = await startPgCluster();
        return { store: await PgQueueStore.open({ url: await cluster.createDatabase(), relayId: 'bench' }), stop: () => cluster.destroy() };
      },
    ]);
  }
  return stores;
}
