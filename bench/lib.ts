import autocannon from 'autocannon';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  body: string;
  contentType: string;
}): Promise<LoadResult> {
  const result = await autocannon({
    url: opts.url,
    method: 'POST',
    connections: opts.connections,
    duration: opts.durationSec,
    headers: { 'content-type': opts.contentType, accept: 'application/json' },
    body: opts.body,
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

/** The baseline: a bare node:http server that reads the body and answers 200. */
export async function bareServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      Buffer.concat(chunks);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(() => r())) };
}

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
