import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { radarrTargetSchema } from '../../../src/targets/radarr/schema.ts';
import { sonarrTargetSchema } from '../../../src/targets/sonarr/schema.ts';
import { arrItemFor } from '../../../src/targets/arr/refresh.ts';
import { createRadarrTarget } from '../../../src/targets/radarr/target.ts';
import { createSonarrTarget } from '../../../src/targets/sonarr/target.ts';
import { FakeArrTarget } from '../../fakes/arr-target.ts';
import { scanItem } from '../../helpers/plex-target.ts';

const silent = pino({ level: 'silent' });

// autopulse's sonarr.rs:48-98 and radarr.rs:48-101 (find by path, then RefreshSeries / RefreshMovie);
// Sonarr's RefreshSeriesCommand and Radarr's RefreshMovieCommand (an empty id list refreshes everything).
test('arrItemFor: the series or movie whose folder holds the scan folder, by whole segments', () => {
  const items = [
    { id: 1, path: '/tv/Show' },
    { id: 2, path: '/tv/Show 2' },
    { id: 3, path: String.raw`D:\TV\Breaking Bad` },
    { id: 4, path: null },
  ];
  const table: Array<[string, number | undefined]> = [
    ['/tv/Show/Season 01', 1],
    ['/tv/Show', 1],
    ['/tv/Show 2/Season 01', 2],
    ['/tv/Showcase', undefined],
    ['/tv', undefined],
    [String.raw`d:\tv\breaking bad\Season 1`, 3],
  ];
  for (const [path, id] of table) assert.equal(arrItemFor(path, items)?.id, id, path);
});

describe('Sonarr and Radarr targets', () => {
  let sonarr: FakeArrTarget;
  let radarr: FakeArrTarget;
  before(async () => {
    sonarr = await new FakeArrTarget('sonarr', 'sonarr-key').start();
    sonarr.items = [
      { id: 7, title: 'Dark', path: '/tv/Dark' },
      { id: 8, title: 'Dark Matter', path: '/tv/Dark Matter' },
    ];
    sonarr.rootFolders = ['/tv'];
    radarr = await new FakeArrTarget('radarr', 'radarr-key').start();
    radarr.items = [{ id: 24, title: 'The Matrix', path: '/movies/The Matrix (1999)' }];
  });
  after(async () => {
    await sonarr.stop();
    await radarr.stop();
  });
  const sonarrTarget = (over: Record<string, unknown> = {}) => createSonarrTarget('sonarr2', sonarrTargetSchema.parse({ TYPE: 'sonarr', URL: sonarr.url, API_KEY: 'sonarr-key', ...over }), silent);
  const radarrTarget = (over: Record<string, unknown> = {}) => createRadarrTarget('radarr2', radarrTargetSchema.parse({ TYPE: 'radarr', URL: radarr.url, API_KEY: 'radarr-key', ...over }), silent);

  test('Sonarr: GET /api/v3/series, then POST /api/v3/command RefreshSeries with that one seriesId (X-Api-Key); the rewrite applies', async () => {
    sonarr.refreshes.length = 0;
    const result = await sonarrTarget({ REWRITE: [{ from: '^/mnt/unionfs/Media/TV/', to: '/tv/' }] }).deliver(scanItem({ folder: '/mnt/unionfs/Media/TV/Dark/Season 01' }));
    assert.deepEqual(result, { outcome: 'done', detail: 'RefreshSeries of "Dark" (id 7)' });
    assert.deepEqual(sonarr.refreshes, [{ name: 'RefreshSeries', ids: [7] }]);
    const command = sonarr.callsTo('POST', '/api/v3/command').at(-1)!;
    assert.deepEqual(command.body, { name: 'RefreshSeries', seriesId: 7 });
    assert.equal(command.status, 201);
    assert.equal(command.headers['x-api-key'], 'sonarr-key');
  });

  test('Radarr: RefreshMovie with movieIds [id]', async () => {
    const result = await radarrTarget().deliver(scanItem({ folder: '/movies/The Matrix (1999)', files: ['/movies/The Matrix (1999)/m.mkv'] }));
    assert.deepEqual(result, { outcome: 'done', detail: 'RefreshMovie of "The Matrix" (id 24)' });
    assert.deepEqual(radarr.refreshes, [{ name: 'RefreshMovie', ids: [24] }]);
  });

  test('no series holds the folder (a text prefix is not a folder; a folder above the series is not one): failed, and no command is sent', async () => {
    sonarr.refreshes.length = 0;
    for (const folder of ['/tv/Darkness/Season 01', '/tv']) {
      const r = await sonarrTarget().deliver(scanItem({ folder }));
      assert.ok(r.outcome === 'failed' && r.error === `no Sonarr series has its folder at or above ${folder}`, JSON.stringify(r));
    }
    assert.deepEqual(sonarr.refreshes, []);
  });

  test('a wrong key is 401: retried slowly, the key not shown; 5xx and a closed port are retried', async () => {
    const wrong = await sonarrTarget({ API_KEY: 'wrong-key-123' }).deliver(scanItem({ folder: '/tv/Dark' }));
    assert.ok(wrong.outcome === 'retry' && wrong.slow === true && /HTTP 401/.test(wrong.error) && !wrong.error.includes('wrong-key-123'), JSON.stringify(wrong));
    await radarr.setMode('error503');
    const busy = await radarrTarget().deliver(scanItem({ folder: '/movies/The Matrix (1999)' }));
    assert.ok(busy.outcome === 'retry' && !busy.slow, JSON.stringify(busy));
    await radarr.setMode('down');
    assert.equal((await radarrTarget().deliver(scanItem({ folder: '/movies/The Matrix (1999)' }))).outcome, 'retry');
    assert.equal((await radarrTarget().available()).ok, false);
    await radarr.setMode('up');
    assert.deepEqual(await radarrTarget().available(), { ok: true });
  });

  test('a burst of scans reads the series list once; a series added since (not in the list read) makes it read again', async () => {
    const t = sonarrTarget();
    const reads = () => sonarr.callsTo('GET', '/api/v3/series').length;
    const start = reads();
    await Promise.all([t.deliver(scanItem({ folder: '/tv/Dark/S01' })), t.deliver(scanItem({ folder: '/tv/Dark Matter/S01' }))]);
    await t.deliver(scanItem({ folder: '/tv/Dark/S02' }));
    assert.equal(reads() - start, 1);
    sonarr.items.push({ id: 9, title: 'New Show', path: '/tv/New Show' });
    try {
      assert.deepEqual(await t.deliver(scanItem({ folder: '/tv/New Show/S01' })), { outcome: 'done', detail: 'RefreshSeries of "New Show" (id 9)' });
      assert.equal(reads() - start, 2);
    } finally {
      sonarr.items.pop();
    }
  });

  test('libraryRoots are the root folders (GET /api/v3/rootfolder)', async () => {
    assert.deepEqual(await sonarrTarget().libraryRoots!(), ['/tv']);
  });
});
