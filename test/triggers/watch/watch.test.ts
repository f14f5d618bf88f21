import assert from 'node:assert/strict';
import { createWriteStream, mkdirSync, renameSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { parseConfig } from '../../../src/config/load.ts';
import { QueueIntake } from '../../../src/queue/door.ts';
import { QueueStore, type QueueEntry } from '../../../src/queue/store.ts';
import { FolderWatcher, watchErrorMessage } from '../../../src/triggers/watch/index.ts';
import { allowedByEntry, scanForEvent, watchFilter } from '../../../src/triggers/watch/rules.ts';
import { spawnRelay, tempDir, waitFor } from '../../helpers/relay.ts';

describe('watch rules', () => {
  const root = '/mnt/media';
  const exists = (folders: string[]) => (p: string) => (folders.includes(p) ? ('folder' as const) : ('missing' as const));
  const all = watchFilter({ INCLUDE: [], EXCLUDE: [] });

  test('a new or changed media file scans its folder; other files and partial downloads scan nothing', () => {
    assert.deepEqual(scanForEvent('add', '/mnt/media/Movies/Heat (1995)/Heat.mkv', root, all, exists([])), {
      path: { path: '/mnt/media/Movies/Heat (1995)/Heat.mkv', kind: 'file' },
      updateType: 'Created',
    });
    assert.equal(scanForEvent('change', '/mnt/media/Movies/Heat (1995)/Heat.mkv', root, all, exists([]))?.updateType, 'Modified');
    assert.equal(scanForEvent('add', '/mnt/media/Movies/Heat (1995)/Heat.mkv.part', root, all, exists([])), undefined);
    assert.equal(scanForEvent('add', '/mnt/media/Movies/Heat (1995)/.lock', root, all, exists([])), undefined);
    assert.equal(scanForEvent('addDir', '/mnt/media/Movies/Heat (1995)', root, all, exists([])), undefined);
  });

  test('INCLUDE replaces the extension rule; EXCLUDE wins over INCLUDE', () => {
    const f = watchFilter({ INCLUDE: ['\\.(mkv|weird)$'], EXCLUDE: ['/Samples?/'] });
    assert.ok(scanForEvent('add', '/mnt/media/Movies/A/a.weird', root, f, exists([])));
    assert.equal(scanForEvent('add', '/mnt/media/Movies/A/a.srt', root, f, exists([])), undefined);
    assert.equal(scanForEvent('add', '/mnt/media/Movies/A/Sample/a.mkv', root, f, exists([])), undefined);
    assert.equal(scanForEvent('unlinkDir', '/mnt/media/Movies/A/Sample', root, f, exists([])), undefined);
  });

  test('deletes scan the nearest existing folder, never above the watched root (docs/webhooks.md rules)', () => {
    const file = '/mnt/media/TV/Show/Season 01/e1.mkv';
    assert.deepEqual(scanForEvent('unlink', file, root, all, exists(['/mnt/media/TV/Show/Season 01', '/mnt/media/TV/Show'])), {
      path: { path: '/mnt/media/TV/Show/Season 01', kind: 'folder' },
      updateType: 'Deleted',
    });
    assert.equal(scanForEvent('unlink', file, root, all, exists(['/mnt/media/TV/Show']))?.path.path, '/mnt/media/TV/Show');
    assert.equal(scanForEvent('unlinkDir', '/mnt/media/TV/Show/Season 01', root, all, exists(['/mnt/media/TV/Show']))?.path.path, '/mnt/media/TV/Show');
    assert.equal(scanForEvent('unlinkDir', '/mnt/media/TV/Show/Season 01', root, all, exists([]))?.path.path, '/mnt/media');
    assert.equal(scanForEvent('unlinkDir', '/mnt/media', root, all, exists([])), undefined);
  });

  test('the inotify limit message names the sysctl to raise', () => {
    assert.match(watchErrorMessage(Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), { code: 'ENOSPC' })), /sysctl fs\.inotify\.max_user_watches=\d+/);
  });
});

/** A relay's intake on a real queue file, a watcher on a real temp folder, and a way to wait for commits. */
async function setup(mode: 'events' | 'poll', extra: Record<string, unknown> = {}) {
  const dir = tempDir('scanrelay-watch-');
  const root = join(dir, 'media');
  mkdirSync(root);
  const store = new QueueStore(join(dir, 'queue.db'));
  const commits: Array<() => void> = [];
  const intake = new QueueIntake(store, [], () => ({ delayMs: 600_000, maxMs: 1_800_000 }), () => commits.splice(0).forEach((c) => c()));
  const lines: Array<Record<string, any>> = [];
  const logWaiters = new Set<() => void>();
  const log = pino({ level: 'debug', base: undefined }, { write: (l: string) => (lines.push(JSON.parse(l)), logWaiters.forEach((w) => w())) });
  const { config } = parseConfig({
    SERVER_PATH_MAPPINGS: { '/data/': [`${root}/`] },
    WATCH: { ENABLED: true, PATHS: [root], POLL: mode === 'poll', POLL_INTERVAL: 0.1 },
    ...extra,
  });
  for (const leaf of ['Movies/Heat (1995)', 'Movies/Extras', 'TV/Show/Season 1', 'TV/Show/Season 01']) mkdirSync(join(root, leaf), { recursive: true });
  const watcher = new FolderWatcher({ config, intake, log, writeSettleMs: 300, batchMs: 50 });
  await watcher.start();
  const open = (): QueueEntry[] => store.view.listOpen();
  /** Resolves once a commit leaves the queue in a state the predicate accepts. */
  const waitForQueue = (pred: (entries: QueueEntry[]) => boolean, what: string, timeoutMs = 20_000) =>
    new Promise<QueueEntry[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; queue: ${JSON.stringify(open().map((e) => e.folder))}`)), timeoutMs);
      const check = () => {
        const entries = open();
        if (pred(entries)) {
          clearTimeout(timer);
          resolve(entries);
        } else commits.push(check);
      };
      check();
    });
  const waitForLog = (pred: (e: Record<string, any>) => boolean, timeoutMs = 20_000) =>
    new Promise<Record<string, any>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('log line did not come')), timeoutMs);
      const check = () => {
        const hit = lines.find(pred);
        if (hit) {
          logWaiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
        }
      };
      logWaiters.add(check);
      check();
    });
  const folders = () => open().map((e) => e.folder).sort();
  // In POLL mode a folder's baseline is read a moment after the folder is first seen (node's fs.watchFile),
  // so a write in that moment goes unseen. A primer file the watcher has queued in each folder the tests use
  // proves the folder is watched; another one is written until one is seen. Then the queue starts empty.
  const leaves = ['Movies/Heat (1995)', 'TV/Show/Season 1', 'TV/Show/Season 01'];
  const seen = (l: string) => open().some((x) => x.folder === `/data/${l}`);
  for (let attempt = 0; attempt < 30 && !leaves.every(seen); attempt++) {
    // A new file each time: it changes the folder itself, which is what a polled folder is compared on.
    for (const leaf of leaves.filter((l) => !seen(l))) writeFileSync(join(root, leaf, `primer-${attempt}.srt`), 'x');
    await waitForQueue(() => leaves.every(seen), 'the primer files', 1000).catch(() => undefined);
  }
  assert.ok(leaves.every(seen), 'the watcher never saw the primer files');
  for (const e of store.view.listOpen()) store.cancel(e.id);
  return {
    root,
    store,
    watcher,
    lines,
    waitForQueue,
    waitForLog,
    folders,
    async close() {
      await watcher.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

for (const mode of ['events', 'poll'] as const) {
  describe(`folder watcher (${mode === 'events' ? 'inotify events' : 'WATCH.POLL'}) on real files`, () => {
    let w: Awaited<ReturnType<typeof setup>>;
    before(async () => {
      w = await setup(mode, { SERVER_IGNORE_LIST: ['/Extras/'] });
    });
    after(async () => {
      await w.close();
    });

    test('a file written in several chunks queues its mapped folder once, when the write has finished', async () => {
      const folder = join(w.root, 'Movies', 'Heat (1995)');
      mkdirSync(folder, { recursive: true });
      const out = createWriteStream(join(folder, 'Heat.mkv'));
      for (let i = 0; i < 5; i++) await new Promise<void>((r) => out.write(Buffer.alloc(64 * 1024, i), () => r()));
      await new Promise<void>((r) => out.end(() => r()));
      const [entry] = await w.waitForQueue((e) => e.some((x) => x.folder === '/data/Movies/Heat (1995)'), 'the movie folder');
      assert.equal(entry!.source, 'Watch');
      assert.equal(entry!.updateType, 'Created');
      assert.deepEqual(entry!.files, ['/data/Movies/Heat (1995)/Heat.mkv']);
      // awaitWriteFinish: one add for the whole file, not one per chunk.
      assert.equal(w.lines.filter((l) => l.msg === 'watch event' && l.path === join(folder, 'Heat.mkv')).length, 1);
    });

    test('a change to an existing file merges into the pending scan of its folder', async () => {
      const file = join(w.root, 'Movies', 'Heat (1995)', 'Heat.mkv');
      appendFileSync(file, 'more');
      await w.waitForQueue((e) => e.find((x) => x.folder === '/data/Movies/Heat (1995)')?.requests === 2, 'a merged second request');
      assert.equal(w.folders().filter((f) => f === '/data/Movies/Heat (1995)').length, 1);
    });

    test('SERVER_IGNORE_LIST applies to watched files', async () => {
      const folder = join(w.root, 'Movies', 'Extras');
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'trailer.mkv'), 'x');
      await w.waitForLog((l) => /SERVER_IGNORE_LIST/.test(l.msg ?? '') && l.path === join(folder, 'trailer.mkv'));
      assert.ok(!w.folders().includes('/data/Movies/Extras'));
    });

    test('a file moved to another folder scans the old and the new folder', async () => {
      const from = join(w.root, 'TV', 'Show', 'Season 1');
      const to = join(w.root, 'TV', 'Show', 'Season 01');
      mkdirSync(from, { recursive: true });
      mkdirSync(to, { recursive: true });
      writeFileSync(join(from, 'e1.mkv'), 'x');
      await w.waitForQueue((e) => e.some((x) => x.folder === '/data/TV/Show/Season 1'), 'the first folder');
      // Clear the queue so that the move's own requests are seen (a pending folder absorbs its subfolders).
      for (const e of w.store.view.listOpen()) w.store.cancel(e.id);
      renameSync(join(from, 'e1.mkv'), join(to, 'e1.mkv'));
      const entries = await w.waitForQueue(
        (e) => e.some((x) => x.folder === '/data/TV/Show/Season 1') && e.some((x) => x.folder === '/data/TV/Show/Season 01'),
        'both folders of the move',
      );
      assert.equal(entries.find((x) => x.folder === '/data/TV/Show/Season 1')!.updateType, 'Deleted');
      assert.equal(entries.find((x) => x.folder === '/data/TV/Show/Season 01')!.updateType, 'Created');
    });

    test('a deleted folder scans the nearest folder above it that still exists', async () => {
      for (const e of w.store.view.listOpen()) w.store.cancel(e.id);
      rmSync(join(w.root, 'TV', 'Show', 'Season 01'), { recursive: true });
      const entries = await w.waitForQueue((e) => e.some((x) => x.folder === '/data/TV/Show'), 'the show folder');
      assert.equal(entries.find((x) => x.folder === '/data/TV/Show')!.updateType, 'Deleted');
      assert.ok(!w.folders().includes('/data/TV/Show/Season 01'), 'the gone folder itself is not scanned');
    });
  });
}

describe('folder watcher in the relay process', () => {
  test('WATCH.ENABLED starts the watcher with the server; a new file is queued through the relay', async () => {
    const dir = tempDir();
    const root = join(dir, 'media');
    mkdirSync(join(root, 'Movies', 'Ronin (1998)'), { recursive: true });
    const relay = await spawnRelay({
      dir,
      config: { SERVER_SCAN_DELAY: 600, PLEX_ENABLED: false, SERVER_PATH_MAPPINGS: { '/data/': [`${root}/`] }, WATCH: { ENABLED: true, PATHS: [root] } },
    });
    try {
      await relay.waitForLog((e) => e.msg === 'watching folders');
      writeFileSync(join(root, 'Movies', 'Ronin (1998)', 'Ronin.mkv'), 'x');
      const line = await relay.waitForLog((e) => /^watch: /.test(e.msg ?? ''), 20_000);
      assert.deepEqual(line.folders, ['/data/Movies/Ronin (1998)']);
    } finally {
      await relay.kill();
    }
  });
});

describe('folder watcher errors', () => {
  test('the inotify limit (ENOSPC) is logged once with the sysctl to raise', async () => {
    const w = await setup('events');
    try {
      const chokidar = (w.watcher as unknown as { watcher: import('node:events').EventEmitter }).watcher;
      const err = () => Object.assign(new Error('ENOSPC: System limit for number of file watchers reached, watch'), { code: 'ENOSPC' });
      chokidar.emit('error', err());
      chokidar.emit('error', err());
      const hits = w.lines.filter((l) => l.sysctl === 'fs.inotify.max_user_watches');
      assert.equal(hits.length, 1);
      assert.match(hits[0]!.msg, /max_user_watches=\d+/);
    } finally {
      await w.close();
    }
  });

  test('WATCH.ENABLED without PATHS, or a bad expression, is a config error naming the key', () => {
    assert.throws(() => parseConfig({ WATCH: { ENABLED: true } }), /WATCH\.PATHS/);
    assert.throws(() => parseConfig({ WATCH: { EXCLUDE: ['(unclosed'] } }), /WATCH\.EXCLUDE/);
  });
});

describe("WATCH.PATHS entries with their own rules (autoscan's inotify paths: triggers/inotify/inotify.go:189-214)", () => {
  test('allowedByEntry: an exclude drops the path; without includes the rest passes; with includes one must match (autoscan.go:117-140)', () => {
    const f = watchFilter({ INCLUDE: [], EXCLUDE: ['\\.(srt|pdf)$'] });
    assert.equal(allowedByEntry('/mnt/unionfs/Media/a.mkv', f), true);
    assert.equal(allowedByEntry('/mnt/unionfs/Media/a.srt', f), false);
    const g = watchFilter({ INCLUDE: ['^/mnt/unionfs/Media/'], EXCLUDE: [] });
    assert.equal(allowedByEntry('/mnt/unionfs/Media/a.mkv', g), true);
    assert.equal(allowedByEntry('/mnt/local/Media/a.mkv', g), false);
  });

  test("a real file: the entry's rewrite, then its filters on the rewritten path, queued with the entry's priority", async () => {
    const dir = tempDir('scanrelay-watch-entry-');
    const root = join(dir, 'local');
    mkdirSync(join(root, 'Movies', 'Heat (1995)'), { recursive: true });
    const store = new QueueStore(join(dir, 'queue.db'));
    const commits: Array<() => void> = [];
    const intake = new QueueIntake(store, [], () => ({ delayMs: 600_000, maxMs: 1_800_000 }), () => commits.splice(0).forEach((c) => c()));
    const { config } = parseConfig({
      WATCH: {
        ENABLED: true,
        PATHS: [{ PATH: root, REWRITE: [{ from: `^${root.replace(/[.\\-]/g, '\\$&')}/`, to: '/mnt/unionfs/Media/' }], INCLUDE: ['^/mnt/unionfs/Media/'], EXCLUDE: ['\\.srt$'], PRIORITY: -2 }],
      },
    });
    const watcher = new FolderWatcher({ config, intake, log: pino({ level: 'silent' }), writeSettleMs: 100, batchMs: 50 });
    await watcher.start();
    try {
      const queued = new Promise<void>((resolve) => {
        const check = () => (store.view.listOpen().length ? resolve() : commits.push(check));
        check();
      });
      writeFileSync(join(root, 'Movies', 'Heat (1995)', 'Heat.srt'), 'x');
      writeFileSync(join(root, 'Movies', 'Heat (1995)', 'Heat.mkv'), 'x');
      await queued;
      const open = store.view.listOpen();
      assert.deepEqual(open.map((e) => [e.folder, e.priority, e.files]), [['/mnt/unionfs/Media/Movies/Heat (1995)', -2, ['/mnt/unionfs/Media/Movies/Heat (1995)/Heat.mkv']]]);
    } finally {
      await watcher.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('folder watcher and a full queue', () => {
  test("a change the queue had no room for (SQLITE_FULL) is kept and queued once there is room, not dropped", async () => {
    const dir = tempDir('scanrelay-watch-full-');
    const root = join(dir, 'media');
    mkdirSync(join(root, 'Movies', 'Heat (1995)'), { recursive: true });
    const store = new QueueStore(join(dir, 'queue.db'));
    const intake = new QueueIntake(store, [], () => ({ delayMs: 600_000, maxMs: 1_800_000 }), () => undefined);
    const lines: Array<Record<string, any>> = [];
    const log = pino({ level: 'debug', base: undefined }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const { config } = parseConfig({ SERVER_PATH_MAPPINGS: { '/data/': [`${root}/`] }, WATCH: { ENABLED: true, PATHS: [root] } });
    const watcher = new FolderWatcher({ config, intake, log, writeSettleMs: 100, batchMs: 20, diskFullRetryMs: 50 });
    await watcher.start();
    try {
      // The queue file may not grow: requests go in until its free pages are used up.
      store.db.pragma('incremental_vacuum');
      store.db.pragma(`max_page_count = ${store.db.pragma('page_count', { simple: true }) as number}`);
      let filled = false;
      for (let i = 0; i < 5000 && !filled; i++) {
        await intake.enqueue([{ folder: `/data/Filler/${i}`, source: 'Manual' }]).catch((err: { code?: string }) => {
          assert.match(String(err.code), /^SQLITE_FULL/);
          filled = true;
        });
      }
      assert.ok(filled, 'the capped file refused a request');

      writeFileSync(join(root, 'Movies', 'Heat (1995)', 'Heat.mkv'), 'x');
      await waitFor(() => lines.some((l) => /the queue's disk is full: 1 scan request\(s\) are kept/.test(l.msg)), 20_000, 'the kept change');
      assert.ok(!store.view.listOpen().some((e) => e.folder === '/data/Movies/Heat (1995)'));
      assert.ok(!lines.some((l) => l.msg === 'watch: could not queue scans'), 'not dropped with an error');

      store.db.pragma('max_page_count = 1073741823');
      await waitFor(() => store.view.listOpen().some((e) => e.folder === '/data/Movies/Heat (1995)'), 20_000, 'queued once there is room');
    } finally {
      await watcher.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
