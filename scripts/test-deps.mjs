#!/usr/bin/env node
// npm's "pretest" step: the tests use real Debian programs as peers. Find the ones this machine lacks
// before any test runs; install them when running as root, otherwise stop with the one line to run.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Each program the tests run, and the Debian/Ubuntu package that provides it. */
export const NEEDED = [
  { command: 'rclone', pkg: 'rclone', why: 'reference for rclone.conf' },
  { command: 'tmux', pkg: 'tmux', why: 'terminal tests' },
  { command: 'chromium', pkg: 'chromium', why: 'browser tests' },
  { command: 'sqlite3', pkg: 'sqlite3', why: 'inspecting queue files' },
  { command: 'ps', pkg: 'procps', why: 'process-cleanup test' },
  { command: 'openssl', pkg: 'openssl', why: "certificates for the https fake Plex" },
  // "python3:<module>": a Python module, for the tests that regenerate plex_autoscan's own cache.db/queue.db.
  { command: 'python3:sqlitedict', pkg: 'python3-sqlitedict', why: "plex_autoscan's cache.db as sqlitedict writes it" },
  { command: 'python3:peewee', pkg: 'python3-peewee', why: "plex_autoscan's queue.db as peewee writes it" },
  // "postgres:initdb": Debian keeps PostgreSQL's programs off PATH, under /usr/lib/postgresql/<version>/bin.
  { command: 'postgres:initdb', pkg: 'postgresql', why: 'the shared queue (SERVER_QUEUE_URL): each test file starts a throwaway cluster' },
];

/** Packages to install, given which commands exist (pure: the caller decides how to look). */
export function missingPackages(has) {
  return [...new Set(NEEDED.filter((n) => !has(n.command)).map((n) => n.pkg))];
}

/** What to do: nothing, install (as root), or stop with the command for the user to run. */
export function plan(missing, uid) {
  if (missing.length === 0) return { action: 'none' };
  const install = ['apt-get', 'install', '-y', ...missing];
  if (uid === 0) return { action: 'install', commands: [['apt-get', 'update'], install] };
  return {
    action: 'stop',
    message:
      `the tests need programs this machine lacks (${missing.join(', ')}). Install them once, then run the tests again:\n` +
      `  sudo ${install.join(' ')}\n`,
  };
}

/** True when `command` is an executable file in one of PATH's folders. */
export function onPath(command, path = process.env.PATH ?? '') {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, command);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      // not here
    }
  }
  return false;
}

/** True when PostgreSQL's initdb is installed: on PATH, or in Debian's /usr/lib/postgresql/<version>/bin. */
export function hasInitdb(path = process.env.PATH ?? '', base = '/usr/lib/postgresql') {
  if (onPath('initdb', path)) return true;
  if (!existsSync(base)) return false;
  return readdirSync(base).some((version) => onPath('initdb', join(base, version, 'bin')));
}

/** True when the command (or, for "python3:<module>", the Python module; "postgres:initdb", PostgreSQL) is there. */
export function present(command) {
  if (command === 'postgres:initdb') return hasInitdb();
  if (!command.startsWith('python3:')) return onPath(command);
  // Debian's own interpreter: the one apt-get installs modules for (a pyenv python3 on PATH would not see them).
  return spawnSync('/usr/bin/python3', ['-c', `import ${command.slice('python3:'.length)}`], { stdio: 'ignore' }).status === 0;
}

function main() {
  const missing = missingPackages(present);
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
  const next = plan(missing, uid);
  if (next.action === 'none') return;
  if (next.action === 'stop') {
    process.stderr.write(`pretest: ${next.message}`);
    process.exit(1);
  }
  process.stderr.write(`pretest: installing ${missing.join(', ')} (running as root)\n`);
  for (const [cmd, ...args] of next.commands) {
    const res = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (res.status !== 0) {
      process.stderr.write(`pretest: "${[cmd, ...args].join(' ')}" failed (${res.error?.message ?? `exit ${res.status}`})\n`);
      process.exit(1);
    }
  }
  const still = missingPackages(present);
  if (still.length > 0) {
    process.stderr.write(`pretest: still missing after apt-get: ${still.join(', ')}\n`);
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
