import { spawn } from 'node:child_process';

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
  | { ran: true; code: number | null; signal: NodeJS.Signals | null; timedOut: boolean; output: string[] }
  | { ran: false; error: string; code?: string };

/**
 * Runs `argv` directly (no shell) with `env`, killing its whole process group after `timeoutMs` (0: no limit).
 * Keeps up to `maxLines` lines of its output (stdout and stderr), each passed to `onLine`. Never throws.
 */
export function runArgv(argv: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number, onLine: (line: string) => void, maxLines = 200): Promise<ProcessOutcome> {
  const windows = process.platform === 'win32';
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    const output: string[] = [];
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: ProcessOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(argv[0]!, argv.slice(1), { shell: false, detached: !windows, stdio: ['ignore', 'pipe', 'pipe'], env });
    } catch (err) {
      return finish({ ran: false, error: (err as Error).message, code: (err as { code?: string }).code });
    }
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        timedOut = true;
        try {
          if (!windows && child.pid) process.kill(-child.pid, 'SIGKILL');
          else child.kill('SIGKILL');
        } catch {
          // already gone
        }
      }, timeoutMs);
    }
    const onOutput = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split(/\r?\n/)) {
        // Bounded: a chatty program cannot flood the log or the memory.
        if (!line.trim() || output.length >= maxLines) continue;
        output.push(line);
        onLine(line);
      }
    };
    child.stdout?.on('data', onOutput);
    child.stderr?.on('data', onOutput);
    child.on('error', (err: Error & { code?: string }) => finish({ ran: false, error: err.message, code: err.code }));
    child.on('close', (code, signal) => finish({ ran: true, code, signal, timedOut, output }));
  });
}
