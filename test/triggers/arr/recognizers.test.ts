// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DEFAULT_RECOGNIZERS } from '../../../src/server/run.ts';
import { PayloadError, type Intent } from '../../../src/intake/intent.ts';
import { ROOT } from '../../helpers/relay.ts';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'arr');
const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'));

/** What POST /<secret> does with a body: the first recognizer that claims it. */
function recognize(body: Record<string, unknown>): Intent | undefined {
  for (const r of DEFAULT_RECOGNIZERS) {
    const intent = r(body);
    if (intent) return intent;
  }
  return undefined;
}

const WESTWORLD_IDS = { tvdbId: 296762, tmdbId: 63247, imdbId: 'tt0475784', tvMazeId: 1371 };
const file = (path: string) => ({ path, kind: 'file' as const });
const folder = (path: string) => ({ path, kind: 'folder' as const });
const gone = (path: string) => ({ path, kind: 'gone' as const });
const ignored = (source: string, event: string, reason: RegExp | string) => ({ source, event, reason });

type Expected = Intent | ReturnType<typeof ignored>;

const CASES: Array<[string, Expected]> = [
  // Sonarr
  ['sonarr/test', { kind: 'test', source: 'Sonarr' }],
  ['sonarr/download', { kind: 'scan', source: 'Sonarr', event: 'Download', title: 'Westworld', ids: WESTWORLD_IDS, updateType: 'Created',
    paths: [file('/tv/Westworld/Season 01/Westworld - S01E01 - The Original WEBDL-1080p.mkv')] }],
  ['sonarr/download-upgrade', { kind: 'scan', source: 'Sonarr', event: 'Upgrade', title: 'Westworld', ids: WESTWORLD_IDS, updateType: 'Modified',
    paths: [file('/tv/Westworld/Season 01/Westworld - S01E01 - The Original Bluray-2160p.mkv')] }],
  ['sonarr/download-v4-multi', { kind: 'scan', source: 'Sonarr', event: 'Download', title: 'Westworld', ids: WESTWORLD_IDS, updateType: 'Created',
    paths: [
      file('/tv/Westworld/Season 01/Westworld - S01E01 - The Original WEBDL-1080p.mkv'),
      file('/tv/Westworld/Season 01/Westworld - S01E02 - Chestnut WEBDL-1080p.mkv'),
      file('/tv/Westworld/Season 02/Westworld - S02E01 - Journey into Night WEBDL-1080p.mkv'),
    ] }],
  ['sonarr/download-trimmed', { kind: 'scan', source: 'Sonarr', event: 'Download', updateType: 'Created', paths: [file('/tv/Westworld/Season 1/Westworld.S01E01.mkv')] }],
  ['sonarr/download-trimmed-v4', { kind: 'scan', source: 'Sonarr', event: 'Download', updateType: 'Created',
    paths: [file('/tv/Westworld/Season 02/Westworld.S02E03.mkv'), file('/tv/Westworld/Season 02/Westworld.S02E04.mkv')] }],
  ['sonarr/download-unicode', { kind: 'scan', source: 'Sonarr', event: 'Download', title: 'Pokémon', ids: { tvdbId: 76703 }, updateType: 'Created',
    paths: [file('/tv/Pokémon (1997)/Season 01/Pokémon – S01E01 – Ash’s “First” Day ポケモン.mkv')] }],
  ['sonarr/download-quotes', { kind: 'scan', source: 'Sonarr', event: 'Download', title: "Schitt's Creek", ids: { tvdbId: 289574, imdbId: 'tt3526078' }, updateType: 'Created',
    paths: [file(`/tv/Schitt's Creek/Season 01/Schitt's Creek - S01E01 - Our Cup Runneth Over "Pilot" [HDTV-720p].mkv`)] }],
  // The series folder stands for Season 01 and the old Season 1 inside it.
  ['sonarr/rename', { kind: 'scan', source: 'Sonarr', event: 'Rename', title: 'Westworld', ids: { tvdbId: 296762 }, updateType: 'Modified',
    paths: [folder('/tv/Westworld')] }],
  // The old series folder is gone: its parent is scanned too, so Plex drops the old items.
  ['sonarr/rename-series-folder', { kind: 'scan', source: 'Sonarr', event: 'Rename', title: 'Breaking Bad', ids: { tvdbId: 81189, imdbId: 'tt0903747' }, updateType: 'Modified',
    paths: [folder('/tv/Breaking Bad (2008)'), gone('/tv/Breaking.Bad')] }],
  ['sonarr/rename-trimmed', { kind: 'scan', source: 'Sonarr', event: 'Rename', updateType: 'Modified', paths: [folder('/tv/Westworld')] }],
  ['sonarr/rename-no-files', { kind: 'scan', source: 'Sonarr', event: 'Rename', title: 'Westworld', ids: { tvdbId: 296762 }, updateType: 'Modified', paths: [folder('/tv/Westworld')] }],
  ['sonarr/episode-file-delete', { kind: 'scan', source: 'Sonarr', event: 'EpisodeFileDelete', title: 'Westworld', ids: WESTWORLD_IDS, updateType: 'Deleted',
    paths: [file('/tv/Westworld/Season 01/Westworld - S01E01 - The Original WEBDL-1080p.mkv')] }],
  ['sonarr/episode-file-delete-trimmed', { kind: 'scan', source: 'Sonarr', event: 'EpisodeFileDelete', updateType: 'Deleted', paths: [file('/tv/Westworld/Season 01/Westworld.S01E01.mkv')] }],
  ['sonarr/series-delete', { kind: 'scan', source: 'Sonarr', event: 'SeriesDelete', title: 'Westworld', ids: WESTWORLD_IDS, updateType: 'Deleted', paths: [gone('/tv/Westworld')] }],
  ['sonarr/series-delete-files-kept', ignored('Sonarr', 'SeriesDelete', /kept on disk/)],
  ['sonarr/grab', ignored('Sonarr', 'Grab', 'Sonarr event Grab has nothing to scan')],
  ['sonarr/series-add', ignored('Sonarr', 'SeriesAdd', 'Sonarr event SeriesAdd has nothing to scan')],
  ['sonarr/manual-interaction-required', ignored('Sonarr', 'ManualInteractionRequired', 'Sonarr event ManualInteractionRequired has nothing to scan')],
  ['sonarr/health', ignored('Sonarr', 'Health', 'Health events have nothing to scan')],
  ['sonarr/health-restored', ignored('Sonarr', 'HealthRestored', 'HealthRestored events have nothing to scan')],
  ['sonarr/application-update', ignored('Sonarr', 'ApplicationUpdate', 'ApplicationUpdate events have nothing to scan')],
  // Radarr
  ['radarr/test', { kind: 'test', source: 'Radarr' }],
  ['radarr/download', { kind: 'scan', source: 'Radarr', event: 'Download', title: 'Interstellar', ids: { tmdbId: 157336, imdbId: 'tt0816692' }, updateType: 'Created',
    paths: [file('/movies/Interstellar (2014)/Interstellar (2014) Remux-2160p.mkv')] }],
  ['radarr/download-upgrade', { kind: 'scan', source: 'Radarr', event: 'Upgrade', title: 'Interstellar', ids: { tmdbId: 157336, imdbId: 'tt0816692' }, updateType: 'Modified',
    paths: [file('/movies/Interstellar (2014)/Interstellar (2014) Remux-2160p Proper.mkv')] }],
  ['radarr/download-trimmed', { kind: 'scan', source: 'Radarr', event: 'Download', updateType: 'Created', paths: [file('/movies/Interstellar (2014)/Interstellar (2014).mkv')] }],
  ['radarr/download-trimmed-folder', { kind: 'scan', source: 'Radarr', event: 'Download', updateType: 'Created', paths: [folder('/movies/Amélie (2001)')] }],
  ['radarr/download-unicode', { kind: 'scan', source: 'Radarr', event: 'Download', title: "Le Fabuleux Destin d'Amélie Poulain", ids: { tmdbId: 194, imdbId: 'tt0211915' }, updateType: 'Created',
    paths: [file("/movies/Le Fabuleux Destin d'Amélie Poulain (2001)/Le Fabuleux Destin d'Amélie Poulain (2001) “Amélie” Bluray-1080p.mkv")] }],
  ['radarr/rename', { kind: 'scan', source: 'Radarr', event: 'Rename', title: 'Deadpool', ids: { tmdbId: 293660, imdbId: 'tt1431045' }, updateType: 'Modified',
    paths: [folder('/movies/Deadpool (2016)')] }],
  ['radarr/rename-movie-folder', { kind: 'scan', source: 'Radarr', event: 'Rename', title: 'Deadpool', ids: { tmdbId: 293660, imdbId: 'tt1431045' }, updateType: 'Modified',
    paths: [folder('/movies/Deadpool (2016) {tmdb-293660}'), gone('/movies/Deadpool (2016)')] }],
  ['radarr/movie-file-delete', { kind: 'scan', source: 'Radarr', event: 'MovieFileDelete', title: 'Tenet', ids: { tmdbId: 577922, imdbId: 'tt6723592' }, updateType: 'Deleted',
    paths: [file('/movies/Tenet (2020)/Tenet.2020.mkv')] }],
  ['radarr/movie-delete', { kind: 'scan', source: 'Radarr', event: 'MovieDelete', title: 'Wonder Woman 1984', ids: { tmdbId: 464052, imdbId: 'tt7126948' }, updateType: 'Deleted',
    paths: [gone('/movies/Wonder Woman 1984 (2020)')] }],
  ['radarr/movie-delete-trimmed', { kind: 'scan', source: 'Radarr', event: 'MovieDelete', updateType: 'Deleted', paths: [gone('/movies/Wonder Woman 1984 (2020)')] }],
  ['radarr/grab', ignored('Radarr', 'Grab', 'Radarr event Grab has nothing to scan')],
  ['radarr/movie-added', ignored('Radarr', 'MovieAdded', 'Radarr event MovieAdded has nothing to scan')],
  ['radarr/manual-interaction-required', ignored('Radarr', 'ManualInteractionRequired', 'Radarr event ManualInteractionRequired has nothing to scan')],
  ['radarr/health', ignored('Radarr', 'Health', 'Health events have nothing to scan')],
  ['radarr/application-update', ignored('Radarr', 'ApplicationUpdate', 'ApplicationUpdate events have nothing to scan')],
  // Lidarr
  ['lidarr/test', { kind: 'test', source: 'Lidarr' }],
  ['lidarr/download', { kind: 'scan', source: 'Lidarr', event: 'Download', title: 'blink-182 - California',
    ids: { artistMbId: '0743b15a-3c32-48c8-ad58-cb325350befa', albumMbId: 'a1b2c3d4-0000-4000-8000-0000000000aa' }, updateType: 'Created',
    paths: [
      file('/music/blink-182/California (2016)/CD 01/01 - Cynical.mp3'),
      file('/music/blink-182/California (2016)/CD 01/02 - Bored to Death.mp3'),
      file('/music/blink-182/California (2016)/CD 02/01 - Parking Lot.mp3'),
    ] }],
  ['lidarr/download-unicode', { kind: 'scan', source: 'Lidarr', event: 'Download', title: 'blink-182 - California',
    ids: { artistMbId: '0743b15a-3c32-48c8-ad58-cb325350befa', albumMbId: 'a1b2c3d4-0000-4000-8000-0000000000aa' }, updateType: 'Created',
    paths: [file('/music/blink‐182/California (2016)/01 - Cynical.mp3'), file('/music/blink‐182/California (2016)/02 - Bored to Death.mp3')] }],
  ['lidarr/download-trimmed', { kind: 'scan', source: 'Lidarr', event: 'Download', updateType: 'Created',
    paths: [file('/music/Sigur Rós/Ágætis byrjun (1999)/01 - Intro.flac'), file('/music/Sigur Rós/Ágætis byrjun (1999)/02 - Svefn-g-englar.flac')] }],
  ['lidarr/rename', { kind: 'scan', source: 'Lidarr', event: 'Rename', title: 'blink-182', ids: { artistMbId: '0743b15a-3c32-48c8-ad58-cb325350befa' }, updateType: 'Modified',
    paths: [folder('/music/blink-182')] }],
  ['lidarr/retag', { kind: 'scan', source: 'Lidarr', event: 'Retag', title: 'blink-182', ids: { artistMbId: '0743b15a-3c32-48c8-ad58-cb325350befa' }, updateType: 'Modified',
    paths: [file('/music/blink-182/California (2016)/CD 01/01 - Cynical.mp3')] }],
  ['lidarr/track-file-delete', { kind: 'scan', source: 'Lidarr', event: 'TrackFileDelete', title: 'blink-182 - California',
    ids: { artistMbId: '0743b15a-3c32-48c8-ad58-cb325350befa', albumMbId: 'a1b2c3d4-0000-4000-8000-0000000000aa' }, updateType: 'Deleted',
    paths: [file('/music/blink-182/California (2016)/CD 02/01 - Parking Lot.mp3')] }],
  ['lidarr/artist-delete', { kind: 'scan', source: 'Lidarr', event: 'ArtistDelete', title: 'blink-182', ids: { artistMbId: '0743b15a-3c32-48c8-ad58-cb325350befa' }, updateType: 'Deleted',
    paths: [gone('/music/blink-182')] }],
  ['lidarr/album-delete', { kind: 'scan', source: 'Lidarr', event: 'AlbumDelete', title: 'blink-182 - California',
    ids: { artistMbId: '0743b15a-3c32-48c8-ad58-cb325350befa', albumMbId: 'a1b2c3d4-0000-4000-8000-0000000000aa' }, updateType: 'Deleted',
    paths: [folder('/music/blink-182')] }],
  ['lidarr/album-delete-files-kept', ignored('Lidarr', 'AlbumDelete', /kept on disk/)],
  ['lidarr/grab', ignored('Lidarr', 'Grab', 'Lidarr event Grab has nothing to scan')],
  // plex_autoscan scans artist+trackFiles whatever the event (scan.py:452-463); this one lists none.
  ['lidarr/import-failure', ignored('Lidarr', 'ImportFailure', 'trackFiles is empty: no track to scan')],
  ['lidarr/artist-add', ignored('Lidarr', 'ArtistAdd', 'Lidarr event ArtistAdd has nothing to scan')],
  ['lidarr/download-failure', ignored('Lidarr', 'DownloadFailure', 'DownloadFailure events have nothing to scan')],
  ['lidarr/health', ignored('Lidarr', 'Health', 'Health events have nothing to scan')],
  ['lidarr/application-update', ignored('Lidarr', 'ApplicationUpdate', 'ApplicationUpdate events have nothing to scan')],
  // Readarr
  ['readarr/test', { kind: 'test', source: 'Readarr' }],
  ['readarr/download', { kind: 'scan', source: 'Readarr', event: 'Download', title: 'Brandon Sanderson - The Way of Kings',
    ids: { authorGoodreadsId: '38550', bookGoodreadsId: '7235533' }, updateType: 'Created',
    paths: [file('/books/Brandon Sanderson/The Way of Kings (2010)/The Way of Kings - Brandon Sanderson.epub')] }],
  ['readarr/download-unicode', { kind: 'scan', source: 'Readarr', event: 'Download', title: 'Gabriel García Márquez - Cien años de soledad',
    ids: { authorGoodreadsId: '13450', bookGoodreadsId: '320' }, updateType: 'Created',
    paths: [
      file('/books/Gabriel García Márquez/Cien años de soledad (1967)/Cien años de soledad - Gabriel García Márquez.epub'),
      file('/books/Gabriel García Márquez/Cien años de soledad (1967)/Cien años de soledad - Gabriel García Márquez.azw3'),
    ] }],
  ['readarr/download-trimmed', { kind: 'scan', source: 'Readarr', event: 'Download', updateType: 'Created',
    paths: [file('/books/Brandon Sanderson/Mistborn (2006)/Mistborn - Brandon Sanderson.epub')] }],
  ['readarr/rename', { kind: 'scan', source: 'Readarr', event: 'Rename', title: 'Brandon Sanderson', ids: { authorGoodreadsId: '38550' }, updateType: 'Modified',
    paths: [folder('/books/Brandon Sanderson')] }],
  ['readarr/retag', { kind: 'scan', source: 'Readarr', event: 'Retag', title: 'Brandon Sanderson - The Way of Kings', ids: { authorGoodreadsId: '38550', bookGoodreadsId: '7235533' },
    updateType: 'Modified', paths: [file('/books/Brandon Sanderson/The Way of Kings (2010)/The Way of Kings - Brandon Sanderson.epub')] }],
  ['readarr/book-file-delete', { kind: 'scan', source: 'Readarr', event: 'BookFileDelete', title: 'Brandon Sanderson - The Way of Kings',
    ids: { authorGoodreadsId: '38550', bookGoodreadsId: '7235533' }, updateType: 'Deleted',
    paths: [file('/books/Brandon Sanderson/The Way of Kings (2010)/The Way of Kings - Brandon Sanderson.epub')] }],
  ['readarr/author-delete', { kind: 'scan', source: 'Readarr', event: 'AuthorDelete', title: 'Brandon Sanderson', ids: { authorGoodreadsId: '38550' }, updateType: 'Deleted',
    paths: [gone('/books/Brandon Sanderson')] }],
  ['readarr/book-delete', { kind: 'scan', source: 'Readarr', event: 'BookDelete', title: 'Brandon Sanderson - The Way of Kings',
    ids: { authorGoodreadsId: '38550', bookGoodreadsId: '7235533' }, updateType: 'Deleted', paths: [folder('/books/Brandon Sanderson')] }],
  ['readarr/grab', ignored('Readarr', 'Grab', 'Readarr event Grab has nothing to scan')],
  ['readarr/author-added', ignored('Readarr', 'AuthorAdded', 'Readarr event AuthorAdded has nothing to scan')],
  ['readarr/health', ignored('Readarr', 'Health', 'Health events have nothing to scan')],
  ['readarr/application-update', ignored('Readarr', 'ApplicationUpdate', 'ApplicationUpdate events have nothing to scan')],
];

describe('media-manager webhooks: fixture -> intent', () => {
  for (const [name, expected] of CASES) {
    test(name, () => {
      const intent = recognize(fixture(name));
      if ('reason' in expected && !('kind' in expected)) {
        assert.equal(intent?.kind, 'ignore', JSON.stringify(intent));
        if (intent?.kind !== 'ignore') return;
        assert.equal(intent.source, expected.source);
        assert.equal(intent.event, expected.event);
        if (expected.reason instanceof RegExp) assert.match(intent.reason, expected.reason);
        else assert.equal(intent.reason, expected.reason);
        return;
      }
      assert.deepEqual(intent, expected);
    });
  }

  test('every fixture file is covered by a case', async () => {
    const { readdirSync } = await import('node:fs');
    const files = readdirSync(FIXTURES).flatMap((m) => readdirSync(join(FIXTURES, m)).map((f) => `${m}/${f.replace(/\.json$/, '')}`));
    assert.deepEqual(files.sort(), CASES.map(([n]) => n).sort());
  });
});

describe('media-manager webhooks: shapes and wrong fields', () => {
  const rejects = (body: Record<string, unknown>, field: RegExp) =>
    assert.throws(() => recognize(body), (err: unknown) => err instanceof PayloadError && field.test(err.message), JSON.stringify(body));

  test('EventType (capital E) Test is a test from any sender', () => {
    assert.deepEqual(recognize({ EventType: 'Test' }), { kind: 'test', source: 'Unknown' });
    assert.deepEqual(recognize({ EventType: 'Test', movie: { folderPath: 'C:\\testpath' } }), { kind: 'test', source: 'Radarr' });
  });

  test('a payload of no known shape is not recognised (answered 400 "unrecognised payload")', () => {
    for (const body of [{}, { eventType: 'Download' }, { eventType: 'Download', path: '/tv/x.mkv' }, { foo: 'bar' }, { eventType: 'Bogus', instanceName: 'Sonarr' }]) {
      assert.equal(recognize(body), undefined, JSON.stringify(body));
    }
  });

  test('a known shape with a wrong field is a PayloadError naming the field', () => {
    rejects({ eventType: 'Download', series: 'Westworld' }, /Sonarr Download payload: field series: /);
    rejects({ eventType: 'Download', series: { path: 42 }, episodeFile: { relativePath: 'a.mkv' } }, /field series\.path: /);
    rejects({ eventType: 'Download', episodeFiles: [{ path: '/tv/a.mkv' }, { path: ['x'] }] }, /field episodeFiles\[1\]\.path: /);
    rejects({ eventType: 'Download', episodeFiles: { path: '/tv/a.mkv' } }, /field episodeFiles: /);
    rejects({ eventType: 'Download', series: { path: '/tv/X' } }, /no file to scan: expected episodeFile \(Sonarr v3\) or episodeFiles\[\]/);
    rejects({ eventType: 'Download', episodeFile: { relativePath: 'Season 01/a.mkv' } }, /episodeFile\.relativePath needs series\.path/);
    rejects({ eventType: 'Download', episodeFile: { path: '/tv/X/../../etc/passwd' } }, /field episodeFile\.path: must not contain a "\.\." segment/);
    rejects({ eventType: 'Download', episodeFile: { path: '' } }, /field episodeFile\.path: is missing or empty/);
    rejects({ eventType: 'SeriesDelete', series: { title: 'Westworld' } }, /series\.path is missing/);
    rejects({ eventType: 'MovieDelete', movie: { title: 'Tenet' } }, /Radarr MovieDelete payload: movie\.folderPath is missing/);
    rejects({ eventType: 'Rename', artist: { name: 'blink-182' } }, /Lidarr Rename payload: Rename lists no renamedTrackFiles and has no artist\.path/);
    rejects({ eventType: 'BookFileDelete', author: { path: '/books/A' } }, /Readarr BookFileDelete payload: no file to scan/);
    rejects({ eventType: 42, series: { path: '/tv/X' } }, /Sonarr payload: eventType is missing or not a string/);
  });

  test('titles and ids are never required, and a wrong type drops them instead of failing', () => {
    const intent = recognize({ eventType: 'Download', series: { path: '/tv/X', title: 7, tvdbId: { id: 1 }, imdbId: '' }, episodeFile: { relativePath: 'a.mkv' } });
    assert.deepEqual(intent, { kind: 'scan', source: 'Sonarr', event: 'Download', updateType: 'Created', paths: [file('/tv/X/a.mkv')] });
    const radarr = recognize({ eventType: 'Download', movie: { folderPath: '/movies/M (2000)' }, remoteMovie: 'nope', movieFile: { relativePath: 'm.mkv' } });
    assert.equal(radarr?.kind, 'scan');
    const huge = recognize({ eventType: 'Download', movie: { folderPath: '/movies/M', title: 'T'.repeat(100_000), imdbId: 'x'.repeat(1000), tmdbId: 42 }, movieFile: { relativePath: 'm.mkv' } });
    assert.ok(huge?.kind === 'scan');
    assert.equal(huge.title, 'T'.repeat(300), 'titles are cut for logs and history');
    assert.deepEqual(huge.ids, { tmdbId: 42 }, 'an absurd id is dropped');
  });

  test('null fields count as absent (other senders write nulls)', () => {
    const intent = recognize({ eventType: 'Download', series: null, episodeFile: { path: '/tv/X/Season 01/a.mkv', relativePath: null }, episodeFiles: null, isUpgrade: null });
    assert.deepEqual(intent, { kind: 'scan', source: 'Sonarr', event: 'Download', updateType: 'Created', paths: [file('/tv/X/Season 01/a.mkv')] });
  });

  test('Windows paths join with backslashes', () => {
    const intent = recognize({ eventType: 'Download', series: { path: 'D:\\TV\\Dark' }, episodeFile: { relativePath: 'Season 01/Dark - S01E01.mkv' } });
    assert.deepEqual(intent?.kind === 'scan' && intent.paths, [file('D:\\TV\\Dark\\Season 01\\Dark - S01E01.mkv')]);
  });

  test('notices without an item take their source from instanceName when it names a manager', () => {
    assert.deepEqual(recognize({ eventType: 'Health', instanceName: 'Radarr 4K', level: 'warning' }), {
      kind: 'ignore', source: 'Radarr', event: 'Health', reason: 'Health events have nothing to scan',
    });
    assert.equal(recognize({ eventType: 'ApplicationUpdate', instanceName: 'Media box' })?.source, 'Unknown');
  });

  test('any other event whose payload carries files is scanned like an import (plex_autoscan scan.py:398-463)', () => {
    for (const [name, source] of [['sonarr/download', 'Sonarr'], ['sonarr/download-v4-multi', 'Sonarr'], ['radarr/download', 'Radarr'], ['lidarr/download', 'Lidarr']] as const) {
      const download = recognize(fixture(name));
      const other = recognize({ ...fixture(name), eventType: 'SomethingNew' });
      assert.ok(download?.kind === 'scan');
      assert.deepEqual(other, { ...download, event: 'SomethingNew' }, name);
      assert.equal(other?.source, source);
    }
    // An upgrade stays an upgrade whatever the event is called.
    const upgrade = recognize({ ...fixture('radarr/download-upgrade'), eventType: 'MovieFileImported' });
    assert.ok(upgrade?.kind === 'scan' && upgrade.event === 'Upgrade' && upgrade.updateType === 'Modified');
    // Without the file field it is still an event with nothing to scan.
    assert.equal(recognize({ eventType: 'SomethingNew', series: { path: '/tv/X' } })?.kind, 'ignore');
    assert.equal(recognize({ eventType: 'SomethingNew', movie: { folderPath: '/movies/X' }, movieFile: null })?.kind, 'ignore');
  });

  test('a Lidarr track without a path is skipped, not a 400 for the whole request (plex_autoscan scan.py:454-456)', () => {
    const body = fixture('lidarr/download');
    const tracks = body.trackFiles as Array<Record<string, unknown>>;
    const intent = recognize({ ...body, trackFiles: [{ id: 99, quality: 'FLAC' }, ...tracks, { path: null, relativePath: null }] });
    assert.deepEqual(intent, recognize(body));
    const none = recognize({ ...body, trackFiles: [{ id: 1 }, { id: 2 }] });
    assert.deepEqual(none, { kind: 'ignore', source: 'Lidarr', event: 'Download', reason: 'none of the 2 track file(s) has a path or relativePath' });
    // A track with only relativePath still needs artist.path: that is the sender's mistake, named.
    rejects({ eventType: 'Download', artist: { name: 'x' }, trackFiles: [{ relativePath: 'a.flac' }] }, /trackFiles\[0\]\.relativePath needs artist\.path/);
  });

  test('unknown events of a known manager are ignored, with the event name kept short', () => {
    const intent = recognize({ eventType: 'X'.repeat(5000), series: { path: '/tv/X' } });
    assert.equal(intent?.kind, 'ignore');
    assert.ok(intent?.kind === 'ignore' && intent.event.length < 80 && intent.reason.length < 200);
  });
});
