import { spawn } from 'node:child_process';
import type { Logger } from '../../core/logger.ts';
import { cleanEnvironment } from '../process.ts';

export interface CommandContext {
  /** The folder scanned, as Plex names it: $SCANRELAY_PATH. */
  path: string;
  /** The Plex section id: $SCANRELAY_SECTION. */
  section: string;
}

/**
 * A clean environment for a user's command: the relay's own (SERVER_PASS, PLEX_TOKEN and any other key
 * given as an environment override, a cloud token) never reaches it. It gets ../process.ts KEPT_VARIABLES, the locale's
 * LC_* variables and the scan's SCANRELAY_* variables; anything else the command needs is set in it.
 */
export function commandEnvironment(parent: NodeJS.ProcessEnv, context: CommandContext): NodeJS.ProcessEnv {
  return cleanEnvironment(parent, { SCANRELAY_PATH: context.path, SCANRELAY_SECTION: context.section });
}

export type CommandOutcome = { ok: true; code: number } | { ok: false; error: string };

/**
 * RUN_COMMAND_BEFORE_SCAN / RUN_COMMAND_AFTER_SCAN: runs the command through the shell, as plex_autoscan
 * did, with the path and section in a clean environment (never spliced into the command text, so a path
 * cannot inject shell syntax; no secret of the relay's is passed on). A command of two characters or fewer is no command (plex_autoscan's
 * `len(...) > 2`). Output lines are logged; a timeout kills the command's process group. Never throws:
 * a failing command is logged and the scan goes on.
 */
export async function runScanCommand(
  key: 'RUN_COMMAND_BEFORE_SCAN' | 'RUN_COMMAND_AFTER_SCAN',
  command: string,
  context: CommandContext,
  log: Logger,
  timeoutMs: number,
): Promise<CommandOutcome | undefined> {
  if (command.length <= 2) return undefined;
  log.info({ key, command, path: context.path, section: context.section }, `running ${key}`);
  const windows = process.platform === 'win32';
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: CommandOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (outcome.ok && outcome.code === 0) log.info({ key, code: 0 }, `${key} finished`);
      else log.warn({ key, ...(outcome.ok ? { code: outcome.code } : { error: outcome.error }) }, `${key} failed; the scan goes on`);
      resolve(outcome);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, {
        shell: true,
        detached: !windows,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: commandEnvironment(process.env, context),
      });
    } catch (err) {
      finish({ ok: false, error: (err as Error).message });
      return;
    }
    // 0 = no limit (RUN_COMMAND_TIMEOUT).
    const timer = timeoutMs <= 0 ? undefined : setTimeout(() => {
      try {
        if (!windows && child.pid) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // already gone
      }
      finish({ ok: false, error: `timed out after ${Math.round(timeoutMs / 1000)} s` });
    }, timeoutMs);
    let logged = 0;
    const onOutput = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split(/\r?\n/)) {
        // Bounded: a chatty command cannot flood the log.
        if (line.trim() && logged++ < 200) log.info({ key, output: line }, `${key} output`);
      }
    };
    child.stdout?.on('data', onOutput);
    child.stderr?.on('data', onOutput);
    child.on('error', (err) => finish({ ok: false, error: err.message }));
    child.on('close', (code, signal) => finish(code === null ? { ok: false, error: `killed by ${signal}` } : { ok: true, code }));
  });
}
