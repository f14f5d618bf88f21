import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PlexSettings } from './settings.ts';

export type ScannerProcessSettings = Pick<PlexSettings, 'SCANNER' | 'USE_DOCKER' | 'DOCKER_NAME'>;

/** A running Plex Media Scanner, as found by runningScanner. */
export interface ScannerProcess {
  pid: number;
  name: string;
  container?: string;
}

export interface ProcessDeps {
  /** Where the process table is read (Linux /proc). */
  procDir?: string;
  /** Runs a shell line and gives its stdout (the docker container lookup). */
  shell?: (line: string) => Promise<string>;
}

/** The process name to look for: the scanner path's last part, without the shell escapes (plex.py:139-144). */
export function scannerProcessName(scannerPath: string): string {
  const base = scannerPath.replace(/\\/g, '').split('/').pop() ?? '';
  return base;
}

/**
 * The shell line plex_autoscan runs to learn a process's container (utils.py:95-97): the container id from the
 * first line of /proc/<pid>/cgroup, then its name from `docker inspect`, without the leading "/".
 */
export function containerLookupCommand(pid: number, procDir = '/proc'): string {
  return `docker inspect --format '{{.Name}}' "$(cat ${procDir}/${pid}/cgroup |head -n 1 |cut -d / -f 3)" | sed 's/^\\///'`;
}

/**
 * A process's name as psutil's Process.name() gives it on Linux: /proc/<pid>/comm, which the kernel cuts to
 * 15 characters; when cut, the first command-line word's base name if it starts with it.
 */
function processName(procDir: string, pid: string): string | undefined {
  let comm: string;
  try {
    comm = readFileSync(join(procDir, pid, 'comm'), 'utf8').replace(/\n$/, '');
  } catch {
    return undefined;
  }
  if (comm.length < 15) return comm;
  try {
    const argv0 = readFileSync(join(procDir, pid, 'cmdline'), 'utf8').split('\0')[0] ?? '';
    const base = argv0.split('/').pop() ?? '';
    if (base.startsWith(comm)) return base;
  } catch {
    // gone or not readable: keep the short name
  }
  return comm;
}

function defaultShell(line: string): Promise<string> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', line], { timeout: 15_000 }, (_err, stdout) => resolve(String(stdout ?? '')));
  });
}

/**
 * PLEX_WAIT_FOR_EXTERNAL_SCANNERS without a token: a Plex Media Scanner process running, found as
 * plex_autoscan's is_process_running finds it (utils.py:86-113): by process name, case-insensitive; with
 * USE_DOCKER, only a process whose container is DOCKER_NAME counts. Undefined when none runs.
 */
export async function runningScanner(settings: ScannerProcessSettings, deps: ProcessDeps = {}): Promise<ScannerProcess | undefined> {
  const procDir = deps.procDir ?? '/proc';
  const wanted = scannerProcessName(settings.SCANNER).toLowerCase();
  let pids: string[];
  try {
    pids = readdirSync(procDir).filter((p) => /^\d+$/.test(p));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    const name = processName(procDir, pid);
    if (name === undefined || name.toLowerCase() !== wanted) continue;
    if (!settings.USE_DOCKER || !settings.DOCKER_NAME) return { pid: Number(pid), name };
    const container = (await (deps.shell ?? defaultShell)(containerLookupCommand(Number(pid), procDir))).trim();
    if (container.toLowerCase() === settings.DOCKER_NAME.toLowerCase()) return { pid: Number(pid), name, container };
  }
  return undefined;
}
