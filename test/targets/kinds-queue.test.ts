import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { sonarrTargetSchema } from '../../src/targets/sonarr/schema.ts';
import { tdarrTargetSchema } from '../../src/targets/tdarr/schema.ts';
import { createSonarrTarget } from '../../src/targets/sonarr/target.ts';
import { createTdarrTarget } from '../../src/targets/tdarr/target.ts';
import { FakeArrTarget } from '../fakes/arr-target.ts';
import { FakeTdarr } from '../fakes/tdarr.ts';
import { runQueue } from '../helpers/plex-target.ts';
import { waitFor } from '../helpers/relay.ts';

const silent = pino({ level: 'silent' });

test('through the queue: a Tdarr answering 503 is retried until it is up and gets the scan once; Sonarr is not held back; a folder no series holds fails on Sonarr alone', async () => {
  const tdarr = await new FakeTdarr().start();
  const sonarr = await new FakeArrTarget('sonarr', 'k').start();
  sonarr.items = [{ id: 3, title: 'Dark', path: '/tv/Dark' }];
  const q = runQueue([
    createTdarrTarget('tdarr', tdarrTargetSchema.parse({ TYPE: 'tdarr', URL: tdarr.url, DB_ID: 'lib' }), silent),
    createSonarrTarget('sonarr', sonarrTargetSchema.parse({ TYPE: 'sonarr', URL: sonarr.url, API_KEY: 'k' }), silent),
  ]);
  try {
    await tdarr.setMode('error503');
    const dark = q.enqueue('/tv/Dark/S01', ['/tv/Dark/S01/e1.mkv']);
    await waitFor(() => sonarr.refreshes.length === 1 || undefined, 10_000, 'Sonarr refreshed while Tdarr is down');
    await waitFor(() => tdarr.callsTo('POST', '/api/v2/scan-files').filter((c) => c.status === 503).length >= 2 || undefined, 10_000, 'Tdarr retried');
    await tdarr.setMode('up');
    await waitFor(() => q.store.view.get(dark)!.status === 'done' || undefined, 10_000, 'both delivered');
    assert.deepEqual(tdarr.scans, [{ dbID: 'lib', mode: 'scanFolderWatcher', arrayOrPath: ['/tv/Dark/S01/e1.mkv'] }]);
    assert.deepEqual(sonarr.refreshes, [{ name: 'RefreshSeries', ids: [3] }]);

    const other = q.enqueue('/tv/Unknown/S01', ['/tv/Unknown/S01/e1.mkv']);
    const entry = await waitFor(() => (['done', 'failed'].includes(q.store.view.get(other)!.status) ? q.store.view.get(other)! : undefined), 10_000, 'settled');
    const byTarget = Object.fromEntries(entry!.deliveries.map((d) => [d.target, [d.status, d.last_error]]));
    assert.deepEqual(byTarget.tdarr, ['done', null]);
    assert.deepEqual(byTarget.sonarr, ['failed', 'no Sonarr series has its folder at or above /tv/Unknown/S01']);
    assert.equal(sonarr.refreshes.length, 1);
  } finally {
    await q.close();
    await tdarr.stop();
    await sonarr.stop();
  }
});
