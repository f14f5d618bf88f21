import assert from 'node:assert/strict';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { writeTokenFile } from '../../src/google/token-file.ts';
import { FakeGoogle } from '../fakes/google.ts';
import { FakePlex } from '../fakes/plex.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { ROOT, runCli, spawnRelay, tempDir, waitFor, type RelayProcess } from '../helpers/relay.ts';

// Two relay processes with GOOGLE.ENABLED and one SERVER_QUEUE_URL (issue 34): one polls the drive, the other
// stands by and takes over from the shared page token and cache when the first is killed with kill -9.

let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

/** A relay in `dir` on the shared queue `url`, watching My Drive/Media of the fake Drive every 0.5 s. */
function sharedDriveRelay(google: FakeGoogle, plex: FakePlex, url: string, id: string, dir: string, extra: Record<string, unknown> = {}) {
  return spawnRelay({
    dir,
    args: ['--tokenfile', join(dir, 'token.json'), '--cachefile', join(dir, 'cache.db')],
    config: {
      PLEX_LOCAL_URL: plex.url,
      PLEX_TOKEN: plex.token,
      PLEX_DATABASE_PATH: join(dir, 'no-plex.db'),
      PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false,
      SERVER_SCAN_DELAY: 1,
      SERVER_QUEUE_URL: url,
      SERVER_RELAY_ID: id,
      GOOGLE: {
        ENABLED: true,
        ...google.configKeys(),
        POLL_INTERVAL: 0.5,
        ALLOWED: { FILE_PATHS: ['My Drive/Media/'], FILE_EXTENSIONS: true, FILE_EXTENSIONS_LIST: ['mkv'], MIME_TYPES: true, MIME_TYPES_LIST: ['video'] },
      },
      ...extra,
    },
  });
}

describe('drive monitoring with two relays on one PostgreSQL queue', () => {
  test('only the lease holder calls the changes API; after its kill -9 the other takes over, recognises a rename from the shared cache, and no change is lost or scanned twice', async () => {
    const google = await new FakeGoogle().start();
    const plex = await new FakePlex().start();
    const url = await cluster.createDatabase();
    google.seed({ id: 'media', name: 'Media', parents: [google.rootId] });
    google.seed({ id: 'movies', name: 'Movies', parents: ['media'] });
    google.seed({ id: 'heat', name: 'Heat (1995)', parents: ['movies'] });
    google.seed({ id: 'ronin', name: 'Ronin (1998)', parents: ['movies'] });
    const relays: RelayProcess[] = [];
    /** A relay with its own folder and its own Google token: the fake records which relay made each call. */
    const start = async (id: string) => {
      const dir = tempDir(`scanrelay-${id}-`);
      const token = google.issueToken();
      writeTokenFile(join(dir, 'token.json'), token);
      const relay = await sharedDriveRelay(google, plex, url, id, dir, {
        SERVER_QUEUE_LEASE: 2,
        SERVER_ALLOW_MANUAL_SCAN: true,
        SERVER_PATH_MAPPINGS: { '/data/Movies/': ['My Drive/Media/Movies/'] },
      });
      relays.push(relay);
      return { relay, bearer: token.access_token };
    };
    const changeCalls = (bearer: string) => google.driveCalls().filter((c) => c.path === '/drive/v3/changes' && c.bearer === bearer).length;
    try {
      const a = await start('relay-a');
      await a.relay.waitForLog((e) => /this relay \(relay-a\) polls the drive now/.test(e.msg ?? ''), 20_000);
      await a.relay.waitForLog((e) => /stored the first page token/.test(e.msg ?? ''), 20_000);
      const b = await start('relay-b');
      await b.relay.waitForLog((e) => /relay relay-a polls the drive; this relay stands by/.test(e.msg ?? ''), 20_000);

      google.put({ id: 'heat-file', name: 'Heat (1995).mkv', parents: ['heat'], md5Checksum: 'h1' });
      await waitFor(() => plex.refreshes().some((r) => r.path === '/data/Movies/Heat (1995)'), 30_000, 'the new file scanned');
      // Several polls of relay-b's went by meanwhile (every 0.5 s): none reached Google.
      assert.ok(changeCalls(a.bearer) >= 1);
      assert.equal(changeCalls(b.bearer), 0, 'the relay on standby never calls the changes API');
      const page = await fetch(b.relay.url, { headers: { accept: 'text/html' } }).then((r) => r.text());
      assert.match(page, /data-drive="standby"/);
      assert.match(page, /standby: polled by relay relay-a/);
      const pageA = await fetch(a.relay.url, { headers: { accept: 'text/html' } }).then((r) => r.text());
      assert.match(pageA, /data-drive="polling"/);

      await a.relay.kill('SIGKILL');
      // Changed while nobody polls: a rename (same md5Checksum) of the file relay-a cached, and a new file.
      google.put({ id: 'heat-file', name: 'Heat (1995) Remastered.mkv', parents: ['heat'], md5Checksum: 'h1' });
      google.put({ id: 'ronin-file', name: 'Ronin (1998).mkv', parents: ['ronin'], md5Checksum: 'r1' });
      // Within the lease (2 s) and a poll interval (0.5 s) of the kill; bounded generously for a loaded machine.
      await b.relay.waitForLog((e) => /this relay \(relay-b\) polls the drive now \(taking over from relay relay-a\)/.test(e.msg ?? ''), 30_000);
      const counted = await b.relay.waitForLog((e) => e.component === 'drive' && /change\(s\)/.test(e.msg ?? '') && e.changes > 0, 30_000);
      assert.equal(counted.renamed, 1, 'the rename is recognised from what relay-a cached');
      assert.equal(counted.added, 2);
      await waitFor(() => plex.refreshes().some((r) => r.path === '/data/Movies/Ronin (1998)'), 30_000, 'the file added during the takeover scanned');
      await waitFor(() => plex.refreshes().filter((r) => r.path === '/data/Movies/Heat (1995)').length >= 2, 30_000, 'the renamed file scanned');
      // Nothing after the takeover was read twice: one more idle poll of relay-b, and each change made one scan.
      const calls = changeCalls(b.bearer);
      await waitFor(() => changeCalls(b.bearer) > calls + 1, 15_000, 'two more polls of relay-b');
      assert.deepEqual(
        plex.refreshes().map((r) => r.path).sort(),
        ['/data/Movies/Heat (1995)', '/data/Movies/Heat (1995)', '/data/Movies/Ronin (1998)'],
        'the new file, its rename and the other new file: each scanned once',
      );
      const firstB = google.driveCalls().find((c) => c.path === '/drive/v3/changes' && c.bearer === b.bearer)!;
      const lastA = google.driveCalls().filter((c) => c.path === '/drive/v3/changes' && c.bearer === a.bearer).at(-1)!;
      // relay-a's last (idle) poll read from token 2, the one after the first change; relay-b started there.
      assert.equal(lastA.query.pageToken, '2');
      assert.equal(firstB.query.pageToken, '2', "relay-b went on from relay-a's page token");
    } finally {
      for (const r of relays) await r.kill();
      await plex.stop();
      await google.stop();
    }
  });

  test('build_caches with SERVER_QUEUE_URL fills the shared cache in PostgreSQL, not a cache file', async () => {
    const google = await new FakeGoogle().start();
    const url = await cluster.createDatabase();
    const dir = tempDir('scanrelay-build-');
    try {
      writeTokenFile(join(dir, 'token.json'), google.issueToken());
      google.seed({ id: 'media', name: 'Media', parents: [google.rootId] });
      google.put({ id: 'old', name: 'Old.mkv', parents: ['media'], md5Checksum: 'o' });
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ SERVER_PASS: 'test-secret', SERVER_QUEUE_URL: url, GOOGLE: { ENABLED: true, ...google.configKeys() } }));
      const res = await runCli(['--config', join(dir, 'config.json'), '--tokenfile', join(dir, 'token.json'), '--cachefile', join(dir, 'cache.db'), 'build_caches']);
      assert.equal(res.code, 0, res.stderr + res.stdout);
      assert.match(res.stdout, /Finished building all caches: 3 item\(s\) in postgres:\/\/scanrelay@127\.0\.0\.1/);
      assert.equal(existsSync(join(dir, 'cache.db')), false, 'no cache file was made');
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      try {
        const { rows } = await db.query<{ paths: string[] }>(`SELECT paths FROM drive_items WHERE id = 'old'`);
        assert.deepEqual(rows, [{ paths: ['My Drive/Media/Old.mkv'] }]);
      } finally {
        await db.end();
      }
    } finally {
      await google.stop();
    }
  });

  // The fixture is the cache.db plex_autoscan's sqlitedict wrote (google/cache.py:11-15, google/drive.py:104-105),
  // as in plex-autoscan-import.test.ts; with a shared queue its items go into the shared cache.
  test("the first start on a shared queue takes plex_autoscan's cache.db over into the shared cache", async () => {
    const google = await new FakeGoogle().start();
    const plex = await new FakePlex().start();
    const url = await cluster.createDatabase();
    const dir = tempDir('scanrelay-pa-shared-');
    google.refreshTokens.set('1//plex-autoscan-refresh', google.client.id);
    google.seed({ id: 'media', name: 'Media', parents: [google.rootId] });
    google.seed({ id: 'movies', name: 'Movies', parents: ['media'] });
    google.seed({ id: 'old-film', name: 'Old Film.mkv', parents: ['movies'], mimeType: 'video/x-matroska', md5Checksum: 'old-md5' });
    copyFileSync(join(ROOT, 'test', 'fixtures', 'plex-autoscan', 'cache.db'), join(dir, 'cache.db'));
    google.seed({ id: 'newfilm', name: 'New Film (2021)', parents: ['movies'] });
    google.put({ id: 'new', name: 'New Film (2021).mkv', parents: ['newfilm'], md5Checksum: 'n' });
    google.put({ id: 'old-film', name: 'Old Film.mkv', parents: ['movies'], md5Checksum: 'old-md5' });
    const relay = await sharedDriveRelay(google, plex, url, 'relay-a', dir, { SERVER_PATH_MAPPINGS: { '/data/': ['My Drive/Media/'] } });
    try {
      const took = await relay.waitForLog((e) => /took over plex_autoscan's drive state/.test(e.msg ?? ''), 20_000);
      assert.match(took.msg, /page token of My Drive \(1\)/);
      assert.match(took.msg, /\d+ cached drive item\(s\)/);
      await waitFor(() => plex.refreshes().some((r) => r.path === '/data/Movies/New Film (2021)'), 20_000, 'the change made during the switch scanned');
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      try {
        const { rows } = await db.query<{ paths: string[] }>(`SELECT paths FROM drive_items WHERE id = 'old-film'`);
        assert.deepEqual(rows, [{ paths: ['My Drive/Media/Movies/Old Film.mkv'] }], "plex_autoscan's item is in the shared cache");
      } finally {
        await db.end();
      }
      assert.ok(!plex.refreshes().some((r) => r.path === '/data/Movies'), 'the unchanged cached file is recognised from the shared cache, not scanned');
    } finally {
      await relay.kill();
      await plex.stop();
      await google.stop();
    }
  });
});
