import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { mkdirSync } from 'node:fs';
import { hasInitdb, missingPackages, onPath, plan } from '../../scripts/test-deps.mjs';
import { ROOT, tempDir } from '../helpers/relay.ts';

const pkg = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync(join(ROOT, 'package.json'), 'utf8')));

test('npm runs the dependency check before the tests, and .ci/run only runs the README command', async () => {
  assert.equal(pkg.scripts.pretest, 'node scripts/test-deps.mjs');
  const readme = (await import('node:fs')).readFileSync(join(ROOT, 'README.md'), 'utf8');
  assert.match(readme, /^npm ci && npm test\b/m);
  const ci = (await import('node:fs')).readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
  const commands = ci.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
  assert.deepEqual(commands.filter((l) => !/^(set |cd )/.test(l)), ['npm ci && npm test']);
});

test('missing commands map to their Debian packages (ps comes from procps)', () => {
  assert.deepEqual(missingPackages(() => true), []);
  assert.deepEqual(missingPackages(() => false), ['rclone', 'tmux', 'chromium', 'sqlite3', 'procps', 'openssl', 'python3-sqlitedict', 'python3-peewee', 'postgresql']);
  assert.deepEqual(missingPackages((c) => c !== 'ps' && c !== 'tmux'), ['tmux', 'procps']);
});

test('root installs with apt-get update then install; anyone else gets the one line to run', () => {
  assert.deepEqual(plan([], 1000), { action: 'none' });
  assert.deepEqual(plan(['tmux', 'rclone'], 0), { action: 'install', commands: [['apt-get', 'update'], ['apt-get', 'install', '-y', 'tmux', 'rclone']] });
  const stop = plan(['tmux', 'rclone'], 1000);
  assert.equal(stop.action, 'stop');
  assert.match((stop as { message: string }).message, /^  sudo apt-get install -y tmux rclone$/m);
});

test("PostgreSQL counts as installed when initdb is on PATH or in Debian's versioned folder", () => {
  const empty = tempDir();
  const debian = tempDir();
  assert.equal(hasInitdb(empty, join(debian, 'absent')), false);
  assert.equal(hasInitdb(empty, debian), false, 'no version folder yet');
  mkdirSync(join(debian, '15', 'bin'), { recursive: true });
  writeFileSync(join(debian, '15', 'bin', 'initdb'), '#!/bin/sh\n');
  assert.equal(hasInitdb(empty, debian), false, 'not executable');
  chmodSync(join(debian, '15', 'bin', 'initdb'), 0o755);
  assert.equal(hasInitdb(empty, debian), true);
  const onPathDir = tempDir();
  writeFileSync(join(onPathDir, 'initdb'), '#!/bin/sh\n');
  chmodSync(join(onPathDir, 'initdb'), 0o755);
  assert.equal(hasInitdb(onPathDir, join(debian, 'absent')), true);
});

test('onPath finds only executable files', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'tool'), '#!/bin/sh\n');
  writeFileSync(join(dir, 'plain'), '');
  chmodSync(join(dir, 'tool'), 0o755);
  assert.equal(onPath('tool', dir), true);
  assert.equal(onPath('plain', dir), false);
  assert.equal(onPath('absent', dir), false);
});

test('as a non-root user on a machine without the programs, the pretest stops at once with the apt-get line', { skip: process.getuid?.() !== 0 ? 'needs root to run the script as another user' : false }, () => {
  const empty = tempDir();
  chmodSync(empty, 0o755);
  // nobody (65534) with a PATH that holds none of the programs: what a fresh machine's user sees.
  const res = spawnSync(process.execPath, [join(ROOT, 'scripts', 'test-deps.mjs')], { uid: 65534, gid: 65534, cwd: empty, env: { PATH: empty }, encoding: 'utf8' });
  assert.equal(res.status, 1, res.stderr);
  assert.match(res.stderr, /^  sudo apt-get install -y rclone tmux chromium sqlite3 procps openssl( python3-sqlitedict python3-peewee)?( postgresql)?$/m);
  // On this machine everything is there: the check is silent and lets the tests run.
  const here = spawnSync(process.execPath, [join(ROOT, 'scripts', 'test-deps.mjs')], { uid: 65534, gid: 65534, cwd: empty, env: { PATH: process.env.PATH }, encoding: 'utf8' });
  assert.equal(here.status, 0, here.stderr);
  assert.equal(here.stderr, '');
});
