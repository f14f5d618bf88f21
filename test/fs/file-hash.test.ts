import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, openSync, ftruncateSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FileHasher } from '../../src/fs/file-hash.ts';
import { tempDir, waitFor } from '../helpers/relay.ts';

// Issue 47 item 1: the hasher behind autopulse's `?hash=` reads regular files only, a few at a time, each for a
// bounded time, and its callers wait only as long as they say.
const sparse = (path: string, bytes: number) => {
  const fd = openSync(path, 'w');
  ftruncateSync(fd, bytes);
  closeSync(fd);
};

test('a regular file (or a symlink to one) is hashed; a FIFO, a device, a folder, a socket-like special file and a missing path are "missing"', async () => {
  const dir = tempDir('hasher-');
  writeFileSync(join(dir, 'a.mkv'), 'bytes');
  symlinkSync(join(dir, 'a.mkv'), join(dir, 'link.mkv'));
  execFileSync('mkfifo', [join(dir, 'pipe')]);
  symlinkSync(join(dir, 'pipe'), join(dir, 'pipe-link'));
  symlinkSync('/dev/zero', join(dir, 'zero-link'));
  const h = new FileHasher();
  const want = createHash('sha256').update('bytes').digest('hex');
  assert.deepEqual(await h.hash(join(dir, 'a.mkv'), { waitMs: 30_000 }), { kind: 'digest', hex: want });
  assert.deepEqual(await h.hash(join(dir, 'link.mkv'), { waitMs: 30_000 }), { kind: 'digest', hex: want });
  for (const p of [join(dir, 'pipe'), join(dir, 'pipe-link'), join(dir, 'zero-link'), '/dev/zero', '/dev/null', dir, join(dir, 'nope')]) {
    assert.deepEqual(await h.hash(p, { waitMs: 30_000 }), { kind: 'missing' }, p);
  }
  assert.equal(h.busy, 0);
});

test('a file not read whole within its time limit is given up ("later"), and its turn is freed', async () => {
  const dir = tempDir('hasher-');
  // 8 GiB of holes: reading them takes seconds on any machine, far beyond a 100 ms limit.
  sparse(join(dir, 'big.mkv'), 8 * 1024 ** 3);
  const h = new FileHasher({ fileTimeLimitMs: 100 });
  assert.deepEqual(await h.hash(join(dir, 'big.mkv'), { waitMs: 60_000 }), { kind: 'later' });
  await waitFor(() => h.busy === 0, 30_000, 'the job to stop');
});

test('at most `jobs` files are read at once; a caller waits only as long as it asked, or until it stops waiting', async () => {
  const dir = tempDir('hasher-');
  for (let i = 0; i < 4; i++) sparse(join(dir, `big${i}.mkv`), 8 * 1024 ** 3);
  writeFileSync(join(dir, 'other.mkv'), 'other');
  const h = new FileHasher({ jobs: 2, fileTimeLimitMs: 600_000 });
  const stop = new AbortController();
  const big = [0, 1, 2, 3].map((i) => h.hash(join(dir, `big${i}.mkv`), { waitMs: 600_000, signal: stop.signal }));
  assert.equal(h.busy, 2, 'two read at once, two wait');
  // Waiting 0 ms answers "later" at once (the file waits behind the big ones).
  assert.deepEqual(await h.hash(join(dir, 'other.mkv'), { waitMs: 0 }), { kind: 'later' });
  stop.abort();
  assert.deepEqual(await Promise.all(big), [{ kind: 'later' }, { kind: 'later' }, { kind: 'later' }, { kind: 'later' }]);
  h.close();
  await waitFor(() => h.busy === 0, 30_000, 'the jobs to stop after close');
});

test("a client's request goes ahead of the jobs already waiting (the sweep's)", async () => {
  const dir = tempDir('hasher-');
  sparse(join(dir, 'big.mkv'), 8 * 1024 ** 3);
  writeFileSync(join(dir, 'swept.mkv'), 'swept');
  writeFileSync(join(dir, 'asked.mkv'), 'asked');
  const h = new FileHasher({ jobs: 1, fileTimeLimitMs: 1_000 });
  const order: string[] = [];
  const big = h.hash(join(dir, 'big.mkv'), { waitMs: 60_000 });
  const swept = h.hash(join(dir, 'swept.mkv'), { waitMs: 60_000 }).then((a) => (order.push('swept'), a));
  const asked = h.hash(join(dir, 'asked.mkv'), { waitMs: 60_000, first: true }).then((a) => (order.push('asked'), a));
  assert.deepEqual(await big, { kind: 'later' }, 'the big file is cut at its limit');
  assert.equal((await asked).kind, 'digest');
  await swept;
  assert.deepEqual(order, ['asked', 'swept']);
});
