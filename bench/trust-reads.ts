/**
 * Issue 47 items 1 and 8: what a hostile name costs the relay.
 * - Tdarr's listing of a folder of BENCH_LIST_ENTRIES (300,000) files: the relay's filesBelow (opendir, stops at the
 *   1,000-file cap) against a whole-folder readdir sorted by name (what the relay did before), each in a fresh child
 *   process: CPU seconds, peak RSS growth, the longest event-loop block, wall time, files returned.
 * - autopulse's `?hash=` naming /dev/zero, a FIFO, four FIFOs at once, a file outside the libraries and a 4 GiB
 *   file, through the real app: each answer's time, the CPU seconds the process used in the 5 s after (nothing
 *   left spinning), and how long a small file read takes while the FIFOs are held (libuv's pool is free).
 * Run alone: `node --import tsx bench/trust-reads.ts` (`BENCH_ONLY=reads` in `npm run bench`).
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, ftruncateSync, mkdirSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { FileConfig } from '../src/config/schema.ts';
import { report } from './lib.ts';

const ENTRIES = Number(process.env.BENCH_LIST_ENTRIES ?? 300_000);

/** The listing as the relay did it before issue 47: the whole folder in one readdir, sorted, then the cap. */
async function readdirWhole(folder: string, max = 1000): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true });
  entries.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  return entries.filter((e) => e.isFile()).slice(0, max).map((e) => join(folder, e.name));
}

/** One listing in this (child) process; prints its figures as JSON. */
async function child(mode: string, folder: string): Promise<void> {
  const { filesBelow } = await import('../src/targets/tdarr/target.ts');
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const rss0 = process.resourceUsage().maxRSS;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const files = mode === 'opendir' ? await filesBelow(folder) : await readdirWhole(folder);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  delay.disable();
  const out = {
    files: files.length,
    cpuS: Number(((cpu.user + cpu.system) / 1e6).toFixed(3)),
    peakRssGrowthMb: Number(((process.resourceUsage().maxRSS - rss0) / 1024).toFixed(1)),
    maxBlockMs: Number((delay.max / 1e6).toFixed(1)),
    wallMs: Math.round(wallMs),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

function runChild(mode: string, folder: string): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'child', mode, folder], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`child exited ${code}`))));
  });
}

async function listing(): Promise<Array<Record<string, unknown>>> {
  const dir = join(tmpdir(), `scanrelay-bench-list-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    for (let i = 0; i < ENTRIES; i++) writeFileSync(join(dir, `episode-${i}.mkv`), '');
    const rows: Array<Record<string, unknown>> = [];
    // Taken in turns, twice, so a busy machine's moments fall on both.
    for (let run = 0; run < 2; run++) {
      for (const mode of ['readdir (before)', 'opendir (now)']) {
        const r = await runChild(mode.startsWith('opendir') ? 'opendir' : 'readdir', dir);
        rows.push({ part: 'tdarr listing', case: `${readdirSync(dir).length} entries, ${mode}`, ...r });
      }
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function hashing(): Promise<Array<Record<string, unknown>>> {
  const { configSchema, scanDelayMax } = await import('../src/config/schema.ts');
  const { relayConfig } = await import('../src/config/named-targets.ts');
  const { silentLogger } = await import('../src/core/logger.ts');
  const { QueueIntake } = await import('../src/queue/door.ts');
  const { QueueStore } = await import('../src/queue/store.ts');
  const { buildApp } = await import('../src/server/app.ts');
  const { DEFAULT_RECOGNIZERS } = await import('../src/server/run.ts');
  const lib = join(tmpdir(), `scanrelay-bench-hash-${process.pid}`);
  mkdirSync(lib, { recursive: true });
  const fifos = [0, 1, 2, 3, 4].map((i) => join(lib, `pipe${i}.mkv`));
  for (const f of fifos) execFileSync('mkfifo', [f]);
  const big = join(lib, 'big.mkv');
  const fd = openSync(big, 'w');
  ftruncateSync(fd, 4 * 1024 ** 3);
  closeSync(fd);
  writeFileSync(join(lib, 'small.nfo'), 'x'.repeat(1000));
  const config = relayConfig(configSchema.parse({
    SERVER_PASS: 'bench-secret',
    SERVER_AUTH_USER: 'admin',
    SERVER_AUTH_PASS: 'password',
    SERVER_FILE_CHECKS_ENABLED: true,
    SERVER_FILE_CHECK_DELAY: 1,
    SERVER_AUTOPULSE_TRIGGERS: { manual: { TYPE: 'manual' } },
    // /dev as a library too, so the rule on the kind of file (not the library rule) is what stops /dev/zero.
    SERVER_PATH_MAPPINGS: { [lib]: [lib], '/dev': ['/dev'] },
  }) as FileConfig);
  const store = new QueueStore(':memory:');
  const timing = { delayMs: config.SERVER_SCAN_DELAY * 1000, maxMs: scanDelayMax(config) * 1000 };
  const app = await buildApp({ config, log: silentLogger(), intake: new QueueIntake(store, [], () => timing), store, recognizers: DEFAULT_RECOGNIZERS });
  await app.ready();
  const headers = { authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` };
  const ask = async (path: string) => {
    const t0 = performance.now();
    const res = await app.inject({ method: 'GET', url: `/triggers/manual?path=${encodeURIComponent(path)}&hash=${'0'.repeat(64)}`, headers });
    return { ms: Math.round(performance.now() - t0), status: res.statusCode, found: (res.json() as { found_status: string }).found_status };
  };
  const rows: Array<Record<string, unknown>> = [];
  try {
    for (const [what, path] of [
      ['/dev/zero', '/dev/zero'],
      ['a FIFO', fifos[0]!],
      ['/etc/passwd (outside)', '/etc/passwd'],
      ['a 4 GiB file', big],
    ] as const) {
      rows.push({ part: '?hash=', case: what, ...(await ask(path)), cpuS: '' });
    }
    const t0 = performance.now();
    const four = await Promise.all(fifos.slice(1).map(ask));
    rows.push({ part: '?hash=', case: 'four FIFOs at once', ms: Math.round(performance.now() - t0), status: four.map((f) => f.status).join(','), found: four.map((f) => f.found).join(','), cpuS: '' });
    const r0 = performance.now();
    await readFile(join(lib, 'small.nfo'));
    rows.push({ part: '?hash=', case: 'a small file read while the FIFOs are held', ms: Math.round(performance.now() - r0), status: '', found: '', cpuS: '' });
    // Five seconds at rest: the sweep checks the holds every second; nothing may spin. The 4 GiB file is hashed
    // meanwhile (two jobs at most): its CPU shows here, bounded by its time limit.
    const cpu0 = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const cpu = process.cpuUsage(cpu0);
    rows.push({ part: '?hash=', case: 'the 5 s after, at rest (the 4 GiB hash included)', ms: '', status: '', found: '', cpuS: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)) });
  } finally {
    await app.close();
    store.close();
    rmSync(lib, { recursive: true, force: true });
  }
  return rows;
}

export async function benchTrustReads(): Promise<Record<string, unknown>> {
  const lists = await listing();
  const now = lists.filter((r) => String(r.case).includes('opendir'));
  const before = lists.filter((r) => String(r.case).includes('readdir'));
  const listSummary = {
    entries: ENTRIES,
    cpuS: { before: before.map((r) => r.cpuS), now: now.map((r) => r.cpuS) },
    peakRssGrowthMb: { before: before.map((r) => r.peakRssGrowthMb), now: now.map((r) => r.peakRssGrowthMb) },
    maxBlockMs: { before: before.map((r) => r.maxBlockMs), now: now.map((r) => r.maxBlockMs) },
  };
  report('trust-reads: Tdarr listing', lists, listSummary);
  const hashes = await hashing();
  const hashSummary = { answersMs: Object.fromEntries(hashes.filter((r) => r.ms !== undefined).map((r) => [r.case, r.ms])), cpuSAfter: hashes.at(-1)?.cpuS };
  report('trust-reads: ?hash=', hashes, hashSummary);
  return { listing: listSummary, hash: hashSummary };
}

if (process.argv[2] === 'child') await child(process.argv[3]!, process.argv[4]!);
else if (import.meta.url === `file://${process.argv[1]}`) await benchTrustReads();
