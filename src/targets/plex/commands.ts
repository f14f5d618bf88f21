import type { Logger } from '../../core/logger.ts';
import { cleanEnvironment, runArgv } from '../process.ts';

/** RUN_COMMAND_TIMEOUT 0: no limit, as far as a timer goes (24 days). */
const NO_LIMIT_MS = 2 ** 31 - 1;

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
  // Through the shell, as plex_autoscan ran it; runArgv gives it its process group, bounded output lines and the
  // watchdog that kills it if the relay dies. 0 (RUN_COMMAND_TIMEOUT) keeps plex_autoscan's "no limit".
  const result = await runArgv(
    [command],
    commandEnvironment(process.env, context),
    timeoutMs > 0 ? timeoutMs : NO_LIMIT_MS,
    (line) => log.info({ key, output: line }, `${key} output`),
    { shell: true },
  );
  const outcome: CommandOutcome = !result.ran
    ? { ok: false, error: result.error }
    : result.timedOut
      ? { ok: false, error: `timed out after ${Math.round(timeoutMs / 1000)} s` }
      : result.code === null
        ? { ok: false, error: `killed by ${result.signal}` }
        : { ok: true, code: result.code };
  if (outcome.ok && outcome.code === 0) log.info({ key, code: 0 }, `${key} finished`);
  else log.warn({ key, ...(outcome.ok ? { code: outcome.code } : { error: outcome.error }) }, `${key} failed; the scan goes on`);
  return outcome;
}
