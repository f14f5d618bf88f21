import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { configSchema } from '../../../src/config/schema.ts';
import { DriveCache, FOLDER_MIME } from '../../../src/triggers/drive/cache.ts';
import { readPlexAutoscanCache } from '../../../src/peers/plex-autoscan/drive-cache.ts';
import { readPlexAutoscanQueue, requestsFromQueue } from '../../../src/peers/plex-autoscan/queue-db.ts';
import { ROOT, tempDir } from '../../helpers/relay.ts';

/**
 * plex_autoscan's state files, made by test/fixtures/plex-autoscan/make_fixtures.py with the real
 * sqlitedict and peewee (Debian python3-sqlitedict 2.1.0, python3-peewee 3.14) from spec.json, the
 * way google/cache.py:11-15 (SqliteDict per table, json.dumps/json.loads) and db.py:24-28
 * (QueueItemModel) write them. google/drive.py:104-105 names the tables drive_root / teamdrive_<id>
 * and settings; :450-466 and :479-482 keep `token` and `page_token`; :368-378 the item shape.
 */
const FIXTURES = join(ROOT, 'test', 'fixtures', 'plex-autoscan');

function copyFixtures(): string {
  const dir = tempDir('scanrelay-pa-');
  copyFileSync(join(FIXTURES, 'cache.db'), join(dir, 'cache.db'));
  copyFileSync(join(FIXTURES, 'queue.db'), join(dir, 'queue.db'));
  return dir;
}

const PYTHON = '/usr/bin/python3';
const hasPythonLibs = spawnSync(PYTHON, ['-c', 'import sqlitedict, peewee'], { stdio: 'ignore' }).status === 0;

describe("plex_autoscan's cache.db and queue.db", () => {
  it('reads the token, page tokens and id -> path cache of every drive table', () => {
    const dir = copyFixtures();
    const state = readPlexAutoscanCache(join(dir, 'cache.db'))!;
    assert.deepEqual(state.token, {
      access_token: 'ya29.plex-autoscan-access',
      token_type: 'Bearer',
      refresh_token: '1//plex-autoscan-refresh',
      expiry: '2020-09-13T12:26:40.250Z',
      scope: 'https://www.googleapis.com/auth/drive',
    });
    assert.deepEqual(
      state.drives.map((d) => [d.key, d.table, d.pageToken, d.items.length]),
      [
        ['root', 'drive_root', '1', 4],
        ['0A-team-media', 'teamdrive_0A-team-media', '1', 2],
      ],
    );
    const root = state.drives[0]!;
    assert.deepEqual(root.items.find((i) => i.id === 'old-film'), {
      id: 'old-film',
      name: 'Old Film.mkv',
      parents: ['movies'],
      md5: 'old-md5',
      mimeType: null,
      paths: ['My Drive/Media/Movies/Old Film.mkv'],
    });
    // plex_autoscan keeps no MIME type: an item that is some item's parent is a folder.
    assert.equal(root.items.find((i) => i.id === 'movies')?.mimeType, FOLDER_MIME);
  });

  it("tells a plex_autoscan cache from scanrelay's by table names, also when both share one file", () => {
    const dir = copyFixtures();
    const file = join(dir, 'cache.db');
    const ours = new DriveCache(file);
    ours.put({ id: 'x', name: 'X.mkv', parents: [], md5: 'x', mimeType: null, paths: ['X.mkv'] });
    ours.close();
    assert.equal(readPlexAutoscanCache(file)?.drives.length, 2, "plex_autoscan's tables are still read");
    const reopened = new DriveCache(file);
    assert.equal(reopened.count(), 1, "scanrelay's own table holds only its item");
    reopened.close();

    const onlyOurs = join(dir, 'scanrelay-cache.db');
    new DriveCache(onlyOurs).close();
    assert.equal(readPlexAutoscanCache(onlyOurs), undefined);
    assert.equal(readPlexAutoscanCache(join(dir, 'missing.db')), undefined);
    assert.equal(readPlexAutoscanQueue(onlyOurs), undefined);
  });

  it('queue rows become requests like a manual scan of an already mapped path; a bad row is skipped with its reason', () => {
    const dir = copyFixtures();
    const rows = readPlexAutoscanQueue(join(dir, 'queue.db'))!;
    assert.deepEqual(
      rows.map((r) => [r.id, r.scan_path, r.scan_for, r.scan_type]),
      [
        [1, '/data/TV/Show/Season 1/Show - S01E01.mkv', 'Sonarr', 'Download'],
        [2, '/data/Movies/Film (2020)', 'Radarr', 'Upgrade'],
        [3, '/data/Movies/Drive Film.mkv', 'Google Drive', 'Download'],
        [4, 'relative/not/a/path', 'Manual', 'Manual'],
      ],
    );
    // A mapping whose value is a prefix of its key would change an already mapped path a second time.
    const config = configSchema.parse({ SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/data/'] }, SERVER_SCAN_PRIORITIES: { '5': ['/TV/'] } });
    const { requests, skipped } = requestsFromQueue(rows, config, () => 'missing');
    assert.deepEqual(
      requests.map((r) => [r.folder, r.files, r.source, r.event, r.priority]),
      [
        ['/data/TV/Show/Season 1', ['/data/TV/Show/Season 1/Show - S01E01.mkv'], 'Sonarr', 'Download', 5],
        ['/data/Movies/Film (2020)', [], 'Radarr', 'Upgrade', 0],
        ['/data/Movies', ['/data/Movies/Drive Film.mkv'], 'Drive', 'Download', 0],
      ],
    );
    assert.equal(skipped.length, 1);
    assert.equal(skipped[0]!.path, 'relative/not/a/path');
    assert.match(skipped[0]!.reason, /absolute/);
  });

  it('the committed fixtures are what real sqlitedict and peewee write (regenerated from spec.json)', { skip: hasPythonLibs ? false : 'needs /usr/bin/python3 with python3-sqlitedict and python3-peewee' }, () => {
    const dir = tempDir('scanrelay-pa-gen-');
    execFileSync(PYTHON, [join(FIXTURES, 'make_fixtures.py'), join(FIXTURES, 'spec.json'), dir], { timeout: 60_000 });
    const fresh = readPlexAutoscanCache(join(dir, 'cache.db'))!;
    const committed = readPlexAutoscanCache(join(copyFixtures(), 'cache.db'))!;
    assert.deepEqual({ ...fresh, file: '' }, { ...committed, file: '' });
    assert.deepEqual(readPlexAutoscanQueue(join(dir, 'queue.db')), readPlexAutoscanQueue(join(FIXTURES, 'queue.db')));
  });
});
