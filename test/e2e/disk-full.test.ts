import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { FakePlex } from '../fakes/plex.ts';
import { spawnRelay, tempDir } from '../helpers/relay.ts';

/**
 * A full disk as a user meets it: the queue file's file system has no byte left (ENOSPC, which SQLite reports
 * as SQLITE_FULL). A 2 MiB tmpfs holds the relay's files, and a filler file takes what is left. Mounting
 * needs root (the tests and CI run as root); without it the test says why it is skipped.
 */
function mountSmallDisk(): string | undefined {
  const dir = tempDir('scanrelay-full-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0755', 'tmpfs', dir], { stdio: 'pipe' });
    return dir;
  } catch {
    return undefined;
  }
}

/** Writes until the file system says ENOSPC. */
function fill(file: string): void {
  try {
    writeFileSync(file, Buffer.alloc(4 * 1024 * 1024));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
}

const disk = mountSmallDisk();

test('a full disk: 503 with Retry-After saying so, /healthz says so, one log line, nothing accepted is lost (issue 35, item 10)', { skip: disk ? false : 'mounting a small tmpfs needs root' }, async () => {
  const dir = disk!;
  try {
    await fullDiskScenario(dir);
  } finally {
    execFileSync('umount', ['-l', dir]);
  }
});

async function fullDiskScenario(dir: string): Promise<void> {
  const plex = await new FakePlex().start();
  const relay = await spawnRelay({
    dir,
    config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'] }, SERVER_SCAN_DELAY: 600 },
  });
  const accepted: string[] = [];
  const post = async (name: string) => {
    const res = await fetch(relay.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ eventType: 'Manual', filepath: `/movies/${name}/film.mkv` }).toString(),
    });
    if (res.status === 200) accepted.push(`/data/Movies/${name}`);
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { error?: string } };
  };
  try {
    for (let i = 0; i < 5; i++) assert.equal((await post(`Before ${i} (2000)`)).status, 200);
    fill(join(dir, 'filler'));

    const answers = [];
    for (let i = 0; i < 30; i++) answers.push(await post(`During ${i} (2000)`));
    for (const res of answers) {
      assert.equal(res.status, 503);
      assert.equal(res.retryAfter, '60');
      assert.match(String(res.body.error), /the queue file's disk is full .*: nothing was queued; free some space there/);
    }

    const health = await fetch(`${relay.base}/healthz`);
    assert.equal(health.status, 503);
    assert.deepEqual(await health.json(), { status: 'unavailable', queue: "the queue file's disk is full" });

    // One line for 30 refused requests, and no stack trace.
    const full = relay.events().filter((e) => /is full: scan requests are answered 503/.test(String(e.msg)));
    assert.equal(full.length, 1, JSON.stringify(full));
    // The 2 MiB disk was below SERVER_DISK_MIN_FREE from the start: told once, and it held nothing.
    const low = relay.events().filter((e) => e.key === 'SERVER_DISK_MIN_FREE');
    assert.equal(low.length, 1, JSON.stringify(low));
    assert.match(String(low[0]!.msg), /the disk of the queue file .* is full: .* free, below SERVER_DISK_MIN_FREE \(100 MB\)/);
    assert.ok(!relay.events().some((e) => e.msg === 'internal error while handling a request'));
    assert.ok(!relay.logs.some((l) => /\\n\s+at /.test(l)), 'no stack trace in the log');

    // Room again: requests are taken and /healthz is fine.
    rmSync(join(dir, 'filler'));
    assert.equal((await fetch(`${relay.base}/healthz`)).status, 200);
    assert.equal((await post('After (2000)')).status, 200);
    await relay.waitForLog((e) => /has room again/.test(String(e.msg)));
  } finally {
    await relay.kill('SIGKILL');
    await plex.stop();
  }
  // Every request that was answered 200 is in the queue file.
  const db = new Database(join(dir, 'queue.db'), { readonly: true });
  const queued = new Set(db.prepare<[], { folder: string }>(`SELECT folder FROM scans`).all().map((r) => r.folder));
  db.close();
  assert.equal(accepted.length, 6);
  for (const folder of accepted) assert.ok(queued.has(folder), `${folder} was answered 200 and is queued`);
}
