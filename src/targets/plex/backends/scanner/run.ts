import { spawn } from 'node:child_process';
import type { ScannerCommand } from './command.ts';

export interface RunResult {
  /** Exit status; null when the process was killed or never started. */
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Set when the program could not be started at all (not on PATH, not executable). */
  spawnError?: string;
}

/** Keeps only the end of a long output: scanners can be chatty and history needs the tail. */
const MAX_CAPTURE = 64 * 1024;

export interface RunOptions {
  timeoutMs: number;
  killGraceMs?: number;
  /** Pass Ctrl-C (SIGINT), SIGTERM and SIGHUP on to the scanner while it runs (the CLI). */
  forwardSignals?: boolean;
}

/**
 * Runs a command from an argument array and captures its exit status and output. The child leads its
 * own process group so a hung scanner is killed with everything it started (bash, sudo, docker client).
 */
export function runCommand(cmd: ScannerCommand, opts: RunOptions): Promise<RunResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let settled = false;
    const child = spawn(cmd.file, cmd.args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const append = (buf: string, chunk: Buffer) => (buf + chunk.toString('utf8')).slice(-MAX_CAPTURE);
    child.stdout!.on('data', (d: Buffer) => (stdout = append(stdout, d)));
    child.stderr!.on('data', (d: Buffer) => (stderr = append(stderr, d)));

    const killGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    let graceTimer: NodeJS.Timeout | undefined;
    const timer =
      opts.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            killGroup('SIGTERM');
            graceTimer = setTimeout(() => killGroup('SIGKILL'), opts.killGraceMs ?? 5000);
          }, opts.timeoutMs)
        : undefined;

    const forwarded: NodeJS.Signals[] = opts.forwardSignals ? ['SIGINT', 'SIGTERM', 'SIGHUP'] : [];
    for (const signal of forwarded) process.on(signal, killGroup);

    const finish = (result: Omit<RunResult, 'stdout' | 'stderr' | 'timedOut'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      for (const signal of forwarded) process.off(signal, killGroup);
      resolve({ ...result, stdout, stderr, timedOut });
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'ENOENT' ? 'not found on PATH' : err.code === 'EACCES' ? 'not executable' : err.message;
      finish({ status: null, signal: null, spawnError: `cannot run ${cmd.file}: ${why}` });
    });
    // 'close' waits for the output pipes, so the captured text is complete.
    child.on('close', (status, signal) => finish({ status, signal }));
  });
}

/** The last lines of an output, for messages and history. */
export function tail(text: string, maxChars = 500): string {
  const trimmed = text.trim();
  return trimmed.length <= maxChars ? trimmed : `…${trimmed.slice(-maxChars)}`;
}

/** One line saying how a run ended, with the stderr tail when there is one. */
export function describeRun(what: string, result: RunResult): string {
  let how: string;
  if (result.spawnError) how = result.spawnError;
  else if (result.timedOut) how = `was killed after the timeout (PLEX_SCANNER_TIMEOUT)`;
  else if (result.status === null) how = `was killed by ${result.signal ?? 'a signal'}`;
  else if (result.status === 127) how = `exited with status 127 (command not found: check PLEX_SCANNER, and DOCKER_NAME/PLEX_USER)`;
  else if (result.status === 126) how = `exited with status 126 (found but not executable: check PLEX_SCANNER and PLEX_USER)`;
  else how = `exited with status ${result.status}`;
  const err = tail(result.stderr);
  return `${what} ${how}${err ? `; stderr: ${err}` : ''}`;
}

/** The status a CLI exits with for a run: the scanner's own, or the shell's conventions otherwise. */
export function exitStatusOf(result: RunResult): number {
  if (result.spawnError) return 127;
  if (result.timedOut) return 124;
  if (result.status !== null) return result.status;
  return 128 + signalNumber(result.signal);
}

function signalNumber(signal: NodeJS.Signals | null): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
  return (signal && numbers[signal]) || 1;
}
