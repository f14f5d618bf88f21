import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './temp-dir.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = join(ROOT, 'bin', 'scanrelay.js');

/**
 * The node flags `npm start` runs the relay with (package.json's start script, which must read
 * `node [--flag ...] bin/scanrelay.js server`): the Dockerfile, the systemd unit and the benches use the same.
 */
/** The command `npm start` runs, without the shell's `exec` that makes node npm's own child. */
export function startCommand(): string {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  return start.replace(/^exec /, '');
}

export function startNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const flags = /^(?:exec )?node ((?:--\S+ )*)bin\/scanrelay\.js server$/.exec(start);
  if (!flags) throw new Error(`package.json's start script is not "exec node [flags] bin/scanrelay.js server": ${start}`);
  return flags[1]!.split(' ').filter(Boolean);
}

/**
 * How long a child process may take to start or end before the test calls it hung and kills it. A guard, not a
 * speed check: a relay started through tsx took 32 s to log its scan URL beside two busy loops on a shared
 * 2-core machine, past the 30 s this used to be. It stays under the runner's --test-timeout (300 s), so a real
 * hang still fails with the output so far and leaves no process behind.
 */
export const HANG_MS = 240_000;

// Tests have always taken their temp folders from here; the folders are removed when the test file's process ends.
export { tempDir };

export interface RelayProcess {
  proc: ChildProcess;
  url: string;
  base: string;
  secret: string;
  port: number;
  dir: string;
  configPath: string;
  queuefile: string;
  logs: string[];
  /** Parsed JSON log lines. */
  events(): Array<Record<string, any>>;
  waitForLog(predicate: (e: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface SpawnOptions {
  dir?: string;
  /** Written as config.json (SERVER_PORT 0, a fixed SERVER_PASS and file checks off are filled in when absent). */
  config?: Record<string, unknown>;
  /** Use an existing config file instead. */
  configPath?: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /**
   * Send the relay's stdout to this file instead of a pipe, and stop reading it once started
   * (benchmarks: the harness then spends no CPU on log lines while it generates load).
   */
  logFile?: string;
  /** Flags for the relay's node process (before the script), e.g. `--cpu-prof` for a benchmark. */
  nodeArgs?: string[];
  /** A command the relay runs under, e.g. `['prlimit', '--nofile=1024:1024', '--']`. */
  prefix?: string[];
  /**
   * The queue file the relay uses. Given, no --queuefile is passed: the relay finds it as a user's would
   * (a test of the defaults). Absent: --queuefile <dir>/queue.db.
   */
  expectQueuefile?: string;
  /** The launcher to run instead of this checkout's bin/scanrelay.js (a copy with a bundle of its own). */
  cli?: string;
}

/** Starts the real `scanrelay server` process and waits until it logs its scan URL. */
export async function spawnRelay(opts: SpawnOptions = {}): Promise<RelayProcess> {
  const dir = opts.dir ?? tempDir();
  const configPath = opts.configPath ?? join(dir, 'config.json');
  if (opts.config) {
    // File checks (plex_autoscan's default: on) need files on disk; tests that exercise them turn them on.
    // Analyze (default basic) looks for each scanned file's item, in Plex's database or through its API, and
    // waits up to 5 x 10 s for it while Plex's one-at-a-time turn is held: the fake Plex lists no items for
    // a folder it was asked to scan, so tests that exercise analyze turn it on with items to find.
    writeFileSync(
      configPath,
      JSON.stringify({ SERVER_PORT: 0, SERVER_IP: '127.0.0.1', SERVER_PASS: 'test-secret', SERVER_FILE_CHECKS_ENABLED: false, PLEX_ANALYZE_TYPE: 'off', ...opts.config }, null, 2),
    );
  }
  const queuefile = opts.expectQueuefile ?? join(dir, 'queue.db');
  const queueArgs = opts.expectQueuefile ? [] : ['--queuefile', queuefile];
  const logFd = opts.logFile ? openSync(opts.logFile, 'a') : undefined;
  const [command, ...prefixArgs] = [...(opts.prefix ?? []), process.execPath];
  // A first start (no file yet) names the file through SCANRELAY_CONFIG, as the Docker image does: a --config
  // naming a missing file writes the starter file and stops, as plex_autoscan does.
  const firstStart = !existsSync(configPath);
  const configArgs = firstStart ? [] : ['--config', configPath];
  const proc = spawn(command!, [...prefixArgs, ...(opts.nodeArgs ?? []), opts.cli ?? CLI, ...configArgs, ...queueArgs, ...(opts.args ?? []), 'server'], {
    cwd: dir,
    env: { ...process.env, SCANRELAY_LOGLEVEL: 'debug', ...(firstStart ? { SCANRELAY_CONFIG: configPath } : {}), ...opts.env },
    stdio: ['ignore', logFd ?? 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const listeners = new Set<() => void>();
  let buffer = '';
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      logs.push(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
    for (const l of listeners) l();
  };
  let logPoll: NodeJS.Timeout | undefined;
  if (opts.logFile) {
    let offset = 0;
    logPoll = setInterval(() => {
      const all = readFileSync(opts.logFile!);
      if (all.length > offset) onData(all.subarray(offset));
      offset = all.length;
    }, 50);
  } else {
    proc.stdout!.on('data', onData);
  }
  proc.stderr!.on('data', onData);
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));

  const events = () =>
    logs.flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
  const waitForLog = (predicate: (e: Record<string, any>) => boolean, timeoutMs = 15_000) =>
    new Promise<Record<string, any>>((resolveWait, reject) => {
      const check = () => {
        const hit = events().find(predicate);
        if (hit) {
          listeners.delete(check);
          clearTimeout(timer);
          resolveWait(hit);
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`timed out waiting for a log line; last lines:\n${logs.slice(-15).join('\n')}`));
      }, timeoutMs);
      listeners.add(check);
      void exited.then(() => {
        if (listeners.has(check)) {
          listeners.delete(check);
          clearTimeout(timer);
          reject(new Error(`relay exited; last lines:\n${logs.slice(-15).join('\n')}`));
        }
      });
      check();
    });

  const started = await waitForLog((e) => typeof e.msg === 'string' && e.msg.startsWith('scan URL'), HANG_MS);
  if (logFd !== undefined) {
    clearInterval(logPoll);
    closeSync(logFd);
  }
  // The log shows the secret shortened (except on the first start); the config file holds it.
  const shownUrl: string = started.url.replace('localhost', '127.0.0.1');
  const base = shownUrl.slice(0, shownUrl.lastIndexOf('/'));
  const envPass = opts.env?.SERVER_PASS;
  const secret: string = envPass !== undefined ? JSON.parse(envPass) : JSON.parse(readFileSync(configPath, 'utf8')).SERVER_PASS;
  const url = `${base}/${encodeURIComponent(secret)}`;
  return {
    proc,
    url,
    base,
    secret,
    port: started.port,
    dir,
    configPath,
    queuefile,
    logs,
    events,
    waitForLog,
    kill: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/**
 * Runs a program to its end (killed after `timeoutMs`, HANG_MS by default), or until `until` says its output so far
 * is enough (then SIGTERM); stdout and stderr together, as a terminal shows them.
 */
export function runProcess(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; until?: (out: string) => boolean; timeoutMs?: number } = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolveRun) => {
    const proc = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => proc.kill('SIGKILL'), opts.timeoutMs ?? HANG_MS);
    const onData = (d: Buffer) => {
      out += d;
      if (opts.until?.(out)) proc.kill('SIGTERM');
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ code, out });
    });
  });
}

/** Runs the CLI to completion and returns its exit code and output. */
export function runCli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    const proc = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => proc.kill('SIGKILL'), opts.timeoutMs ?? HANG_MS);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
    proc.stdin.end(opts.input ?? '');
  });
}

/**
 * Whether a process still runs. A zombie does not: it was killed and only waits for whoever adopted it (here, the
 * machine's init) to read its exit status, which a busy machine may take a while to do; kill(pid, 0) still finds it.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state ...", comm may hold spaces and parentheses: the state follows the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** `p`, or a failure naming `what` after `ms`: bounds a promise the code under test might never settle. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Polls until `check` returns a truthy value or the time runs out (bounded). */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Waits until a running relay's queue holds no open scan and no delivery still to send. From then on nothing
 * more can reach a media server until a new request arrives: the event a test waits for instead of a sleep.
 */
export async function waitForQueueDrained(queuefile: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(() => {
    const db = new Database(queuefile, { readonly: true, fileMustExist: true });
    try {
      const open = db.prepare(`SELECT (SELECT count(*) FROM scans WHERE status IN ('pending', 'active')) + (SELECT count(*) FROM deliveries WHERE status IN ('waiting', 'sending')) AS n`).get() as { n: number };
      return open.n === 0;
    } finally {
      db.close();
    }
  }, timeoutMs, 'the queue to drain');
}

export interface HttpAnswer {
  status: number;
  body: any;
  text: string;
}

/** POSTs a body asking for JSON; `body` is the parsed answer when it is JSON. */
export async function post(url: string, body: string, contentType: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType, accept: 'application/json', ...headers }, body });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

export function postForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return post(url, new URLSearchParams(fields).toString(), 'application/x-www-form-urlencoded', headers);
}

export function postJson(url: string, payload: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return post(url, typeof payload === 'string' ? payload : JSON.stringify(payload), 'application/json', headers);
}
