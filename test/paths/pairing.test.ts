// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bestByItems, commonTail, isRuleFor, locationOf, pairByName, rewriteFor, type LibraryLocation } from '../../src/paths/pairing.ts';
import { placeRewriter } from '../../src/paths/rewrite.ts';
import { editConfig } from '../../src/setup/config-edit.ts';

const loc = (library: string, path: string, libraryId = library): LibraryLocation => ({ server: 'plex', libraryId, library, path });

test('common tail: trailing folder names compared without case, whole names only', () => {
  assert.equal(commonTail('/tv', '/data/media/TV'), 1);
  assert.equal(commonTail('/media/tv/anime/', '/data/TV/Anime'), 2);
  assert.equal(commonTail('/tv', '/data/tv2'), 0);
  assert.equal(commonTail('D:\\Media\\Movies', '/mnt/movies'), 1);
});

test('pairing by name: the longest tail wins; two libraries at the same length are ambiguous; one library with two locations is not', () => {
  const locations = [loc('TV', '/data/TV'), loc('Anime', '/data/TV/Anime'), loc('Movies', '/data/Movies'), loc('Movies', '/old/Movies'), loc('Kids', '/kids/Cartoons'), loc('Cartoons', '/x/Cartoons')];
  const [anime, movies, cartoons, music] = pairByName(['/tv/anime', '/movies', '/cartoons', '/music'], locations);
  assert.deepEqual(anime, { root: '/tv/anime', status: 'paired', location: locations[1], by: 'name' });
  assert.equal(movies!.status, 'paired');
  assert.equal(cartoons!.status, 'ambiguous');
  assert.deepEqual(music, { root: '/music', status: 'unmatched' });
});

test("pairing by items: the location whose items carry the manager's item folder names", () => {
  const a = loc('TV Shows', '/data/media/TV');
  const b = loc('Kids TV', '/data/kids/TV');
  const server = new Map([
    [a, ['/data/media/TV/Show (2020)/Season 01/e1.mkv', '/data/media/TV/Other/Season 1/x.mkv']],
    [b, ['/data/kids/TV/Bluey (2018)/Season 01/e1.mkv']],
  ]);
  assert.equal(bestByItems(['/tv/Bluey (2018)'], [a, b], server), b);
  assert.equal(bestByItems(['/tv/show (2020)'], [a, b], server), a);
  assert.equal(bestByItems(['/tv/Unknown'], [a, b], server), undefined);
});

test('the rewrite takes the root and what lies below it, literally, and nothing that only starts with the same letters', () => {
  const rule = rewriteFor('/media/tv (4k)+/', '/data/$pecial/TV');
  const rewrite = placeRewriter([rule])!;
  assert.equal(rewrite('/media/tv (4k)+/Show/S01/e.mkv'), '/data/$pecial/TV/Show/S01/e.mkv');
  assert.equal(rewrite('/media/tv (4k)+'), '/data/$pecial/TV');
  assert.equal(rewrite('/media/tv (4k)+2/Show'), '/media/tv (4k)+2/Show');
  assert.ok(isRuleFor(rule, '/media/tv (4k)+'));
  assert.equal(locationOf('/data/TV/Anime/x', [loc('TV', '/data/TV'), loc('Anime', '/data/TV/Anime')])?.library, 'Anime');
});

test("the config edit replaces setup's own rule for a root, keeps the user's rules and every other key", () => {
  const raw = {
    SERVER_PASS: 'x',
    SERVER_AUTOSCAN_TRIGGERS: { sonarr: { PRIORITY: 3, REWRITE: [rewriteFor('/tv', '/old/TV'), { from: '^/mine/', to: '/theirs/' }] }, radarr: 5 },
  };
  const { raw: out, changed } = editConfig(raw, { triggers: [{ name: 'sonarr', roots: ['/tv'], rules: [rewriteFor('/tv', '/data/TV')] }, { name: 'radarr', roots: ['/movies'], rules: [] }] });
  assert.deepEqual(out.SERVER_AUTOSCAN_TRIGGERS, {
    sonarr: { PRIORITY: 3, REWRITE: [rewriteFor('/tv', '/data/TV'), { from: '^/mine/', to: '/theirs/' }] },
    radarr: { PRIORITY: 5, REWRITE: [] },
  });
  assert.equal(out.SERVER_PASS, 'x');
  assert.deepEqual(changed, ['SERVER_AUTOSCAN_TRIGGERS']);
  // A file without SERVER_AUTOSCAN_TRIGGERS keeps the default four triggers.
  const fresh = editConfig({}, { triggers: [{ name: 'sonarr-2', roots: ['/tv'], rules: [] }] }).raw.SERVER_AUTOSCAN_TRIGGERS as Record<string, unknown>;
  assert.deepEqual(Object.keys(fresh).sort(), ['lidarr', 'radarr', 'readarr', 'sonarr', 'sonarr-2']);
});
