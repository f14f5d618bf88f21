import { spawn, type ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';

/** What a user's program keeps of the relay's environment: where programs are, who and where it runs, language, time zone. */
export const KEPT_VARIABLES = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR'] as const;

/**
 * A clean environment for a user's program: the relay's own (SERVER_PASS, PLEX_TOKEN and any other key given
 * as an environment override, a cloud token) never reaches it. It keeps KEPT_VARIABLES and the locale's LC_*
 * variables, and gets `extra` (the scan's SCANRELAY_* variables).
 */
export function cleanEnvironment(parent: NodeJS.ProcessEnv, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && ((KEPT_VARIABLES as readonly string[]).includes(name) || name.startsWith('LC_'))) env[name] = value;
  }
  return { ...env, ...extra };
}

export type ProcessOutcome =
  | { ran: true; code: number | null; signal: NodeJS.Signals | null; timedOut: boolean; stopped: boolean; output: string[] }
  | { ran: false; error: string; code?: string };

/** The longest output line kept, in characters; the rest of a longer line is dropped and the line marked as cut. */
export const MAX_LINE_CHARS = 4096;
const CUT_MARK = ` [line cut at ${MAX_LINE_CHARS} characters]`;

/**
 * Splits a stream of output into lines, each bounded to MAX_LINE_CHARS: a program that prints megabytes without a
 * newline gives one cut line, never a "line" per chunk read, and its output is never held whole in memory.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  /** The line being read is past the bound: what follows up to its newline is dropped. */
  private cutting = false;

  constructor(private readonly onLine: (line: string) => void) {}

  write(chunk: Buffer): void {
    const parts = this.decoder.write(chunk).split('\n');
    const last = parts.pop()!;
    for (const part of parts) {
      if (this.cutting) this.cutting = false;
      else this.emit(this.pending + part);
      this.pending = '';
    }
    if (this.cutting) return;
    this.pending += last;
    if (this.pending.length > MAX_LINE_CHARS) {
      this.onLine(this.pending.slice(0, MAX_LINE_CHARS) + CUT_MARK);
      this.pending = '';
      this.cutting = true;
    }
  }

  end(): void {
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    if (!this.cutting && rest) this.emit(rest.slice(0, MAX_LINE_CHARS + 1));
    this.cutting = false;
  }

  private emit(line: string): void {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    this.onLine(text.length > MAX_LINE_CHARS ? text.slice(0, MAX_LINE_CHARS) + CUT_MARK : text);
  }
}

/**
 * Kills the process groups of the programs the relay started when the relay ends, however it ends. A program runs
 * in its own process group (so a timeout or a stop kills it with its children), and a group outlives its parent:
 * SIGKILL of the relay runs no handler. So one small shell per relay holds the read end of a pipe and the list of
 * groups still running; when the relay dies the kernel closes the write end, the shell reads end of file and kills
 * every group on its list. It sits in its own session, so a Ctrl-C meant for the relay does not end it first.
 */
const WATCHDOG = `
groups=' '
while read -r op pg; do
  case $pg in ''|*[!0-9]*|0|1) continue ;; esac
  case $op in
    +) groups="$groups$pg " ;;
    -) case $groups in *" $pg "*) groups="\${groups%% $pg *} \${groups#* $pg }" ;; esac ;;
  esac
done
for pg in $groups; do kill -s KILL -- "-$pg" 2>/dev/null; done
`;

let watchdog: ChildProcess | undefined;

/**
 * Starts the watchdog if it is not running. Called before a program is spawned: the program's group is told to it
 * in the same turn as the spawn, so a relay killed just after a program started still leaves it to the watchdog
 * (starting the watchdog after the program left a window of a fork and an exec).
 */
function ensureWatchdog(): void {
  if (watchdog && watchdog.exitCode === null && watchdog.signalCode === null && watchdog.stdin?.writable) return;
  try {
    watchdog = spawn('/bin/sh', ['-c', WATCHDOG], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    watchdog.on('error', () => (watchdog = undefined));
    watchdog.stdin!.on('error', () => undefined);
    // It never keeps the relay's event loop alive.
    watchdog.unref();
    (watchdog.stdin as unknown as { unref?: () => void }).unref?.();
  } catch {
    watchdog = undefined;
  }
}

/** Tells the watchdog a group began (+) or ended (-). */
function tellWatchdog(op: '+' | '-', pgid: number): void {
  if (watchdog?.stdin?.writable) watchdog.stdin.write(`${op} ${pgid}\n`);
}

function killGroup(child: ChildProcess): void {
  try {
    if (process.platform !== 'win32' && child.pid) process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    // already gone
  }
}

export interface RunOptions {
  /** Lines of output kept and passed on (stdout and stderr together). */
  maxLines?: number;
  /** Aborting kills the program's process group (the relay stopping). */
  signal?: AbortSignal;
  /** argv[0] is a shell command line, run by the system's shell (RUN_COMMAND_BEFORE_SCAN, as plex_autoscan ran it). */
  shell?: boolean;
}

/** After a kill, how long 'close' may take (a child that left the group can hold the output open) before it is not waited for. */
const CLOSE_AFTER_KILL_MS = 2000;

/**
 * Runs `argv` directly (no shell) with `env`, killing its whole process group after `timeoutMs` (a finite time: a
 * program that never exits holds its scan, never the relay). Keeps up to `maxLines` lines of its output (stdout and
 * stderr), each bounded (LineSplitter) and passed to `onLine`. Never throws.
 */
export function runArgv(argv: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number, onLine: (line: string) => void, opts: RunOptions = {}): Promise<ProcessOutcome> {
  const windows = process.platform === 'win32';
  const maxLines = opts.maxLines ?? 200;
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    let stopped = false;
    const output: string[] = [];
    let timer: NodeJS.Timeout | undefined;
    let child: ChildProcess | undefined;
    let closeTimer: NodeJS.Timeout | undefined;
    const kill = () => {
      if (!child) return;
      killGroup(child);
      // Its own group is dead; something that left it may hold the output open: stop reading it soon.
      closeTimer ??= setTimeout(() => {
        child?.stdout?.destroy();
        child?.stderr?.destroy();
        finish({ ran: true, code: null, signal: 'SIGKILL', timedOut, stopped, output });
      }, CLOSE_AFTER_KILL_MS);
    };
    const onAbort = () => {
      stopped = true;
      kill();
    };
    const finish = (outcome: ProcessOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(closeTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (child && !windows && child.pid) tellWatchdog('-', child.pid);
      resolve(outcome);
    };
    if (opts.signal?.aborted) return finish({ ran: false, error: 'scanrelay is stopping' });
    if (!windows) ensureWatchdog();
    try {
      child = spawn(argv[0]!, argv.slice(1), { shell: opts.shell ?? false, detached: !windows, stdio: ['ignore', 'pipe', 'pipe'], env });
    } catch (err) {
      return finish({ ran: false, error: (err as Error).message, code: (err as { code?: string }).code });
    }
    if (child.pid && !windows) tellWatchdog('+', child.pid);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    // setTimeout's longest delay; the config bounds TIMEOUT well below it.
    timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, Math.min(Math.max(1, timeoutMs), 2 ** 31 - 1));
    const keep = (line: string) => {
      // Bounded: a chatty program cannot flood the log or the memory.
      if (!line.trim() || output.length >= maxLines) return;
      output.push(line);
      onLine(line);
    };
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      const lines = new LineSplitter(keep);
      stream.on('data', (chunk: Buffer) => lines.write(chunk));
      stream.on('end', () => lines.end());
    }
    child.on('error', (err: Error & { code?: string }) => finish({ ran: false, error: err.message, code: err.code }));
    child.on('close', (code, signal) => finish({ ran: true, code, signal, timedOut, stopped, output }));
  });
}
