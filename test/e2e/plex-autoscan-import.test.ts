import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { readTokenFile } from '../../src/google/token-file.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { tokenKey } from '../../src/triggers/drive/poller.ts';
import { FakeGoogle } from '../fakes/google.ts';
import { FakePlex } from '../fakes/plex.ts';
import { ROOT, runCli, spawnRelay, tempDir, waitFor, type RelayProcess } from '../helpers/relay.ts';

/**
 * Switching from plex_autoscan: its cache.db (sqlitedict tables settings / drive_root /
 * teamdrive_<id>, google/cache.py:11-15, google/drive.py:104-105) and queue.db (peewee
 * queueitemmodel, db.py:24-28) as real sqlitedict/peewee wrote them (test/fixtures/plex-autoscan).
 * plex_autoscan carries on from the saved page_token (google/drive.py:218-222) and restores its
 * queued rows at start (scan.py:91-105); scanrelay takes both over.
 */
const FIXTURES = join(ROOT, 'test', 'fixtures', 'plex-autoscan');
const covered = (paths: string[], folder: string) => paths.some((p) => folder === p || folder.startsWith(`${p}/`));

describe("taking over plex_autoscan's state", () => {
  const stops: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  async function fakes() {
    const google = await new FakeGoogle().start();
    const plex = await new FakePlex().start();
    stops.push(() => google.stop(), () => plex.stop());
    // The account plex_autoscan watched: the folders its cache knows, and its refresh token (issued for this client).
    google.refreshTokens.set('1//plex-autoscan-refresh', google.client.id);
    google.seed({ id: 'media', name: 'Media', parents: [google.rootId] });
    google.seed({ id: 'movies', name: 'Movies', parents: ['media'] });
    google.seed({ id: 'old-film', name: 'Old Film.mkv', parents: ['movies'], mimeType: 'video/x-matroska', md5Checksum: 'old-md5' });
    const team = google.addSharedDrive('Team Media', '0A-team-media');
    google.seed({ id: 'tfilms', name: 'Films', parents: [team], driveId: team });
    return { google, plex, team };
  }

  function writeConfig(dir: string, google: FakeGoogle, plex: FakePlex, driveOn: boolean): string {
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        SERVER_PORT: 0,
        SERVER_IP: '127.0.0.1',
        SERVER_PASS: 'test-secret',
        SERVER_FILE_CHECKS_ENABLED: false,
        SERVER_SCAN_DELAY: 1,
        PLEX_LOCAL_URL: plex.url,
        PLEX_TOKEN: plex.token,
        PLEX_DATABASE_PATH: join(dir, 'no-plex.db'),
        PLEX_ANALYZE_TYPE: 'off',
        SERVER_PATH_MAPPINGS: { '/data/': ['My Drive/Media/'], '/data/TV/': ['Team Media/'] },
        GOOGLE: {
          ENABLED: driveOn,
          ...google.configKeys(),
          POLL_INTERVAL: 0.5,
          TEAMDRIVE: true,
          TEAMDRIVES: ['Team Media'],
          ALLOWED: { FILE_PATHS: ['My Drive/Media/', 'Team Media/'], FILE_EXTENSIONS: true, FILE_EXTENSIONS_LIST: ['mkv'] },
        },
      }),
    );
    return file;
  }

  test('first start: the token, page tokens and cache are taken over, so changes made during the switch are scanned', async () => {
    const { google, plex, team } = await fakes();
    const dir = tempDir('scanrelay-pa-first-');
    writeConfig(dir, google, plex, true);
    // Same default file name in both programs: cache.db next to the config.
    copyFileSync(join(FIXTURES, 'cache.db'), join(dir, 'cache.db'));
    // Made after plex_autoscan stopped, before scanrelay starts (both fixture page tokens are "1").
    google.seed({ id: 'newfilm', name: 'New Film (2021)', parents: ['movies'] });
    google.put({ id: 'new', name: 'New Film (2021).mkv', parents: ['newfilm'], md5Checksum: 'n' });
    google.put({ id: 'old-film', name: 'Old Film.mkv', parents: ['movies'], md5Checksum: 'old-md5' });
    google.put({ id: 't1', name: 'T (2021).mkv', parents: ['tfilms'], md5Checksum: 't', driveId: team });

    const relay: RelayProcess = await spawnRelay({ configPath: join(dir, 'config.json'), dir });
    stops.push(() => relay.kill());
    const took = await relay.waitForLog((e) => /took over plex_autoscan's drive state/.test(e.msg ?? ''));
    assert.match(took.msg, /the OAuth token/);
    assert.match(took.msg, /page token of My Drive \(1\)/);
    assert.match(took.msg, /page token of shared drive 0A-team-media \(1\)/);
    assert.match(took.msg, /6 cached drive item\(s\)/);

    await waitFor(() => plex.refreshes().length >= 2, 20_000, 'two Plex refreshes');
    const paths = plex.refreshes().map((r) => r.path);
    assert.ok(covered(paths, '/data/Movies/New Film (2021)'), `My Drive change made during the switch: ${paths}`);
    assert.ok(covered(paths, '/data/TV/Films'), `shared drive change made during the switch: ${paths}`);
    assert.ok(!paths.includes('/data/Movies'), 'the unchanged cached file (same md5, name, path) is not scanned');
    assert.equal(google.driveCalls().filter((c) => c.path === '/drive/v3/changes/startPageToken').length, 0, 'no fresh start token: carried on');

    const tokenfile = join(dir, 'token.json');
    assert.equal(statSync(tokenfile).mode & 0o777, 0o600);
    assert.equal(readTokenFile(tokenfile)?.refresh_token, '1//plex-autoscan-refresh');
    assert.equal(google.calls.filter((c) => c.path === '/token' && c.form.refresh_token === '1//plex-autoscan-refresh').length, 1, "plex_autoscan's expired token was refreshed");

    // A restart does not take the state over again.
    await relay.kill();
    const again = await spawnRelay({ configPath: join(dir, 'config.json'), dir });
    stops.push(() => again.kill());
    const before = plex.refreshes().length;
    google.put({ id: 'later', name: 'Later (2022).mkv', parents: ['movies'], md5Checksum: 'l' });
    await waitFor(() => plex.refreshes().length > before, 20_000, 'a refresh after the restart');
    assert.ok(!again.events().some((e) => /took over/.test(e.msg ?? '')));
  });

  test("scanrelay import-plex-autoscan takes the drive state and queue.db's pending rows once", async () => {
    const { google, plex } = await fakes();
    const dir = tempDir('scanrelay-pa-cli-');
    const config = writeConfig(dir, google, plex, false);
    const args = ['--config', config, 'import-plex-autoscan', '--from-cache', join(FIXTURES, 'cache.db'), '--from-queue', join(FIXTURES, 'queue.db')];
    const res = await runCli(args);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    assert.match(res.stdout, /took over plex_autoscan's drive state from .*cache\.db: the OAuth token/);
    assert.match(res.stdout, /took over plex_autoscan's queue .*queue\.db: 4 pending scan\(s\), 3 queued; skipped: relative\/not\/a\/path \(.*absolute/);

    const store = new QueueStore(join(dir, 'queue.db'));
    const open = () => store.view.listOpen().map((e) => [e.folder, e.source, e.event]);
    const queued = open();
    // Queued as requests are: a folder scan may absorb a pending scan below it, so check coverage.
    for (const folder of ['/data/TV/Show/Season 1', '/data/Movies/Film (2020)', '/data/Movies']) {
      assert.ok(covered(queued.map((q) => q[0]!), folder), `${folder} in ${JSON.stringify(queued)}`);
    }
    assert.deepEqual(queued.find((q) => q[0] === '/data/TV/Show/Season 1'), ['/data/TV/Show/Season 1', 'Sonarr', 'Download']);
    assert.equal(store.meta.get(tokenKey({ key: 'root' })), '1');
    assert.equal(store.meta.get(tokenKey({ key: '0A-team-media' })), '1');
    assert.ok(existsSync(join(dir, 'token.json')));

    const second = await runCli(args);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /already taken over/);
    assert.match(second.stdout, /left alone: the OAuth token/);
    assert.deepEqual(open(), queued, 'nothing queued twice');
    store.close();

    // Files that are there but hold none of plex_autoscan's tables.
    const empty = new Database(join(dir, 'nothing.db'));
    empty.exec('CREATE TABLE t (x)');
    empty.close();
    const none = await runCli(['--config', config, 'import-plex-autoscan', '--from-cache', join(dir, 'nothing.db'), '--from-queue', join(dir, 'nothing.db')]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no plex_autoscan state found/);
    // A file that is not there is named as missing (issue 35 item 5).
    const missing = await runCli(['--config', config, 'import-plex-autoscan', '--from-queue', join(dir, 'nope.db')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--from-queue .*nope\.db: the file does not exist/);
  });

  test("server start: plex_autoscan's pending rows in the same queue.db are delivered", async () => {
    const { google, plex } = await fakes();
    const dir = tempDir('scanrelay-pa-queue-');
    writeConfig(dir, google, plex, false);
    copyFileSync(join(FIXTURES, 'queue.db'), join(dir, 'queue.db'));
    const relay = await spawnRelay({ configPath: join(dir, 'config.json'), dir });
    stops.push(() => relay.kill());
    await relay.waitForLog((e) => /took over plex_autoscan's queue .*3 queued/.test(e.msg ?? ''));
    await waitFor(() => ['/data/TV/Show/Season 1', '/data/Movies/Film (2020)', '/data/Movies'].every((f) => covered(plex.refreshes().map((r) => r.path), f)), 20_000, 'the three rows delivered');
  });
});
