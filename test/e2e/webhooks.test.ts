import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakePlex } from '../fakes/plex.ts';
import { postJson, ROOT, spawnRelay, tempDir, waitFor, type RelayProcess } from '../helpers/relay.ts';

const fixture = (name: string): unknown => JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'arr', `${name}.json`), 'utf8'));

const SECTIONS = [
  { id: '1', title: 'Movies', type: 'movie' as const, locations: ['/data/Movies'] },
  { id: '2', title: 'TV', type: 'show' as const, locations: ['/data/TV'] },
  { id: '3', title: 'Music', type: 'artist' as const, locations: ['/data/Music'] },
  { id: '4', title: 'Audiobooks', type: 'artist' as const, locations: ['/data/Books'] },
];

describe('media-manager webhooks, end to end: the exact folders that reach Plex', () => {
  let plex: FakePlex;
  let relay: RelayProcess;

  before(async () => {
    plex = await new FakePlex({ sections: SECTIONS }).start();
    const dir = tempDir();
    // What scanrelay sees of the media (SERVER_FILE_EXIST_PATH_MAPPINGS): the library roots exist,
    // the deleted items do not.
    for (const sub of ['TV', 'Movies', 'Music', 'Books']) mkdirSync(join(dir, 'media', sub), { recursive: true });
    relay = await spawnRelay({
      dir,
      config: {
        PLEX_LOCAL_URL: plex.url,
        PLEX_TOKEN: plex.token,
        SERVER_SCAN_DELAY: 1,
        SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'], '/data/Movies/': ['/movies/'], '/data/Music/': ['/music/'], '/data/Books/': ['/books/'] },
        SERVER_FILE_EXIST_PATH_MAPPINGS: { [join(dir, 'media') + '/']: ['/data/'] },
      },
    });
  });
  after(async () => {
    await relay?.kill();
    await plex?.stop();
  });

  const queueCount = async () => (await postJson(`${relay.base}/api/${relay.secret}`, { cmd: 'queue_count' })).body.queue_count as number;

  /** Posts the fixtures, waits until the queue has drained, and returns the folders Plex was asked to scan. */
  async function scannedFor(...names: string[]): Promise<Array<[string, string]>> {
    const mark = plex.refreshes().length;
    for (const name of names) {
      const res = await postJson(relay.url, fixture(name));
      assert.equal(res.status, 200, `${name}: ${res.text}`);
    }
    await waitFor(async () => (await queueCount()) === 0 && plex.refreshes().length > mark, 20_000, `scans for ${names.join(', ')}`);
    return plex.refreshes().slice(mark).map((r) => [r.section, r.path] as [string, string]).sort();
  }

  test('Sonarr v4 multi-file import: one scan per season folder, nothing broader', async () => {
    assert.deepEqual(await scannedFor('sonarr/download-v4-multi'), [
      ['2', '/data/TV/Westworld/Season 01'],
      ['2', '/data/TV/Westworld/Season 02'],
    ]);
  });

  test('Sonarr v3 import, trimmed payloads, and paths with quotes and unicode', async () => {
    assert.deepEqual(await scannedFor('sonarr/download', 'sonarr/download-quotes', 'sonarr/download-unicode', 'radarr/download-unicode', 'sonarr/download-trimmed'), [
      ['1', "/data/Movies/Le Fabuleux Destin d'Amélie Poulain (2001)"],
      ['2', '/data/TV/Pokémon (1997)/Season 01'],
      ['2', "/data/TV/Schitt's Creek/Season 01"],
      ['2', '/data/TV/Westworld/Season 01'],
      ['2', '/data/TV/Westworld/Season 1'],
    ]);
  });

  test('Lidarr album on two discs: both disc folders; Readarr: the book folder', async () => {
    assert.deepEqual(await scannedFor('lidarr/download', 'readarr/download'), [
      ['3', '/data/Music/blink-182/California (2016)/CD 01'],
      ['3', '/data/Music/blink-182/California (2016)/CD 02'],
      ['4', '/data/Books/Brandon Sanderson/The Way of Kings (2010)'],
    ]);
  });

  test('a rename inside the movie folder scans the movie folder', async () => {
    assert.deepEqual(await scannedFor('radarr/rename'), [['1', '/data/Movies/Deadpool (2016)']]);
  });

  test('a series-folder rename reaches the old folder too: the new folder is scanned as itself, then its existing parent for the removed one', async () => {
    // The root scan for the old folder is kept apart (it stands for no new folder), and goes after the new one.
    assert.deepEqual(await scannedFor('sonarr/rename-series-folder'), [['2', '/data/TV'], ['2', '/data/TV/Breaking Bad (2008)']]);
  });

  test("file deletes scan the file's folder; whole-item deletes the nearest folder that still exists", async () => {
    assert.deepEqual(await scannedFor('radarr/movie-file-delete', 'lidarr/track-file-delete', 'readarr/book-file-delete'), [
      ['1', '/data/Movies/Tenet (2020)'],
      ['3', '/data/Music/blink-182/California (2016)/CD 02'],
      ['4', '/data/Books/Brandon Sanderson/The Way of Kings (2010)'],
    ]);
    assert.deepEqual(await scannedFor('sonarr/series-delete', 'radarr/movie-delete', 'lidarr/artist-delete', 'readarr/author-delete'), [
      ['1', '/data/Movies'],
      ['2', '/data/TV'],
      ['3', '/data/Music'],
      ['4', '/data/Books'],
    ]);
  });

  test('Test and events with nothing to scan queue nothing and are logged with their source', async () => {
    const test = await postJson(relay.url, fixture('radarr/test'));
    assert.deepEqual(test.body, { status: 'ok', event: 'Test' });
    const grab = await postJson(relay.url, fixture('sonarr/grab'));
    assert.deepEqual(grab.body, { status: 'ignored', reason: 'Sonarr event Grab has nothing to scan' });
    assert.equal(await queueCount(), 0);
    await relay.waitForLog((e) => e.msg === 'test request received' && e.source === 'Radarr');
    await relay.waitForLog((e) => e.msg === 'nothing to scan for this event' && e.source === 'Sonarr' && e.event === 'Grab');
  });

  test('each scan request is logged with source, event, title, ids and mapped folders', async () => {
    await scannedFor('radarr/download');
    const line = await relay.waitForLog((e) => e.msg === 'scan request' && e.title === 'Interstellar');
    assert.equal(line.source, 'Radarr');
    assert.equal(line.event, 'Download');
    assert.deepEqual(line.ids, { tmdbId: 157336, imdbId: 'tt0816692' });
    assert.deepEqual(line.folders, ['/data/Movies/Interstellar (2014)']);
  });
});
