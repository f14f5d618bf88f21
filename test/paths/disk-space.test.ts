// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import pino from 'pino';
import { DiskSpaceGuard, distinctDisks } from '../../src/paths/disk-space.ts';
import { tempDir } from '../helpers/relay.ts';

const MB = 1e6;

/** A logger that keeps its lines (to count what was said). */
function lines() {
  const out: Array<Record<string, any>> = [];
  const log = pino({ level: 'debug', base: undefined }, { write: (l: string) => void out.push(JSON.parse(l)) });
  return { log, out };
}

// Neither peer looks at free space: autoscan holds on missing anchors only (processor/processor.go:93-96), and so
// does autopulse (crates/service/src/runner.rs:353-369, logging each change once). The hold here works the same way.
describe('disk space (SERVER_DISK_MIN_FREE)', () => {
  test('full below the line, room again only at twice it: a disk hovering at the line is told once, not on each look', () => {
    const { log, out } = lines();
    let free = 500 * MB;
    let changes = 0;
    const guard = new DiskSpaceGuard([{ file: '/mnt/media/mounted.bin', holds: true, what: 'the media (SERVER_ANCHOR_FILES)' }], log, {
      minFreeBytes: 100 * MB,
      room: () => ({ bytes: free, inodes: 1000 }),
      onChange: () => changes++,
    });
    assert.deepEqual(guard.check(), []);
    free = 99 * MB;
    const [full] = guard.check();
    assert.equal(full?.path, '/mnt/media');
    assert.equal(full?.freeBytes, 99 * MB);
    assert.equal(full?.holds, true);
    assert.match(full!.reason, /the disk of the media \(SERVER_ANCHOR_FILES\) \(\/mnt\/media\) is full: 99 MB free, below SERVER_DISK_MIN_FREE \(100 MB\); scans for every target wait until 200 MB is free/);
    // Flapping around the line, and up to just below twice it: still full, nothing new said.
    for (const mb of [101, 98, 150, 199.9, 120]) {
      free = mb * MB;
      assert.equal(guard.check().length, 1, `${mb} MB free is still full`);
    }
    assert.equal(guard.check()[0]?.freeBytes, 120 * MB, 'the free bytes are the latest');
    free = 200 * MB;
    assert.deepEqual(guard.check(), []);
    free = 150 * MB;
    assert.deepEqual(guard.check(), [], 'between the line and twice it, a disk with room stays so');
    assert.equal(changes, 2);
    assert.equal(out.filter((l) => / is full: /.test(l.msg) && l.level === 40).length, 1);
    assert.equal(out.filter((l) => /has room again: 200 MB free; scans resume/.test(l.msg)).length, 1);
  });

  test('no inode left is full whatever the bytes; a disk that cannot be asked keeps its state (the mount guard tells a dropped mount)', () => {
    const { log } = lines();
    let room: { bytes: number; inodes: number } | undefined = { bytes: 10_000 * MB, inodes: 0 };
    const guard = new DiskSpaceGuard([{ file: '/srv/queue/queue.db', holds: false, what: 'the queue file' }], log, { minFreeBytes: 100 * MB, room: () => room });
    const [full] = guard.check();
    assert.match(full!.reason, /no inode left/);
    assert.match(full!.reason, /scans go on, and scan requests are refused \(503\) once no room is left: free some space \(200 MB ends this\)/);
    assert.equal(full!.holds, false);
    room = undefined;
    assert.equal(guard.check().length, 1);
    room = { bytes: 10_000 * MB, inodes: 5 };
    assert.deepEqual(guard.check(), []);
  });

  test('fullDisks() trusts a look younger than maxAgeMs and looks again once it is older', () => {
    const { log } = lines();
    let now = 0;
    let free = 50 * MB;
    let looks = 0;
    const guard = new DiskSpaceGuard([{ file: '/a/x', holds: true, what: 'a' }], log, {
      minFreeBytes: 100 * MB,
      maxAgeMs: 1000,
      now: () => now,
      room: () => (looks++, { bytes: free, inodes: 1 }),
    });
    assert.equal(guard.fullDisks().length, 1);
    free = 500 * MB;
    now = 900;
    assert.equal(guard.fullDisks().length, 1);
    assert.equal(looks, 1);
    now = 1901;
    assert.equal(guard.fullDisks().length, 0);
    assert.equal(looks, 2);
  });

  test("the real statfs asks the file itself: a missing anchor (its mount dropped, the folder now on the disk under it) tells nothing", () => {
    const dir = tempDir();
    const anchor = join(dir, 'mounted.bin');
    writeFileSync(anchor, '');
    const watched = (minFreeBytes: number) =>
      new DiskSpaceGuard(
        [
          { file: anchor, holds: true, what: 'the media' },
          { file: join(dir, 'gone', 'mounted.bin'), holds: true, what: 'the media' },
        ],
        lines().log,
        { minFreeBytes },
      ).check();
    assert.deepEqual(watched(1), []);
    const full = watched(Number.MAX_SAFE_INTEGER);
    assert.deepEqual(full.map((d) => d.path), [dir], 'only the anchor that is there');
    assert.ok(full[0]!.freeBytes > 0);
  });

  test('two files on one file system are one disk: the first listed (an anchor, which holds) is kept', () => {
    const dev: Record<string, number> = { '/mnt/a/mounted.bin': 1, '/mnt/b/mounted.bin': 2, '/var/lib/scanrelay/queue.db': 1 };
    const kept = distinctDisks(
      [
        { file: '/mnt/a/mounted.bin', holds: true, what: 'media' },
        { file: '/mnt/b/mounted.bin', holds: true, what: 'media' },
        { file: '/var/lib/scanrelay/queue.db', holds: false, what: 'the queue file' },
        { file: '/gone/x.bin', holds: true, what: 'media' },
      ],
      (p) => dev[p],
    );
    assert.deepEqual(kept.map((d) => d.file), ['/mnt/a/mounted.bin', '/mnt/b/mounted.bin', '/gone/x.bin']);
  });
});
