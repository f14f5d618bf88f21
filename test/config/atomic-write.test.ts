import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDir } from '../helpers/relay.ts';

// Issue 23, item 9: config.json, rclone.conf and token.json survive a power loss whole. Seen with the
// real strace: the temp file is fsynced before the rename, and the folder after it.
test('config.json, rclone.conf and token.json: fsync of the temp file, rename, fsync of the folder', () => {
  const dir = tempDir();
  const trace = join(tempDir(), 'trace');
  const res = spawnSync(
    'strace',
    ['-f', '-qq', '-e', 'trace=openat,fsync,fdatasync,rename,renameat,renameat2', '-o', trace, process.execPath, '--import', 'tsx', join(ROOT, 'test', 'helpers', 'write-files.ts'), dir],
    { cwd: ROOT, encoding: 'utf8' },
  );
  assert.equal(res.status, 0, res.stderr);
  // Lines look like `123 openat(AT_FDCWD, "/tmp/x/.config.json.1.2.tmp", O_WRONLY|O_CREAT|O_EXCL, 0600) = 21`.
  const calls = readFileSync(trace, 'utf8').split('\n').map((l) => l.replace(/^\d+\s+/, ''));
  for (const name of ['config.json', 'rclone.conf', 'token.json']) {
    const target = join(dir, name);
    const renameAt = calls.findIndex((c) => /^rename/.test(c) && c.includes(`"${target}"`));
    assert.ok(renameAt > 0, `${name} is renamed into place`);
    const tmp = /"([^"]+)"/.exec(calls[renameAt]!)![1]!;
    const openTmp = calls.findIndex((c) => c.startsWith('openat(') && c.includes(`"${tmp}"`));
    const tmpFd = /= (\d+)$/.exec(calls[openTmp]!)![1];
    const syncTmp = calls.findIndex((c, i) => i > openTmp && new RegExp(`^f(data)?sync\\(${tmpFd}\\)`).test(c));
    assert.ok(openTmp >= 0 && syncTmp > openTmp && syncTmp < renameAt, `${name}: temp file fsynced before the rename`);
    const openDir = calls.findIndex((c, i) => i > renameAt && c.startsWith('openat(') && c.includes(`"${dir}"`));
    assert.ok(openDir > renameAt, `${name}: folder opened after the rename`);
    const dirFd = /= (\d+)$/.exec(calls[openDir]!)![1];
    assert.ok(calls.some((c, i) => i > openDir && new RegExp(`^fsync\\(${dirFd}\\)`).test(c)), `${name}: folder fsynced`);
  }
  for (const name of ['config.json', 'rclone.conf', 'token.json']) assert.equal(statSync(join(dir, name)).mode & 0o777, 0o600, name);
});
