import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asOutcome, type AfterOutcome, type DeliveryResult } from '../../../src/core/scan.ts';
import { parseLeaves } from '../../../src/targets/plex/api-items.ts';
import { itemsAnswer } from '../../../src/targets/plex/answers.ts';
import { asScannedItem } from '../../../src/targets/plex/scanned-items.ts';
import { makePlexTarget, ownPlex, scanItem, testConfig } from '../../helpers/plex-target.ts';

// Issue 40: a Plex `scanned` event names the items the scan added or updated. They are found once Plex said the scan
// ended, through the section listing (GET /library/sections/{id}/all?type=N, newest first) that PLEX_REFRESH_METADATA
// and item actions already use, matched on Media[].Part[].file; Plex's listing names a movie by title and year, an
// episode by grandparentTitle, parentIndex and index (docs/protocols.md, "Items a scan added").

const SECTIONS = [
  { id: '1', title: 'Movies', type: 'movie' as const, locations: ['/data/Movies'] },
  { id: '2', title: 'TV', type: 'show' as const, locations: ['/data/TV'] },
];

async function setup(t: Parameters<typeof ownPlex>[0]) {
  const plex = await ownPlex(t, { sections: SECTIONS });
  plex.scanActivityMs = 50;
  // Breaking Bad and its first season are in the library; the scans add Dune and an episode.
  plex.items.push(
    { ratingKey: '100', sectionId: '2', type: 'show', title: 'Breaking Bad', year: 2008, index: 1, addedAt: 1 },
    { ratingKey: '101', sectionId: '2', type: 'season', parentRatingKey: '100', title: 'Season 1', index: 1, addedAt: 1 },
    { ratingKey: '5', sectionId: '1', type: 'movie', title: 'Heat', year: 1995, file: '/data/Movies/Heat (1995)/Heat.mkv', addedAt: 2 },
  );
  plex.addedByScan.push(
    { ratingKey: '7', sectionId: '1', type: 'movie', title: 'Dune', year: 2021, file: '/data/Movies/Dune (2021)/Dune.mkv', addedAt: 0 },
    { ratingKey: '102', sectionId: '2', type: 'episode', parentRatingKey: '101', title: 'Cat\u2019s in the Bag...', year: 2008, index: 2, file: '/data/TV/Breaking Bad/Season 01/e02.mkv', addedAt: 0 },
  );
  const config = testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_FILE_CHECKS_ENABLED: false, PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, PLEX_ANALYZE_TYPE: 'off' });
  return { plex, target: makePlexTarget(plex, config, { t }) };
}

async function afterSteps(result: DeliveryResult): Promise<AfterOutcome> {
  assert.equal(result.outcome, 'done', JSON.stringify(result));
  return asOutcome(await (result as Extract<DeliveryResult, { outcome: 'done' }>).after!(new AbortController().signal));
}

test("after Plex's scan ended, the lookup finds the items at the scan's files: a movie with its year, an episode with its show and numbers", async (t) => {
  const { plex, target } = await setup(t);
  const movie = await afterSteps(await target.deliver(scanItem({ folder: '/data/Movies/Dune (2021)', files: ['/data/Movies/Dune (2021)/Dune.mkv'] })));
  assert.ok(plex.scans.find((s) => s.path === '/data/Movies/Dune (2021)')?.endedAt, 'the after-steps end once the scan ended');
  const listedBefore = plex.calls.filter((c) => c.path.endsWith('/all')).length;
  assert.deepEqual(await movie.items!(new AbortController().signal), [{ key: '7', type: 'movie', title: 'Dune', year: 2021 }]);
  assert.ok(plex.calls.filter((c) => c.path.endsWith('/all')).length > listedBefore, 'asked Plex when the lookup ran, not before');
  const episode = await afterSteps(await target.deliver(scanItem({ id: 2, folder: '/data/TV/Breaking Bad/Season 01', files: ['/data/TV/Breaking Bad/Season 01/e02.mkv'] })));
  assert.deepEqual(await episode.items!(new AbortController().signal), [
    { key: '102', type: 'episode', title: 'Cat\u2019s in the Bag...', year: 2008, show: 'Breaking Bad', season: 1, episode: 2 },
  ]);
  const listing = plex.calls.filter((c) => c.path === '/library/sections/2/all').at(-1)!;
  assert.equal(listing.query.type, '4', 'episodes are listed by their own type');
  assert.equal(listing.query.sort, 'addedAt:desc');
});

test('a folder scan names the items with a file in the folder; a deletion looks up nothing', async (t) => {
  const { target } = await setup(t);
  const folder = await afterSteps(await target.deliver(scanItem({ folder: '/data/Movies/Heat (1995)' })));
  assert.deepEqual((await folder.items!(new AbortController().signal)).map((i) => i.title), ['Heat']);
  const deleted = await afterSteps(await target.deliver(scanItem({ id: 3, folder: '/data/Movies/Heat (1995)', files: ['/data/Movies/Heat (1995)/Heat.mkv'], updateType: 'Deleted' })));
  assert.equal(deleted.items, undefined);
});

test('a value Plex sends in another form is taken or left out, never a reason to refuse the listing', () => {
  const body = itemsAnswer.parse({
    MediaContainer: {
      Metadata: [
        { ratingKey: 1, type: 'movie', title: 'Odd', year: '1999', Media: [{ Part: [{ file: '/a.mkv' }] }] },
        { ratingKey: '2', type: 'episode', title: 'X', year: 'unknown', index: null, parentIndex: '3', grandparentTitle: 5, Media: [] },
      ],
    },
  });
  assert.deepEqual(parseLeaves(body).items.map(asScannedItem), [
    { key: '1', type: 'movie', title: 'Odd', year: 1999 },
    { key: '2', type: 'episode', title: 'X', season: 3 },
  ]);
});

test('a folder under two libraries (Movies and Movies 4K) names its item in each, each looked up in its own section', async (t) => {
  const plex = await ownPlex(t, {
    sections: [
      { id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] },
      { id: '4', title: 'Movies 4K', type: 'movie', locations: ['/data/Movies'] },
    ],
  });
  plex.addedByScan.push(
    { ratingKey: '7', sectionId: '1', type: 'movie', title: 'Dune', year: 2021, file: '/data/Movies/Dune (2021)/Dune.mkv', addedAt: 0 },
    { ratingKey: '8', sectionId: '4', type: 'movie', title: 'Dune', year: 2021, file: '/data/Movies/Dune (2021)/Dune.mkv', addedAt: 0 },
  );
  const config = testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_FILE_CHECKS_ENABLED: false, PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, PLEX_ANALYZE_TYPE: 'off' });
  const both = await afterSteps(await makePlexTarget(plex, config, { t }).deliver(scanItem({ folder: '/data/Movies/Dune (2021)', files: ['/data/Movies/Dune (2021)/Dune.mkv'] })));
  assert.deepEqual((await both.items!(new AbortController().signal)).map((i) => i.key).sort(), ['7', '8']);
  assert.deepEqual([...new Set(plex.calls.filter((c) => c.path.endsWith('/all')).map((c) => c.path))].sort(), ['/library/sections/1/all', '/library/sections/4/all']);
});
