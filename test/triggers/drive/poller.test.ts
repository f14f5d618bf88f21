import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.ts';
import { configSchema, type Config, type FileConfig } from '../../../src/config/schema.ts';
import { relayConfig } from '../../../src/config/named-targets.ts';
import { DriveCache } from '../../../src/triggers/drive/cache.ts';
import { writeTokenFile } from '../../../src/google/token-file.ts';
import { DriveWatcher } from '../../../src/triggers/drive/watcher.ts';
import pino from 'pino';
import { silentLogger, type Logger } from '../../../src/core/logger.ts';
import { QueueIntake } from '../../../src/queue/door.ts';
import { QueueStore } from '../../../src/queue/store.ts';
import { PlexDatabase } from '../../../src/targets/plex/database.ts';
import { cryptDecoderOf, openDrive } from '../../../src/triggers/drive/index.ts';
import { inPlexChecker } from '../../../src/targets/plex/in-plex-check.ts';
import { DrivePoller, tokenKey } from '../../../src/triggers/drive/poller.ts';
import { FOLDER, FakeGoogle } from '../../fakes/google.ts';
import { addMediaFile, createPlexDb } from '../../fakes/plex-db.ts';
import { cryptConf, cryptEncode } from '../../helpers/rclone.ts';
import { tempDir, waitFor } from '../../helpers/relay.ts';

const FAST = { baseMs: 5, maxMs: 20, attempts: 4 };

/** The Plex database of the config's target `plex` (its PLEX_DATABASE_PATH). */
function plexDatabaseOf(config: Config): string {
  const plex = config.targets.get('plex');
  assert.ok(plex?.TYPE === 'plex');
  return plex.DATABASE_PATH;
}
const fakes: FakeGoogle[] = [];
after(async () => {
  for (const f of fakes) await f.stop();
});

interface Setup {
  google: FakeGoogle;
  config: Config;
  store: QueueStore;
  intake: QueueIntake;
  dir: string;
  cachefile: string;
  tokenfile: string;
  /** A poller as a (re)started server would build it. */
  poller(opts?: { cache?: DriveCache }): { poller: DrivePoller; cache: DriveCache };
  queued(): Array<{ folder: string; files: string[]; source: string; event: string; updateType: string }>;
}

async function setup(over: { google?: Record<string, unknown>; config?: Record<string, unknown>; rootName?: string; allowed?: Record<string, unknown>; log?: Logger } = {}): Promise<Setup> {
  const google = await new FakeGoogle({ rootName: over.rootName }).start();
  fakes.push(google);
  const dir = tempDir('scanrelay-drive-');
  const root = google.rootName;
  const config = relayConfig(configSchema.parse({
    SERVER_PASS: 'secret',
    SERVER_PATH_MAPPINGS: { '/data/': [`${root}/Media/`] },
    PLEX_DATABASE_PATH: join(dir, 'plex.db'),
    GOOGLE: {
      ENABLED: true,
      ...google.configKeys(),
      ALLOWED: {
        FILE_PATHS: [`${root}/Media/`],
        FILE_EXTENSIONS: true,
        FILE_EXTENSIONS_LIST: ['mkv', 'mp4', 'ts'],
        MIME_TYPES: true,
        MIME_TYPES_LIST: ['video'],
        ...over.allowed,
      },
      ...over.google,
    },
    ...over.config,
  }) as FileConfig);
  const cachefile = join(dir, 'cache.db');
  const tokenfile = join(dir, 'token.json');
  writeTokenFile(tokenfile, google.issueToken());
  const store = new QueueStore(join(dir, 'queue.db'));
  const intake = new QueueIntake(store, [], () => ({ delayMs: 60_000, maxMs: 0 }));
  const log = over.log ?? silentLogger();
  google.seed({ id: 'media', name: 'Media', parents: [google.rootId] });
  google.seed({ id: 'tv', name: 'TV', parents: ['media'] });
  google.seed({ id: 'show', name: 'Show', parents: ['tv'] });
  google.seed({ id: 'movies', name: 'Movies', parents: ['media'] });
  return {
    google,
    config,
    store,
    intake,
    dir,
    cachefile,
    tokenfile,
    poller(opts = {}) {
      const opened = openDrive(config, { cachefile, tokenfile }, log, FAST);
      const cache = opts.cache ?? (opened.cache as DriveCache);
      if (opts.cache) opened.cache.close();
      const plexDb = new PlexDatabase(plexDatabaseOf(config));
      const watcher = new DriveWatcher(opened.client, cache, config.GOOGLE, log, cryptDecoderOf(config));
      const poller = new DrivePoller({ config, watcher, cache, store, intake, inPlex: inPlexChecker(config, plexDb, log), log });
      return { poller, cache };
    },
    queued() {
      return store.view.listOpen().map((e) => ({ folder: e.folder, files: e.files, source: e.source, event: e.event, updateType: e.updateType }));
    },
  };
}

/** First poll: stores the start token, as the first run does. */
async function started(s: Setup) {
  const p = s.poller();
  await p.poller.pollOnce();
  return p;
}

describe('drive poller', () => {
  it('first poll stores the start page token and scans nothing; an idle poll makes exactly one API call', async () => {
    const s = await setup();
    const { poller } = await started(s);
    assert.equal(s.store.meta.get(tokenKey({ key: 'root' })), '1');
    assert.deepEqual(s.google.driveCalls().map((c) => c.path), ['/drive/v3/changes/startPageToken']);
    const before = s.google.calls.length;
    await poller.pollOnce();
    const idle = s.google.calls.slice(before);
    assert.equal(idle.length, 1);
    assert.equal(idle[0]!.path, '/drive/v3/changes');
    assert.equal(idle[0]!.query.supportsAllDrives, 'true');
    assert.ok(idle[0]!.query.fields?.includes('newStartPageToken'));
    assert.deepEqual(s.queued(), []);
  });

  it('scans a new file at its mapped folder with source Drive; fetches each unknown parent once', async () => {
    const s = await setup();
    const { poller, cache } = await started(s);
    s.google.put({ id: 'ep1', name: 'Show - S01E01.mkv', parents: ['show'], md5Checksum: 'a1', size: '100' });
    s.google.put({ id: 'ep2', name: 'Show - S01E02.mkv', parents: ['show'], md5Checksum: 'a2', size: '100' });
    await poller.pollOnce();
    assert.deepEqual(s.queued(), [
      { folder: '/data/TV/Show', files: ['/data/TV/Show/Show - S01E01.mkv', '/data/TV/Show/Show - S01E02.mkv'], source: 'Drive', event: 'new', updateType: 'Created' },
    ]);
    const fetched = s.google.driveCalls().filter((c) => c.path.startsWith('/drive/v3/files/')).map((c) => c.path);
    assert.deepEqual(fetched.sort(), ['/drive/v3/files/media', '/drive/v3/files/root-folder-id', '/drive/v3/files/show', '/drive/v3/files/tv']);
    assert.deepEqual(cache.get('ep1')?.paths, ['My Drive/Media/TV/Show/Show - S01E01.mkv']);
  });

  it('md5 change, rename and move scan; a change with the same md5, name and path does not', async () => {
    const s = await setup();
    const { poller } = await started(s);
    s.google.put({ id: 'm', name: 'Film.mkv', parents: ['movies'], md5Checksum: 'x1' });
    await poller.pollOnce();
    s.store.db.exec(`DELETE FROM scan_files; DELETE FROM scans`);

    s.google.put({ id: 'm', name: 'Film.mkv', parents: ['movies'], md5Checksum: 'x1' });
    await poller.pollOnce();
    assert.deepEqual(s.queued(), [], 'metadata-only change is not scanned');

    s.google.put({ id: 'm', name: 'Film.mkv', parents: ['movies'], md5Checksum: 'x2' });
    await poller.pollOnce();
    assert.deepEqual(s.queued().map((q) => [q.folder, q.event]), [['/data/Movies', 'modified']]);
    s.store.db.exec(`DELETE FROM scan_files; DELETE FROM scans`);

    s.google.put({ id: 'm', name: 'Film (2020).mkv', parents: ['movies'], md5Checksum: 'x2' });
    await poller.pollOnce();
    assert.deepEqual(s.queued().map((q) => [q.files[0], q.event]), [['/data/Movies/Film (2020).mkv', 'renamed']]);
    s.store.db.exec(`DELETE FROM scan_files; DELETE FROM scans`);

    s.google.put({ id: 'm', name: 'Film (2020).mkv', parents: ['show'], md5Checksum: 'x2' });
    await poller.pollOnce();
    assert.deepEqual(s.queued().map((q) => [q.files[0], q.event]), [['/data/TV/Show/Film (2020).mkv', 'moved']]);
  });

  it('trash and removal drop the file from the cache without a scan; SCAN_REMOVED scans the former folder', async () => {
    const s = await setup();
    const { poller, cache } = await started(s);
    s.google.put({ id: 'a', name: 'A.mkv', parents: ['movies'], md5Checksum: 'a' });
    s.google.put({ id: 'b', name: 'B.mkv', parents: ['show'], md5Checksum: 'b' });
    await poller.pollOnce();
    s.store.db.exec(`DELETE FROM scan_files; DELETE FROM scans`);
    s.google.trash('a');
    s.google.remove('b');
    await poller.pollOnce();
    assert.deepEqual(s.queued(), []);
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.get('b'), undefined);

    const r = await setup({ google: { SCAN_REMOVED: true } });
    const { poller: p2 } = await started(r);
    r.google.put({ id: 'a', name: 'A.mkv', parents: ['movies'], md5Checksum: 'a' });
    await p2.pollOnce();
    r.store.db.exec(`DELETE FROM scan_files; DELETE FROM scans`);
    r.google.trash('a');
    await p2.pollOnce();
    assert.deepEqual(r.queued().map((q) => [q.folder, q.updateType, q.event]), [['/data/Movies', 'Deleted', 'removed']]);
  });

  it('a folder rename is not scanned; paths below it follow, and a later file there is scanned at the new path', async () => {
    const s = await setup();
    const { poller, cache } = await started(s);
    s.google.put({ id: 'ep', name: 'E1.mkv', parents: ['show'], md5Checksum: 'e' });
    await poller.pollOnce();
    s.store.db.exec(`DELETE FROM scan_files; DELETE FROM scans`);
    s.google.put({ id: 'show', name: 'Show (2019)', parents: ['tv'], mimeType: FOLDER });
    await poller.pollOnce();
    assert.deepEqual(s.queued(), []);
    assert.deepEqual(cache.get('ep')?.paths, ['My Drive/Media/TV/Show (2019)/E1.mkv']);
    s.google.put({ id: 'ep2', name: 'E2.mkv', parents: ['show'], md5Checksum: 'e2' });
    await poller.pollOnce();
    assert.deepEqual(s.queued().map((q) => q.folder), ['/data/TV/Show (2019)']);
  });

  it('applies the filters: a .sub file, a non-video MIME type and a path outside FILE_PATHS are not scanned', async () => {
    const s = await setup();
    const { poller } = await started(s);
    s.google.seed({ id: 'dl', name: 'Downloads', parents: [s.google.rootId] });
    s.google.put({ id: 's', name: 'Film.sub', parents: ['movies'], md5Checksum: 's', mimeType: 'video/MP2G' });
    s.google.put({ id: 'j', name: 'poster.mkv', parents: ['movies'], md5Checksum: 'j', mimeType: 'image/jpeg' });
    s.google.put({ id: 'o', name: 'Other.mkv', parents: ['dl'], md5Checksum: 'o' });
    s.google.put({ id: 'n', name: 'notes.txt', parents: ['movies'], md5Checksum: 'n', mimeType: 'text/plain' });
    await poller.pollOnce();
    assert.deepEqual(s.queued(), []);
  });

  it('RCLONE.CRYPT_MAPPINGS: encrypted names are decoded with rclone before the filters and the mappings; one that does not decode is logged and skipped', async () => {
    // plex_autoscan google/drive.py:600-604 decodes a changed file's drive path with rclone.py:17-44
    // (strip the mapped folder, `rclone --config <RCLONE.CONFIG> cryptdecode <remote:> <rest>`, join back)
    // before _remove_unwanted_paths (:618), so FILE_EXTENSIONS and SERVER_PATH_MAPPINGS see the clear path.
    // The MIME filter still sees Drive's type, application/octet-stream, for every encrypted file.
    const confDir = tempDir('scanrelay-crypt-');
    const conf = join(confDir, 'rclone.conf');
    cryptConf(conf, { secret: 'crypt-password' });
    const [encPath] = cryptEncode(conf, 'secret:', ['Movies/Film (2020)/Film (2020).mkv']);
    const [movies, film, file] = encPath!.split('/');
    const lines: Array<{ msg: string }> = [];
    const log = pino({ level: 'info', base: undefined }, { write: (l: string) => void lines.push(JSON.parse(l)) }) as unknown as Logger;
    const crypt = (mimes: string[]) =>
      setup({
        log,
        config: { SERVER_PATH_MAPPINGS: { '/data/': ['My Drive/crypt/'] }, RCLONE: { CONFIG: conf, CRYPT_MAPPINGS: { 'My Drive/crypt/': ['secret:'] } } },
        allowed: { FILE_PATHS: ['My Drive/crypt/'], MIME_TYPES_LIST: mimes },
      });
    const seedCrypt = (s: Setup) => {
      s.google.seed({ id: 'crypt', name: 'crypt', parents: [s.google.rootId] });
      s.google.seed({ id: 'encMovies', name: movies!, parents: ['crypt'] });
      s.google.seed({ id: 'encFilm', name: film!, parents: ['encMovies'] });
      s.google.put({ id: 'f', name: file!, parents: ['encFilm'], md5Checksum: 'f', mimeType: 'application/octet-stream' });
      s.google.put({ id: 'bad', name: 'not-encrypted-at-all.mkv', parents: ['encFilm'], md5Checksum: 'b', mimeType: 'application/octet-stream' });
    };

    const s = await crypt(['video', 'octet-stream']);
    const { poller, cache } = await started(s);
    seedCrypt(s);
    await poller.pollOnce();
    assert.deepEqual(s.queued().map((q) => [q.folder, q.files]), [['/data/Movies/Film (2020)', ['/data/Movies/Film (2020)/Film (2020).mkv']]]);
    assert.deepEqual(cache.get('f')?.paths, [`My Drive/crypt/${encPath}`], 'the cache keeps the drive (encrypted) path');
    assert.ok(
      lines.some((l) => l.msg.includes(`not scanning My Drive/crypt/${movies}/${film}/not-encrypted-at-all.mkv`) && l.msg.includes('could not decrypt')),
      'the name that does not decode is logged',
    );
    assert.ok(lines.some((l) => /1 not decoded/.test(l.msg)));

    // The same file again (same md5, name and drive path) is unchanged, not "moved" by its decoded path.
    s.store.db.exec(`DELETE FROM scan_files; DELETE FROM scans`);
    s.google.put({ id: 'f', name: file!, parents: ['encFilm'], md5Checksum: 'f', mimeType: 'application/octet-stream' });
    await poller.pollOnce();
    assert.deepEqual(s.queued(), []);

    // MIME_TYPES_LIST without a match for application/octet-stream drops encrypted files, as in plex_autoscan.
    const v = await crypt(['video']);
    const { poller: p2 } = await started(v);
    seedCrypt(v);
    await p2.pollOnce();
    assert.deepEqual(v.queued(), []);
  });

  it('RCLONE.CRYPT_MAPPINGS: when rclone cannot run at all, the poll fails and the change is scanned once it can', async () => {
    const confDir = tempDir('scanrelay-crypt-');
    const conf = join(confDir, 'rclone.conf');
    cryptConf(conf, { secret: 'crypt-password' });
    const [encPath] = cryptEncode(conf, 'secret:', ['Film.mkv']);
    // A remote missing from rclone.conf: every run exits non-zero.
    const s = await setup({
      config: { SERVER_PATH_MAPPINGS: { '/data/': ['My Drive/crypt/'] }, RCLONE: { CONFIG: conf, CRYPT_MAPPINGS: { 'My Drive/crypt/': ['nosuch:'] } } },
      allowed: { FILE_PATHS: ['My Drive/crypt/'], MIME_TYPES: false },
    });
    const { poller } = await started(s);
    s.google.seed({ id: 'crypt', name: 'crypt', parents: [s.google.rootId] });
    s.google.put({ id: 'f', name: encPath!, parents: ['crypt'], md5Checksum: 'f', mimeType: 'application/octet-stream' });
    await assert.rejects(poller.pollOnce(), /rclone cryptdecode nosuch: failed/);
    assert.equal(s.store.meta.get(tokenKey({ key: 'root' })), '1', 'token not advanced');
    s.config.RCLONE.CRYPT_MAPPINGS = { 'My Drive/crypt/': ['secret:'] };
    const { poller: fixed } = s.poller();
    await fixed.pollOnce();
    assert.deepEqual(s.queued().map((q) => q.files), [['/data/Film.mkv']]);
  });

  it('uses the localised root name the API returns (Mon Drive)', async () => {
    const s = await setup({ rootName: 'Mon\u00A0Drive' });
    const { poller } = await started(s);
    s.google.put({ id: 'f', name: 'F.mkv', parents: ['movies'], md5Checksum: 'f' });
    await poller.pollOnce();
    assert.deepEqual(s.queued().map((q) => q.files[0]), ['/data/Movies/F.mkv']);
  });

  it('watches only the shared drives TEAMDRIVES lists; their paths start with the drive name', async () => {
    const s = await setup({ google: { TEAMDRIVE: true, TEAMDRIVES: ['Team Media'] }, config: { SERVER_PATH_MAPPINGS: { '/team/': ['Team Media/'] } }, allowed: { FILE_PATHS: ['Team Media/'] } });
    const listed = s.google.addSharedDrive('Team Media');
    const other = s.google.addSharedDrive('Backups');
    const { poller } = await started(s);
    s.google.seed({ id: 'tfold', name: 'Films', parents: [listed], driveId: listed });
    s.google.put({ id: 't1', name: 'T.mkv', parents: ['tfold'], md5Checksum: 't', driveId: listed });
    s.google.seed({ id: 'bfold', name: 'Films', parents: [other], driveId: other });
    s.google.put({ id: 'b1', name: 'B.mkv', parents: ['bfold'], md5Checksum: 'b', driveId: other });
    await poller.pollOnce();
    assert.deepEqual(s.queued().map((q) => q.files[0]), ['/team/Films/T.mkv']);
    const driveIds = new Set(s.google.driveCalls().filter((c) => c.path === '/drive/v3/changes').map((c) => c.query.driveId));
    assert.deepEqual([...driveIds].sort(), [undefined, listed].sort());
    const sharedCall = s.google.driveCalls().find((c) => c.path === '/drive/v3/changes' && c.query.driveId === listed)!;
    assert.equal(sharedCall.query.includeItemsFromAllDrives, 'true');
  });

  it('skips a file Plex already has (size check against the disk, or no check when disabled)', async () => {
    const s = await setup({ config: { SERVER_FILE_EXIST_PATH_MAPPINGS: {} } });
    const plex = createPlexDb(plexDatabaseOf(s.config), [{ id: 1, name: 'Movies', type: 1, roots: ['/data/Movies'] }]);
    addMediaFile(plex, { sectionId: 1, file: '/data/Movies/Known.mkv', size: 5 });
    plex.close();
    const { poller } = await started(s);
    s.google.put({ id: 'k', name: 'Known.mkv', parents: ['movies'], md5Checksum: 'k' });
    await poller.pollOnce();
    assert.deepEqual(s.queued().map((q) => q.files[0]), ['/data/Movies/Known.mkv'], 'not on disk: the size check cannot pass, so it is scanned');

    const local = join(s.dir, 'local');
    mkdirSync(join(local, 'Movies'), { recursive: true });
    writeFileSync(join(local, 'Movies', 'Known.mkv'), '12345');
    const t = await setup({ config: { SERVER_FILE_EXIST_PATH_MAPPINGS: { [`${local}/`]: ['/data/'] } } });
    const plex2 = createPlexDb(plexDatabaseOf(t.config), [{ id: 1, name: 'Movies', type: 1, roots: ['/data/Movies'] }]);
    addMediaFile(plex2, { sectionId: 1, file: '/data/Movies/Known.mkv', size: 5 });
    plex2.close();
    const { poller: p2 } = await started(t);
    t.google.put({ id: 'k', name: 'Known.mkv', parents: ['movies'], md5Checksum: 'k' });
    t.google.put({ id: 'u', name: 'Unknown.mkv', parents: ['movies'], md5Checksum: 'u' });
    await p2.pollOnce();
    assert.deepEqual(t.queued().map((q) => q.files), [['/data/Movies/Unknown.mkv']], 'same size on disk: skipped');

    const d = await setup({ google: { DISABLE_DISK_FILE_SIZE_CHECK: true } });
    const plex3 = createPlexDb(plexDatabaseOf(d.config), [{ id: 1, name: 'Movies', type: 1, roots: ['/data/Movies'] }]);
    addMediaFile(plex3, { sectionId: 1, file: '/data/Movies/Known.mkv', size: 5 });
    plex3.close();
    const { poller: p3 } = await started(d);
    d.google.put({ id: 'k', name: 'Known.mkv', parents: ['movies'], md5Checksum: 'k' });
    await p3.pollOnce();
    assert.deepEqual(d.queued(), [], 'DISABLE_DISK_FILE_SIZE_CHECK: in the database is enough');
  });

  it('tolerates a missing Plex database: files are scanned', async () => {
    const s = await setup({ config: { PLEX_DATABASE_PATH: '/nonexistent/plex.db' } });
    const { poller } = await started(s);
    s.google.put({ id: 'f', name: 'F.mkv', parents: ['movies'], md5Checksum: 'f' });
    await poller.pollOnce();
    assert.equal(s.queued().length, 1);
  });

  it('429 then success: backs off and loses no change', async () => {
    const s = await setup();
    const { poller } = await started(s);
    s.google.put({ id: 'f', name: 'F.mkv', parents: ['movies'], md5Checksum: 'f' });
    s.google.failNext('/drive/v3/changes', 429);
    s.google.failNext('/drive/v3/changes', 403);
    await poller.pollOnce();
    const changeCalls = s.google.driveCalls().filter((c) => c.path === '/drive/v3/changes');
    assert.deepEqual(changeCalls.map((c) => c.status), [429, 403, 200]);
    assert.deepEqual(changeCalls.map((c) => c.query.pageToken), ['1', '1', '1']);
    assert.deepEqual(s.queued().map((q) => q.files[0]), ['/data/Movies/F.mkv']);
  });

  it('a 401 refreshes the token once and retries', async () => {
    const s = await setup();
    const { poller } = await started(s);
    s.google.put({ id: 'f', name: 'F.mkv', parents: ['movies'], md5Checksum: 'f' });
    s.google.validAccessTokens.clear();
    await poller.pollOnce();
    assert.equal(s.google.calls.filter((c) => c.path === '/token' && c.form.grant_type === 'refresh_token').length, 1);
    assert.equal(s.queued().length, 1);
  });

  it('a second 401 after the refresh is reported clearly and the token is not advanced', async () => {
    const s = await setup();
    const { poller } = await started(s);
    s.google.put({ id: 'f', name: 'F.mkv', parents: ['movies'], md5Checksum: 'f' });
    s.google.failNext('/drive/v3/changes', 401, undefined, 2);
    await assert.rejects(poller.pollOnce(), /even after a refresh.*scanrelay authorize/);
    assert.equal(s.store.meta.get(tokenKey({ key: 'root' })), '1');
    await poller.pollOnce();
    assert.equal(s.queued().length, 1, 'the change is scanned once access works again');
  });

  it('5xx beyond the retry budget fails the poll without losing the change', async () => {
    const s = await setup();
    const { poller } = await started(s);
    s.google.put({ id: 'f', name: 'F.mkv', parents: ['movies'], md5Checksum: 'f' });
    s.google.failNext('/drive/v3/changes', 503, undefined, FAST.attempts);
    await assert.rejects(poller.pollOnce(), /503/);
    assert.equal(s.store.meta.get(tokenKey({ key: 'root' })), '1');
    await poller.pollOnce();
    assert.deepEqual(s.queued().map((q) => q.files[0]), ['/data/Movies/F.mkv']);
  });

  it('follows nextPageToken across pages and saves the final start token', async () => {
    const s = await setup();
    const { poller } = await started(s);
    for (let i = 0; i < 1005; i++) s.google.put({ id: `f${i}`, name: `F${i}.mkv`, parents: ['movies'], md5Checksum: `m${i}` });
    await poller.pollOnce();
    const pages = s.google.driveCalls().filter((c) => c.path === '/drive/v3/changes').map((c) => c.query.pageToken);
    assert.deepEqual(pages, ['1', '1001']);
    assert.equal(s.store.meta.get(tokenKey({ key: 'root' })), '1006');
    // Every file of both pages counted (the scan keeps a sample of 1,000 names: issue 35, item 11).
    assert.equal(s.store.view.listOpen()[0]!.fileCount, 1005);
  });

  it('a crash before the page token is saved repeats nothing and loses nothing', async () => {
    const s = await setup();
    await started(s);
    s.google.put({ id: 'f', name: 'F.mkv', parents: ['movies'], md5Checksum: 'f' });
    // The process dies while committing the poll's scans and token: the transaction never lands.
    const commit = s.store.enqueueMany;
    s.store.enqueueMany = () => {
      throw new Error('simulated crash during commit');
    };
    const crashed = s.poller();
    await assert.rejects(crashed.poller.pollOnce(), /simulated crash/);
    s.store.enqueueMany = commit;
    crashed.cache.close();
    assert.deepEqual(s.queued(), []);
    assert.equal(s.store.meta.get(tokenKey({ key: 'root' })), '1', 'token not advanced');

    const restarted = s.poller();
    await restarted.poller.pollOnce();
    await restarted.poller.pollOnce();
    assert.deepEqual(s.queued().map((q) => q.files), [['/data/Movies/F.mkv']]);
    assert.equal(s.store.view.listOpen()[0]!.requests, 1, 'queued once, not twice');
  });

  it('a crash after the commit but before the cache write is repaired from the queue on restart', async () => {
    const s = await setup();
    await started(s);
    s.google.put({ id: 'f', name: 'F.mkv', parents: ['movies'], md5Checksum: 'f' });
    class CrashingCache extends DriveCache {
      override apply(): void {
        throw new Error('simulated crash before the cache write');
      }
    }
    const crashing = new CrashingCache(s.cachefile);
    const crashed = s.poller({ cache: crashing });
    await assert.rejects(crashed.poller.pollOnce(), /simulated crash/);
    crashing.close();
    assert.equal(s.queued().length, 1, 'the scan is committed');

    const restarted = s.poller();
    s.google.put({ id: 'f', name: 'F.mkv', parents: ['movies'], md5Checksum: 'f' });
    await restarted.poller.pollOnce();
    assert.deepEqual(restarted.cache.get('f')?.paths, ['My Drive/Media/Movies/F.mkv']);
    assert.equal(s.store.view.listOpen()[0]!.requests, 1, 'the unchanged file is recognised from the repaired cache, not queued again');
  });

  it('with a lease: a holder that learns in the middle of a poll that another relay took its lease reads no further page; back as the holder, it goes on from the committed token', async () => {
    const s = await setup();
    await started(s);
    for (let i = 0; i < 1005; i++) s.google.put({ id: `f${i}`, name: `F${i}.mkv`, parents: ['movies'], md5Checksum: `m${i}` });
    const lines: Array<{ msg: string }> = [];
    const log = pino({ level: 'info', base: undefined }, { write: (l: string) => void lines.push(JSON.parse(l)) }) as unknown as Logger;
    // The lease as the database would answer: held by `owner` (renewed every third of 300 ms while this relay holds it).
    let owner = 'relay-a';
    const lease = { holder: 'relay-a', ms: 300, take: async () => ({ held: owner === 'relay-a', holder: owner, since: owner === 'relay-a' ? 1 : 2 }), release: async () => {} };
    const { watcher, cache } = openDrive(s.config, { cachefile: s.cachefile, tokenfile: s.tokenfile }, log, FAST);
    const page = watcher.page.bind(watcher);
    let pages = 0;
    watcher.page = async (...args) => {
      const out = await page(...args);
      if (++pages === 1) {
        // relay-b takes the lease while this relay processes its first page; a renewal finds out.
        owner = 'relay-b';
        await waitFor(() => lines.some((l) => /lost the drive lease/.test(l.msg)), 10_000, 'the renewal to find the lease gone');
      }
      return out;
    };
    const poller = new DrivePoller({ config: s.config, watcher, cache, store: s.store, intake: s.intake, inPlex: () => false, log, lease });
    await poller.pollOnce();
    assert.deepEqual(s.google.driveCalls().filter((c) => c.path === '/drive/v3/changes').map((c) => c.query.pageToken), ['1']);
    assert.equal(s.store.meta.get(tokenKey({ key: 'root' })), '1001', 'the page read under the lease is committed (its token had not moved)');
    assert.ok(lines.some((l) => /relay relay-b polls the drive now; this relay lost the drive lease and stands by/.test(l.msg)));
    assert.ok(lines.some((l) => /the drive lease ran out before the next page/.test(l.msg)));
    owner = 'relay-a';
    await poller.pollOnce();
    assert.deepEqual(s.google.driveCalls().filter((c) => c.path === '/drive/v3/changes').map((c) => c.query.pageToken), ['1', '1001']);
    assert.equal(s.store.view.listOpen()[0]!.fileCount, 1005, 'every change queued, none twice');
    assert.ok(lines.some((l) => /this relay \(relay-a\) polls the drive now \(taking over from relay relay-b\)/.test(l.msg)));
    await poller.stop();
  });

  it('a page token the API rejects (400) is replaced by a fresh start token', async () => {
    const s = await setup();
    const { poller } = await started(s);
    s.store.meta.set(tokenKey({ key: 'root' }), 'garbage');
    await poller.pollOnce();
    assert.equal(s.store.meta.get(tokenKey({ key: 'root' })), '1');
    s.google.put({ id: 'f', name: 'F.mkv', parents: ['movies'], md5Checksum: 'f' });
    await poller.pollOnce();
    assert.equal(s.queued().length, 1);
  });

  it('reset_page_token restarts from a fresh start token', async () => {
    const s = await setup();
    const { poller } = await started(s);
    s.google.put({ id: 'f', name: 'F.mkv', parents: ['movies'], md5Checksum: 'f' });
    await poller.resetPageToken();
    assert.equal(s.store.meta.get(tokenKey({ key: 'root' })), '2');
    await poller.pollOnce();
    assert.deepEqual(s.queued(), []);
  });

  it('GOOGLE.POLL_INTERVAL 3000000 (read as 2,147,483 s) polls once, not 600 times a second (issue 35, item 9)', async () => {
    const s = await setup();
    s.config.GOOGLE.POLL_INTERVAL = parseConfig({ GOOGLE: { POLL_INTERVAL: 3_000_000 } }).config.GOOGLE.POLL_INTERVAL;
    const { poller } = s.poller();
    poller.start();
    try {
      await waitFor(() => poller.status().lastPollAt !== undefined, 30_000, 'the first poll');
      // The next poll is planned 24.8 days ahead. Before the bound the timer overflowed to 1 ms, and the Drive
      // API was called some 300 times in the half second below.
      assert.ok(poller.status().nextPollAt! - Date.now() > 2_000_000_000);
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(s.google.driveCalls().map((c) => c.path), ['/drive/v3/changes/startPageToken']);
    } finally {
      await poller.stop();
    }
  });
});
