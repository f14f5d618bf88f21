import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { asOutcome, type AfterDelivery, type ScanItem } from '../../../src/core/scan.ts';
import { idsOfLegacyGuid, isMerged, judgeMatch, legacyGuid, matchSearchTitle, wantedIds } from '../../../src/targets/plex/fix-match.ts';
import { FakePlexLibrary } from '../../fakes/plex-library.ts';
import { makePlexTarget, recordingLogger, scanItem, testConfig } from '../../helpers/plex-target.ts';

/*
 * PLEX_FIX_MISMATCHED, checked against plex_autoscan: after analyze and before the after-command, for a file
 * request that carried a title and an id (plex.py:212-221); the file's top item (plex.py:265-286), split first
 * when it holds media from other folders (plex.py:288-329, split_plex_item plex.py:652-671), a legacy guid
 * `com.plexapp.agents.<type>://<id>?lang=<lang>` (plex.py:335-337) from Radarr's imdb id else tmdb id
 * (scan.py:411-419) or Sonarr's tvdb id (scan.py:440-443), then match and refresh (plex.py:343-346, 674-719).
 */

describe('PLEX_FIX_MISMATCHED: the rules', () => {
  test('the webhook ids, the legacy guid and the Fix Match search title', () => {
    assert.deepEqual(wantedIds({ tmdbId: 949, imdbId: 'tt0113277', tvMazeId: 5 }), { tmdb: '949', imdb: 'tt0113277' });
    assert.deepEqual(wantedIds({ tvdbId: 0 }), {}, 'Sonarr sends 0 for "no id"');
    assert.equal(legacyGuid('movie', { tmdb: '949', imdb: 'tt0113277' }, 'EN'), 'com.plexapp.agents.imdb://tt0113277?lang=en');
    assert.equal(legacyGuid('movie', { tmdb: '949' }, 'de'), 'com.plexapp.agents.themoviedb://949?lang=de');
    assert.equal(legacyGuid('show', { tvdb: '121361', imdb: 'tt0944947' }, 'en'), 'com.plexapp.agents.thetvdb://121361?lang=en');
    assert.equal(legacyGuid('show', { imdb: 'tt0944947' }, 'en'), undefined, 'plex_autoscan matched shows by tvdb id only');
    assert.equal(matchSearchTitle('movie', { tmdb: '949', imdb: 'tt0113277' }), 'tmdb-949');
    assert.equal(matchSearchTitle('show', { tvdb: '121361', tmdb: '1399' }), 'tvdb-121361');
    assert.deepEqual(idsOfLegacyGuid('com.plexapp.agents.thetvdb://121361/1/2?lang=en'), { tvdb: '121361' });
  });

  test('matched when any id both sides name agrees; mismatched when none does; an unmatched item is fixed; otherwise left alone', () => {
    assert.equal(judgeMatch({ guid: 'plex://movie/a', ids: { tmdb: '949', imdb: 'tt0113277' } }, { tmdb: '949' }).kind, 'ok');
    assert.equal(judgeMatch({ guid: 'plex://movie/a', ids: { tmdb: '1', imdb: 'tt1' } }, { tmdb: '949', imdb: 'tt0113277' }).kind, 'fix');
    assert.equal(judgeMatch({ guid: 'local://12', ids: {} }, { tmdb: '949' }).kind, 'fix');
    assert.equal(judgeMatch({ guid: 'plex://movie/a', ids: { imdb: 'tt1' } }, { tmdb: '949' }).kind, 'unknown');
    assert.equal(judgeMatch({ guid: '', ids: {} }, { tmdb: '949' }).kind, 'unknown', 'plex.py:339: no guid, no fix');
    assert.equal(isMerged(['/data/Movies/Heat (1995)/Heat.mkv', '/data/Movies/Heat (2022)/Heat.mkv'], '/data/Movies/Heat (1995)/Heat.mkv'), true);
    assert.equal(isMerged(['/data/Movies/Heat (1995)/Heat.mkv', '/data/Movies/Heat (1995)/CD2/Heat.mkv'], '/data/Movies/Heat (1995)/Heat.mkv'), false);
  });
});

describe('PLEX_FIX_MISMATCHED over the HTTP API (a fake Plex with Fix Match)', () => {
  let plex: FakePlexLibrary;
  beforeEach(async () => {
    plex = await new FakePlexLibrary().start();
  });
  afterEach(async () => plex.stop());
  beforeEach(() => {
    plex.calls.length = 0;
    plex.sections = [
      { id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] },
      { id: '2', title: 'TV', type: 'show', locations: ['/data/TV'] },
      { id: '3', title: 'Old Movies', type: 'movie', locations: ['/data/Old'], agent: 'com.plexapp.agents.imdb' },
    ];
    plex.catalog = [
      { guid: 'plex://movie/5d7768265b1a5f001f1d1a2e', type: 'movie', name: 'Heat', year: 1995, ids: ['imdb://tt0113277', 'tmdb://949'] },
      { guid: 'plex://movie/61e1a4d0b2d9a1002d3c7a11', type: 'movie', name: 'Heat', year: 2022, ids: ['tmdb://123456'] },
      { guid: 'plex://show/5d9c086c46115600200aa2fe', type: 'show', name: 'Dark', year: 2017, ids: ['tvdb://334824', 'tmdb://70523'] },
    ];
  });

  const config = (extra: Record<string, unknown> = {}) =>
    testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_FILE_CHECKS_ENABLED: false, PLEX_ANALYZE_TYPE: 'off', PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, PLEX_FIX_MISMATCHED: true, ...extra });

  /** Delivers one scan and runs its after-scan steps; returns the history detail and the log. */
  async function scan(item: Partial<ScanItem> & { files: string[] }, extra: Record<string, unknown> = {}) {
    const { log, lines } = recordingLogger();
    const target = makePlexTarget(plex, config(extra), { log });
    const file = item.files[0]!;
    const r = await target.deliver(scanItem({ folder: file.slice(0, file.lastIndexOf('/')), source: 'Radarr', event: 'Download', ...item }));
    assert.equal(r.outcome, 'done', JSON.stringify(r));
    const detail = asOutcome(await (r as { after: AfterDelivery }).after(new AbortController().signal)).detail;
    return { detail, lines };
  }
  const changes = () => plex.calls.filter((c) => /\/(matches|match|split|refresh)$/.test(c.path) && c.path.startsWith('/library/metadata/')).map((c) => `${c.method} ${c.path}${c.query.title ? ` title=${c.query.title}` : ''}${c.query.guid ? ` guid=${c.query.guid} name=${c.query.name}` : ''}`);

  test('a movie matched to the wrong film: searched by tmdb id, matched to the result, refreshed', async () => {
    plex.items = [{ ratingKey: '10', sectionId: '1', type: 'movie', file: '/data/Movies/Heat (1995)/Heat.mkv', guid: 'plex://movie/5d77wrong', guids: ['imdb://tt9999999', 'tmdb://99999'], title: 'Heat Wave', addedAt: 1700000000 }];
    const { detail, lines } = await scan({ files: ['/data/Movies/Heat (1995)/Heat.mkv'], title: 'Heat', ids: { tmdbId: 949, imdbId: 'tt0113277' } });
    assert.deepEqual(changes(), [
      'GET /library/metadata/10/matches title=tmdb-949',
      'PUT /library/metadata/10/match guid=plex://movie/5d7768265b1a5f001f1d1a2e name=Heat',
      'PUT /library/metadata/10/refresh',
    ]);
    const matches = plex.calls.find((c) => c.path.endsWith('/matches'))!;
    assert.equal(matches.query.manual, '1');
    assert.equal(matches.query.agent, 'tv.plex.agents.movie');
    assert.equal(matches.tokenIn, 'header');
    assert.equal(plex.item('10')!.guid, 'plex://movie/5d7768265b1a5f001f1d1a2e');
    assert.match(detail, /match fixed: plex:\/\/movie\/5d77wrong -> plex:\/\/movie\/5d7768265b1a5f001f1d1a2e/);
    assert.ok(lines.some((l) => l.key === 'PLEX_FIX_MISMATCHED' && l.msg === 'Plex match fixed' && l.title === 'Heat Wave'));
  });

  test('a movie matched right: nothing is changed', async () => {
    plex.items = [{ ratingKey: '11', sectionId: '1', type: 'movie', file: '/data/Movies/Heat (1995)/Heat.mkv', guid: 'plex://movie/5d7768265b1a5f001f1d1a2e', guids: ['imdb://tt0113277', 'tmdb://949'], title: 'Heat', addedAt: 1700000000 }];
    const { detail } = await scan({ files: ['/data/Movies/Heat (1995)/Heat.mkv'], title: 'Heat', ids: { tmdbId: 949 } });
    assert.deepEqual(changes(), []);
    assert.match(detail, /; match ok$/);
  });

  test('an episode: its show is the item compared and matched, searched by tvdb id (Sonarr)', async () => {
    plex.items = [
      { ratingKey: '20', sectionId: '2', type: 'show', guid: 'plex://show/wrong', guids: ['tvdb://1'], title: 'Dark Matter', addedAt: 1700000000 },
      { ratingKey: '21', sectionId: '2', type: 'season', parentRatingKey: '20', addedAt: 1700000000 },
      { ratingKey: '22', sectionId: '2', type: 'episode', parentRatingKey: '21', file: '/data/TV/Dark/Season 01/Dark.S01E01.mkv', addedAt: 1700000001 },
    ];
    const { detail } = await scan({ files: ['/data/TV/Dark/Season 01/Dark.S01E01.mkv'], source: 'Sonarr', title: 'Dark', ids: { tvdbId: 334824, tmdbId: 70523 } });
    assert.deepEqual(changes(), [
      'GET /library/metadata/20/matches title=tvdb-334824',
      'PUT /library/metadata/20/match guid=plex://show/5d9c086c46115600200aa2fe name=Dark',
      'PUT /library/metadata/20/refresh',
    ]);
    assert.match(detail, /match fixed/);
  });

  test('a legacy-agent library: plex_autoscan\'s guid com.plexapp.agents.imdb://<id>?lang=<PLEX_FIX_MISMATCHED_LANG>, no search', async () => {
    plex.items = [{ ratingKey: '40', sectionId: '3', type: 'movie', file: '/data/Old/Heat (1995)/Heat.mkv', guid: 'com.plexapp.agents.imdb://tt0000001?lang=en', title: 'Wrong', addedAt: 1700000000 }];
    const { detail } = await scan({ files: ['/data/Old/Heat (1995)/Heat.mkv'], title: 'Heat', ids: { tmdbId: 949, imdbId: 'tt0113277' } }, { PLEX_FIX_MISMATCHED_LANG: 'EN' });
    assert.deepEqual(changes(), ['PUT /library/metadata/40/match guid=com.plexapp.agents.imdb://tt0113277?lang=en name=Heat', 'PUT /library/metadata/40/refresh']);
    assert.equal(plex.item('40')!.guid, 'com.plexapp.agents.imdb://tt0113277?lang=en');
    assert.match(detail, /match fixed: com\.plexapp\.agents\.imdb:\/\/tt0000001\?lang=en -> com\.plexapp\.agents\.imdb:\/\/tt0113277\?lang=en/);
  });

  test('two films merged into one item: it is split first, then the scanned file\'s own item is matched', async () => {
    plex.items = [{ ratingKey: '30', sectionId: '1', type: 'movie', file: '/data/Movies/Heat (1995)/Heat.mkv', moreFiles: ['/data/Movies/Heat (2022)/Heat.mkv'], guid: 'plex://movie/5d7768265b1a5f001f1d1a2e', guids: ['imdb://tt0113277', 'tmdb://949'], title: 'Heat', addedAt: 1700000000 }];
    const { detail } = await scan({ files: ['/data/Movies/Heat (2022)/Heat.mkv'], title: 'Heat', ids: { tmdbId: 123456 } });
    assert.deepEqual(changes(), [
      'PUT /library/metadata/30/split',
      'GET /library/metadata/31/matches title=tmdb-123456',
      'PUT /library/metadata/31/match guid=plex://movie/61e1a4d0b2d9a1002d3c7a11 name=Heat',
      'PUT /library/metadata/31/refresh',
    ]);
    assert.equal(plex.item('30')!.guid, 'plex://movie/5d7768265b1a5f001f1d1a2e', 'the 1995 film keeps its match');
    assert.match(detail, /match fixed: local:\/\/31 -> plex:\/\/movie\/61e1a4d0b2d9a1002d3c7a11/);
  });

  test('nothing is matched for a request without ids, for a folder scan, or with the key off', async () => {
    plex.items = [{ ratingKey: '12', sectionId: '1', type: 'movie', file: '/data/Movies/Heat (1995)/Heat.mkv', guid: 'plex://movie/5d77wrong', guids: ['tmdb://99999'], addedAt: 1700000000 }];
    await scan({ files: ['/data/Movies/Heat (1995)/Heat.mkv'], ids: {} });
    await scan({ files: ['/data/Movies/Heat (1995)/Heat.mkv'], ids: { tmdbId: 949 } }, { PLEX_FIX_MISMATCHED: false });
    const { log } = recordingLogger();
    const r = await makePlexTarget(plex, config(), { log }).deliver(scanItem({ folder: '/data/Movies/Heat (1995)', ids: { tmdbId: 949 } }));
    await (r as { after: AfterDelivery }).after(new AbortController().signal);
    assert.deepEqual(changes(), []);
  });

  test('safety: Plex finds no match for the id: logged, the item is left as it is, the scan is still done', async () => {
    plex.items = [{ ratingKey: '13', sectionId: '1', type: 'movie', file: '/data/Movies/Heat (1995)/Heat.mkv', guid: 'plex://movie/5d77wrong', guids: ['tmdb://99999'], addedAt: 1700000000 }];
    const { detail, lines } = await scan({ files: ['/data/Movies/Heat (1995)/Heat.mkv'], ids: { tmdbId: 777 } });
    assert.deepEqual(changes(), ['GET /library/metadata/13/matches title=tmdb-777']);
    assert.match(detail, /match not fixed: Plex found nothing for tmdb-777/);
    assert.ok(lines.some((l) => l.key === 'PLEX_FIX_MISMATCHED' && l.level === 40));
  });
});
