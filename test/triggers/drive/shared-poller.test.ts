import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import { configSchema, type Config, type FileConfig } from '../../../src/config/schema.ts';
import { relayConfig } from '../../../src/config/named-targets.ts';
import { writeTokenFile } from '../../../src/google/token-file.ts';
import type { Logger } from '../../../src/core/logger.ts';
import { MetaConflictError, type QueueBackend } from '../../../src/queue/backend.ts';
import { QueueIntake } from '../../../src/queue/door.ts';
import { PgLease } from '../../../src/db/pg/lease.ts';
import { PgQueueStore } from '../../../src/queue/pg/store.ts';
import { QueueStore } from '../../../src/queue/store.ts';
import { DriveCache, type CacheOp, type DriveCacheStore } from '../../../src/triggers/drive/cache.ts';
import { CACHE_FILE_IMPORT_KEY, copyCacheFileAtFirstStart } from '../../../src/triggers/drive/import.ts';
import { openDrive, openDriveCache } from '../../../src/triggers/drive/index.ts';
import { DrivePoller, pendingKey, tokenKey } from '../../../src/triggers/drive/poller.ts';
import type { DriveWatcher } from '../../../src/triggers/drive/watcher.ts';
import { FakeGoogle } from '../../fakes/google.ts';
import { startPgCluster, type PgCluster } from '../../helpers/postgres.ts';
import { tempDir, waitFor } from '../../helpers/relay.ts';

// Drive monitoring with several relays on one PostgreSQL queue (issue 34): the cache and the page token live in
// the shared database, and a lease picks the one relay that polls. Real PostgreSQL, the fake Google Drive.

const FAST = { baseMs: 5, maxMs: 20, attempts: 4 };
let cluster: PgCluster;
const closers: Array<() => Promise<unknown> | unknown> = [];
before(async () => {
  cluster = await startPgCluster();
});
after(async () => {
  for (const c of closers.reverse()) await c();
  cluster?.destroy();
});

interface Relay {
  id: string;
  poller: DrivePoller;
  store: PgQueueStore;
  cache: DriveCacheStore;
  /** The access token this relay's calls carry: the fake records it, so calls can be told apart by relay. */
  bearer: string;
  lines: Array<{ msg: string; level: number }>;
  watcher: DriveWatcher;
}

interface World {
  google: FakeGoogle;
  url: string;
  config: Config;
  relay(
    id: string,
    opts?: { leaseMs?: number; cache?: (c: DriveCacheStore) => DriveCacheStore; watcher?: (w: DriveWatcher) => DriveWatcher; dir?: string; copyCacheFile?: boolean },
  ): Promise<Relay>;
  /** Drive changes-list calls made by one relay. */
  changeCalls(r: Relay): number;
  queued(): Promise<Array<{ folder: string; files: string[]; event: string; requests: number }>>;
  sql<R extends pg.QueryResultRow>(text: string, params?: unknown[]): Promise<R[]>;
}

async function world(): Promise<World> {
  const google = await new FakeGoogle().start();
  closers.push(() => google.stop());
  const url = await cluster.createDatabase();
  const root = google.rootName;
  const config = relayConfig(configSchema.parse({
    SERVER_PASS: 'secret',
    SERVER_QUEUE_URL: url,
    SERVER_PATH_MAPPINGS: { '/data/': [`${root}/Media/`] },
    PLEX_DATABASE_PATH: '/nonexistent/plex.db',
    GOOGLE: {
      ENABLED: true,
      ...google.configKeys(),
      ALLOWED: { FILE_PATHS: [`${root}/Media/`], FILE_EXTENSIONS: true, FILE_EXTENSIONS_LIST: ['mkv'], MIME_TYPES: true, MIME_TYPES_LIST: ['video'] },
    },
  }) as FileConfig);
  google.seed({ id: 'media', name: 'Media', parents: [google.rootId] });
  google.seed({ id: 'movies', name: 'Movies', parents: ['media'] });
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  closers.push(() => admin.end());
  let first: PgQueueStore | undefined;
  return {
    google,
    url,
    config,
    async relay(id, opts = {}) {
      const dir = opts.dir ?? tempDir('scanrelay-shared-drive-');
      const token = google.issueToken();
      writeTokenFile(join(dir, 'token.json'), token);
      const store = await PgQueueStore.open({ url, relayId: id });
      first ??= store;
      const intake = new QueueIntake(store, [], () => ({ delayMs: 60_000, maxMs: 0 }));
      const lines: Relay['lines'] = [];
      const log = pino({ level: 'info', base: undefined }, { write: (l: string) => void lines.push(JSON.parse(l)) }) as unknown as Logger;
      const opened = await openDriveCache(config, join(dir, 'cache.db'), log, { id, leaseMs: opts.leaseMs ?? 30_000 });
      const cache = opts.cache ? opts.cache(opened.cache) : opened.cache;
      const drive = openDrive(config, { cachefile: join(dir, 'cache.db'), tokenfile: join(dir, 'token.json') }, log, FAST, undefined, cache);
      const watcher = opts.watcher ? opts.watcher(drive.watcher) : drive.watcher;
      // As startDriveMonitor prepares the first poll on a shared queue (the import of plex_autoscan's state aside).
      const prepare = opts.copyCacheFile ? () => copyCacheFileAtFirstStart({ cachefile: join(dir, 'cache.db'), cache, store, intake, log }) : undefined;
      const poller = new DrivePoller({ config, watcher, cache, store, intake, inPlex: () => false, log, lease: opened.lease, prepare });
      closers.push(async () => {
        await poller.stop(100);
        await opened.cache.close();
        await store.close();
      });
      return { id, poller, store, cache, bearer: token.access_token, lines, watcher };
    },
    changeCalls: (r) => google.driveCalls().filter((c) => c.path === '/drive/v3/changes' && c.bearer === r.bearer).length,
    async queued() {
      const entries = await first!.view.listOpen();
      return entries.map((e) => ({ folder: e.folder, files: e.files, event: e.event, requests: e.requests }));
    },
    async sql(text, params) {
      return (await admin.query(text, params)).rows;
    },
  };
}

/** Started as a server starts it: the first poll at once, the next a POLL_INTERVAL (60 s) later, past the test. */
async function started(...relays: Relay[]): Promise<void> {
  for (const r of relays) {
    r.poller.start();
    await waitFor(() => r.poller.status().lastPollAt !== undefined, 20_000, `${r.id}'s first poll`);
  }
}

describe('drive monitoring on a shared PostgreSQL queue', () => {
  it('two relays: one holds the lease and calls the changes API, the other stands by and says who polls; each change is queued once', async () => {
    const w = await world();
    const a = await w.relay('relay-a');
    const b = await w.relay('relay-b');
    await started(a, b);
    // relay-a stored the first page token; relay-b asked Google nothing at all.
    assert.equal(await a.store.meta.get(tokenKey({ key: 'root' })), '1');
    assert.equal(w.google.driveCalls().filter((c) => c.bearer === b.bearer).length, 0);
    assert.deepEqual(b.poller.status().state, 'standby');
    assert.equal(b.poller.status().polledBy, 'relay-a');
    assert.equal(a.poller.status().state, 'polling');
    assert.equal(a.poller.status().polledBy, 'relay-a');

    w.google.put({ id: 'f1', name: 'Film One.mkv', parents: ['movies'], md5Checksum: 'a1' });
    w.google.put({ id: 'f2', name: 'Film Two.mkv', parents: ['movies'], md5Checksum: 'a2' });
    for (let i = 0; i < 3; i++) {
      await b.poller.pollOnce();
      await a.poller.pollOnce();
    }
    assert.deepEqual(await w.queued(), [
      { folder: '/data/Movies', files: ['/data/Movies/Film One.mkv', '/data/Movies/Film Two.mkv'], event: 'new', requests: 2 },
    ]);
    assert.equal(w.changeCalls(a), 3);
    assert.equal(w.changeCalls(b), 0, 'the relay on standby never calls the changes API');
    // The cache is in the shared database: relay-b reads what relay-a cached.
    assert.deepEqual((await b.cache.get('f1'))?.paths, ['My Drive/Media/Movies/Film One.mkv']);
    // Said once each, not at every poll.
    assert.equal(a.lines.filter((l) => /this relay \(relay-a\) polls the drive now/.test(l.msg)).length, 1);
    assert.equal(b.lines.filter((l) => /relay relay-a polls the drive; this relay stands by/.test(l.msg)).length, 1);

    // reset_page_token works from the relay on standby.
    w.google.put({ id: 'f3', name: 'Film Three.mkv', parents: ['movies'], md5Checksum: 'a3' });
    await b.poller.resetPageToken();
    assert.equal(await a.store.meta.get(tokenKey({ key: 'root' })), '4');
    await a.poller.pollOnce();
    assert.equal((await w.queued())[0]!.requests, 2, 'the change before the reset is not scanned');
  });

  it('the polling relay dies (no release): the other takes over once the lease ran out, from the shared token and cache, and recognises a rename', async () => {
    const w = await world();
    const a = await w.relay('relay-a', { leaseMs: 1500 });
    const b = await w.relay('relay-b', { leaseMs: 1500 });
    await started(a, b);
    w.google.put({ id: 'f', name: 'Film.mkv', parents: ['movies'], md5Checksum: 'm' });
    await a.poller.pollOnce();
    assert.deepEqual((await w.queued()).map((q) => [q.files, q.event]), [[['/data/Movies/Film.mkv'], 'new']]);
    // relay-a is gone as after kill -9: the lease row stays as it left it (another owner now, so the stop below
    // releases nothing), and it polls and renews no more.
    await w.sql(`UPDATE leases SET owner = 'dead-process'`);
    await a.poller.stop(100);
    await w.sql(`DELETE FROM scan_files; DELETE FROM scans`);

    w.google.put({ id: 'f', name: 'Film (2020).mkv', parents: ['movies'], md5Checksum: 'm' });
    await b.poller.pollOnce();
    assert.equal(b.poller.status().state, 'standby', 'the lease still holds');
    assert.equal(w.changeCalls(b), 0);
    await waitFor(async () => {
      await b.poller.pollOnce();
      return b.poller.status().state === 'polling';
    }, 20_000, 'relay-b to take the lease over');
    // One poll read the page from relay-a's token; the old name came from relay-a's cache entry.
    assert.deepEqual((await w.queued()).map((q) => [q.files, q.event]), [[['/data/Movies/Film (2020).mkv'], 'renamed']]);
    assert.equal(w.changeCalls(b), 1);
    assert.ok(b.lines.some((l) => /this relay \(relay-b\) polls the drive now \(taking over from relay relay-a\)/.test(l.msg)));
    await b.poller.pollOnce();
    assert.equal((await w.queued())[0]!.requests, 1, 'nothing queued twice');
  });

  it('a clean stop releases the lease: the other relay polls at its next try', async () => {
    const w = await world();
    const a = await w.relay('relay-a');
    const b = await w.relay('relay-b');
    await started(a, b);
    assert.equal(b.poller.status().state, 'standby');
    await a.poller.stop();
    assert.ok(a.lines.some((l) => /released the drive lease/.test(l.msg)));
    w.google.put({ id: 'f', name: 'Film.mkv', parents: ['movies'], md5Checksum: 'm' });
    await b.poller.pollOnce();
    assert.equal(b.poller.status().state, 'polling');
    assert.deepEqual((await w.queued()).map((q) => q.files), [['/data/Movies/Film.mkv']]);
  });

  it('a relay that paused past its lease does not commit the page another relay committed; it stands by afterwards', async () => {
    const w = await world();
    let release: (() => void) | undefined;
    let paused: (() => void) | undefined;
    const pausedNow = new Promise<void>((r) => (paused = r));
    const a = await w.relay('relay-a', {
      watcher: (inner) => {
        const page = inner.page.bind(inner);
        let pause = false;
        inner.page = async (...args) => {
          const out = await page(...args);
          if (pause) {
            pause = false;
            paused!();
            await new Promise<void>((r) => (release = r));
          }
          return out;
        };
        (inner as DriveWatcher & { pauseNext(): void }).pauseNext = () => (pause = true);
        return inner;
      },
    });
    const b = await w.relay('relay-b');
    await started(a, b);
    w.google.put({ id: 'f', name: 'Film.mkv', parents: ['movies'], md5Checksum: 'm' });
    (a.watcher as DriveWatcher & { pauseNext(): void }).pauseNext();
    const aPoll = a.poller.pollOnce();
    await pausedNow;
    // relay-a read the page and stalls (a long GC pause, a partition) until its lease has run out.
    await w.sql(`UPDATE leases SET expires_at = 0`);
    await b.poller.pollOnce();
    assert.equal(b.poller.status().state, 'polling');
    assert.deepEqual((await w.queued()).map((q) => [q.files, q.requests]), [[['/data/Movies/Film.mkv'], 1]]);
    const bToken = await b.store.meta.get(tokenKey({ key: 'root' }));
    assert.equal(bToken, '2');

    release!();
    await aPoll;
    assert.deepEqual((await w.queued()).map((q) => [q.files, q.requests]), [[['/data/Movies/Film.mkv'], 1]], 'relay-a did not queue the page again');
    assert.equal(await b.store.meta.get(tokenKey({ key: 'root' })), bToken);
    assert.equal(await b.store.meta.get(pendingKey({ key: 'root' })), undefined, 'no cache writes of relay-a left pending');
    assert.ok(a.lines.some((l) => /the page token changed while this relay read the page .*dropped the page and its 1 scan request/.test(l.msg)));
    await a.poller.pollOnce();
    assert.equal(a.poller.status().state, 'standby');
    assert.equal(a.poller.status().polledBy, 'relay-b');
    assert.ok(a.lines.some((l) => /relay relay-b polls the drive now; this relay lost the drive lease and stands by/.test(l.msg)));
  });

  it('the poller dies after its page committed but before the cache writes: the next holder applies them from the queue, nothing is queued twice', async () => {
    const w = await world();
    const crashing = (c: DriveCacheStore): DriveCacheStore =>
      Object.assign(Object.create(Object.getPrototypeOf(c) as object) as DriveCacheStore, c, {
        applyPending: () => Promise.reject(new Error('simulated crash before the cache write')),
      });
    const a = await w.relay('relay-a', { cache: crashing, leaseMs: 1000 });
    await a.poller.pollOnce();
    w.google.put({ id: 'f', name: 'Film.mkv', parents: ['movies'], md5Checksum: 'm' });
    await assert.rejects(a.poller.pollOnce(), /simulated crash/);
    await a.poller.stop(100);
    await w.sql(`UPDATE leases SET expires_at = 0`);
    assert.equal((await w.queued()).length, 1, 'the scan is committed');
    assert.ok(await a.store.meta.get(pendingKey({ key: 'root' })), 'its cache writes wait in the queue');

    const b = await w.relay('relay-b');
    w.google.put({ id: 'f', name: 'Film.mkv', parents: ['movies'], md5Checksum: 'm' });
    await b.poller.pollOnce();
    assert.deepEqual((await b.cache.get('f'))?.paths, ['My Drive/Media/Movies/Film.mkv']);
    assert.equal(await b.store.meta.get(pendingKey({ key: 'root' })), undefined);
    assert.equal((await w.queued())[0]!.requests, 1, 'the unchanged file is recognised from the replayed cache writes');
  });

  it("a relay moved from SQLite (move-queue) keeps what it cached: its --cachefile's items fill the empty shared cache on its first poll, once", async () => {
    const w = await world();
    const dir = tempDir('scanrelay-moved-');
    const file = new DriveCache(join(dir, 'cache.db'));
    file.apply([
      { op: 'put', item: { id: 'media', name: 'Media', parents: [w.google.rootId], md5: null, mimeType: 'application/vnd.google-apps.folder', paths: ['My Drive/Media'] } },
      { op: 'put', item: { id: 'f', name: 'Film.mkv', parents: ['movies'], md5: 'm', mimeType: 'video/x-matroska', paths: ['My Drive/Media/Movies/Film.mkv'] } },
    ]);
    file.setDriveName('0A1', 'Team Media');
    file.close();
    const a = await w.relay('relay-a', { dir, copyCacheFile: true });
    await a.poller.pollOnce();
    assert.equal(await a.cache.count(), 2);
    assert.equal(await a.cache.driveName('0A1'), 'Team Media');
    assert.equal(JSON.parse((await a.store.meta.get(CACHE_FILE_IMPORT_KEY))!).items, 2);
    assert.ok(a.lines.some((l) => /copied 2 drive cache item\(s\) from .*cache\.db into the shared cache at postgres:/.test(l.msg)));
    w.google.put({ id: 'f', name: 'Film (2020).mkv', parents: ['movies'], md5Checksum: 'm' });
    await a.poller.pollOnce();
    assert.deepEqual((await w.queued()).map((q) => [q.files, q.event]), [[['/data/Movies/Film (2020).mkv'], 'renamed']]);
    // Only once: a relay with another cache file finds the marker and copies nothing.
    await w.sql(`DELETE FROM drive_items`);
    const b = await w.relay('relay-b', { dir, copyCacheFile: true });
    await a.poller.stop();
    await b.poller.pollOnce();
    assert.ok(b.lines.some((l) => /this relay \(relay-b\) polls the drive now/.test(l.msg)), 'relay-b polled, with the same cache file beside it');
    assert.equal(await b.cache.count(), 0);
  });

  it('applyPending applies a page once: a second try with the same writes, or with writes another poller replaced, changes nothing', async () => {
    const w = await world();
    const a = await w.relay('relay-a');
    const item = { id: 'x', name: 'X.mkv', parents: ['movies'], md5: 'x', mimeType: 'video/x-matroska', paths: ['My Drive/Media/Movies/X.mkv'] };
    const ops: CacheOp[] = [{ op: 'put', item }];
    const key = pendingKey({ key: 'root' });
    await a.store.meta.set(key, JSON.stringify(ops));
    assert.equal(await a.cache.applyPending(key, JSON.stringify(ops), a.store.meta), true);
    assert.deepEqual(await a.cache.get('x'), item);
    await a.cache.remove('x');
    assert.equal(await a.cache.applyPending(key, JSON.stringify(ops), a.store.meta), false, 'already applied and cleared');
    assert.equal(await a.cache.get('x'), undefined);
    await a.store.meta.set(key, JSON.stringify([{ op: 'remove', id: 'y' }]));
    assert.equal(await a.cache.applyPending(key, JSON.stringify(ops), a.store.meta), false, 'replaced by a later page');
    assert.equal(await a.cache.get('x'), undefined);
  });
});

describe('the PostgreSQL drive cache', () => {
  it('keeps items, their children, drive names and counts; apply keeps the last write per item', async () => {
    const url = await cluster.createDatabase();
    const { cache } = await openDriveCache({ SERVER_QUEUE_URL: url }, '/nonexistent/cache.db', pino({ level: 'silent' }) as unknown as Logger);
    closers.push(() => cache.close());
    const item = (id: string, parents: string[], paths: string[]) => ({ id, name: `${id}.mkv`, parents, md5: null, mimeType: null, paths });
    await cache.apply([
      { op: 'put', item: item('a', ['p'], ['X/a.mkv']) },
      { op: 'put', item: item('b', ['p', 'q'], ['X/b.mkv', 'Y/b.mkv']) },
      { op: 'put', item: item('c', ['q'], []) },
      { op: 'remove', id: 'c' },
      { op: 'remove', id: 'a' },
      { op: 'put', item: item('a', ['q'], ["it's/a.mkv"]) },
    ]);
    assert.equal(await cache.count(), 2);
    assert.deepEqual((await cache.children('p')).sort(), ['b']);
    assert.deepEqual((await cache.children('q')).sort(), ['a', 'b']);
    assert.deepEqual((await cache.get('a'))?.paths, ["it's/a.mkv"]);
    assert.equal(await cache.remove('a'), true);
    assert.equal(await cache.remove('a'), false);
    await cache.setDriveName('0A1', 'Team');
    await cache.setDriveName('0A1', 'Team Media');
    assert.equal(await cache.driveName('0A1'), 'Team Media');
    assert.equal(await cache.driveName('0A2'), undefined);
    assert.match(cache.location, /^postgres:\/\/scanrelay@127\.0\.0\.1:\d+\//);
  });
});

describe('PgLease', () => {
  it('one holder at a time; renewed by its owner; taken by another only once it ran out; released on request', async () => {
    const url = await cluster.createDatabase();
    await PgQueueStore.open({ url, relayId: 'migrate' }).then((s) => s.close());
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    closers.push(() => pool.end());
    const a = new PgLease(pool, 'drive', 'relay-a', 60_000);
    const b = new PgLease(pool, 'drive', 'relay-b', 60_000);
    const first = await a.take();
    assert.equal(first.held, true);
    assert.deepEqual(await b.take(), { held: false, holder: 'relay-a', since: first.since });
    assert.deepEqual(await a.take(), first, 'a renewal keeps the holding (same since)');
    // A second process under the same relay name is another owner.
    assert.equal((await new PgLease(pool, 'drive', 'relay-a', 60_000).take()).held, false);
    await pool.query(`UPDATE leases SET expires_at = 0`);
    const taken = await b.take();
    assert.equal(taken.held, true);
    assert.equal((await a.take()).holder, 'relay-b');
    await a.release();
    assert.equal((await a.take()).held, false, "a release by a non-holder leaves the holder's lease alone");
    await b.release();
    assert.equal((await a.take()).held, true);
  });
});

describe('compare and set on queue meta values, on both stores', () => {
  for (const kind of ['sqlite', 'postgres'] as const) {
    it(`${kind}: a commit whose expected value is not there writes nothing; the other requests of its batch are committed`, async () => {
      const store: QueueBackend =
        kind === 'sqlite' ? new QueueStore(join(tempDir(), 'queue.db')) : await PgQueueStore.open({ url: await cluster.createDatabase(), relayId: 'relay-a' });
      closers.push(() => store.close());
      const intake = new QueueIntake(store, [], () => ({ delayMs: 60_000, maxMs: 0 }));
      const req = (folder: string) => ({ folder, files: [`${folder}/x.mkv`], source: 'Drive' as const, event: 'new' });
      await intake.enqueue([], { 'drive.page_token.root': '5' }, { 'drive.page_token.root': null });
      await assert.rejects(intake.enqueue([req('/data/A')], { 'drive.page_token.root': '6' }, { 'drive.page_token.root': null }), MetaConflictError);
      // Same turn of the event loop: one conflicting, one plain request, one that expects the right value.
      const [bad, plain, good] = await Promise.allSettled([
        intake.enqueue([req('/data/B')], { 'drive.page_token.root': '7' }, { 'drive.page_token.root': '4' }),
        intake.enqueue([req('/data/C')]),
        intake.enqueue([req('/data/D')], { 'drive.page_token.root': '8' }, { 'drive.page_token.root': '5' }),
      ]);
      assert.equal(bad.status, 'rejected');
      assert.match(String((bad as PromiseRejectedResult).reason), /drive\.page_token\.root is "5", not "4"/);
      assert.equal(plain.status, 'fulfilled');
      assert.equal(good.status, 'fulfilled');
      assert.equal(await store.meta.get('drive.page_token.root'), '8');
      assert.deepEqual((await store.view.listOpen()).map((e) => e.folder).sort(), ['/data/C', '/data/D']);
      await store.meta.set('drive.cache_pending.root', '[]');
      await store.meta.set('drive.cache_pending_other', 'x');
      await store.meta.set('drive.cache_pending.gone', null);
      assert.deepEqual(await store.meta.list('drive.cache_pending.'), [['drive.cache_pending.root', '[]']]);
    });
  }
});
