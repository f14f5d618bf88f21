import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { CommandTarget } from './schema.ts';
import type { DeliveryResult, ScanItem, Target } from '../../core/scan.ts';
import type { Logger } from '../../core/logger.ts';
import { placeRewriter } from '../../paths/rewrite.ts';
import { pathsOf } from '../path-match.ts';
import { cleanEnvironment, runArgv } from '../process.ts';
import { itemForTarget } from '../rewrite.ts';

/**
 * The program's arguments and environment for one scan: COMMAND, then the scan's paths (its files when the
 * request named them all, else its folder) as arguments; the same in SCANRELAY_* variables, in a clean
 * environment (process.ts) that carries none of the relay's secrets.
 */
export function commandInvocation(targetName: string, command: readonly string[], item: ScanItem, parent: NodeJS.ProcessEnv): { argv: string[]; env: NodeJS.ProcessEnv } {
  const paths = pathsOf(item);
  return {
    argv: [...command, ...paths],
    env: cleanEnvironment(parent, {
      SCANRELAY_TARGET: targetName,
      SCANRELAY_PATH: item.folder,
      // One path a line: a file name may hold spaces, never a newline worth keeping.
      SCANRELAY_FILES: paths.join('\n'),
      SCANRELAY_UPDATE_TYPE: item.updateType,
      SCANRELAY_SOURCE: item.source,
      SCANRELAY_EVENT: item.event,
    }),
  };
}

/**
 * Why the program must not be given these paths (after the target's REWRITE), or undefined. Each one is an
 * argument: a relative path, or one starting with "-", could be read as an option (`--output=/etc/x`), so only
 * absolute paths go. A control character would split SCANRELAY_FILES' lines (the triggers refuse one; a queue
 * kept from before may still hold it).
 */
export function unsafeArgument(paths: readonly string[]): string | undefined {
  for (const p of paths) {
    const shown = JSON.stringify(p);
    if (/[\u0000-\u001f\u007f]/.test(p)) return `the path ${shown} holds a control character; it is not passed to the program`;
    if (!isAbsolute(p) || p.startsWith('-')) return `the path ${shown} is not absolute after the target's REWRITE; the program is only given absolute paths (a relative or "-"-leading one could be read as an option)`;
  }
  return undefined;
}

/** Where the program is, or why it cannot be run (a missing file, no execute permission, not on PATH). */
function findProgram(program: string, env: NodeJS.ProcessEnv): { path?: string; error?: string } {
  const executable = (p: string) => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (isAbsolute(program) || program.includes('/')) return executable(program) ? { path: program } : { error: `${program} is missing or not executable` };
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    if (executable(join(dir, program))) return { path: join(dir, program) };
  }
  return { error: `${program} is not on PATH` };
}

/**
 * A program run for each scan (autopulse's command.rs, without its shell form): COMMAND is an argv list,
 * run without a shell, with the scan's paths as arguments and in the environment, a time limit (TIMEOUT
 * seconds, its whole process group killed) and a clean environment, like RUN_COMMAND_BEFORE_SCAN. Exit 0
 * is done; another exit, a kill or a timeout is tried again later; a program that cannot start fails.
 */
export function createCommandTarget(name: string, entry: CommandTarget, log: Logger): Target {
  const rewrite = placeRewriter(entry.REWRITE, entry.REWRITE_MODE);
  const program = entry.COMMAND[0]!;
  // Aborted when the relay stops: every program still running is killed with its process group.
  const stopping = new AbortController();
  return {
    name,
    ...(rewrite ? { toTargetPath: rewrite } : {}),
    async deliver(queued: ScanItem): Promise<DeliveryResult> {
      const item = itemForTarget(queued, rewrite);
      const unsafe = unsafeArgument([item.folder, ...pathsOf(item)]);
      if (unsafe) {
        log.warn({ target: name, scan: item.id, program }, `not running the command target: ${unsafe}`);
        return { outcome: 'failed', error: unsafe };
      }
      const { argv, env } = commandInvocation(name, entry.COMMAND, item, process.env);
      log.info({ target: name, scan: item.id, program, paths: argv.length - entry.COMMAND.length }, 'running the command target');
      const outcome = await runArgv(argv, env, entry.TIMEOUT * 1000, (line) => log.info({ target: name, output: line }, 'command output'), { signal: stopping.signal });
      if (stopping.signal.aborted) return { outcome: 'retry', error: `scanrelay stopped while ${program} ran; it was killed and runs again at the next start` };
      if (!outcome.ran) return { outcome: 'failed', error: `cannot run ${program}: ${outcome.error}` };
      const last = outcome.output.at(-1);
      const tail = last ? ` (last output: ${last.slice(0, 200)})` : '';
      if (outcome.timedOut) return { outcome: 'retry', error: `${program} timed out after ${entry.TIMEOUT} s and was killed${tail}` };
      if (outcome.code === 0) return { outcome: 'done', detail: `${program} exited 0` };
      return { outcome: 'retry', error: outcome.code === null ? `${program} was killed by ${outcome.signal}${tail}` : `${program} exited ${outcome.code}${tail}` };
    },
    close() {
      stopping.abort();
    },
    async available() {
      const found = findProgram(program, process.env);
      return found.error ? { ok: false, error: found.error } : { ok: true, note: `runs ${found.path}` };
    },
  };
}
