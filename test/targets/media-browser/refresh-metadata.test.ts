import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jellyfinTargetSchema } from '../../../src/targets/jellyfin/schema.ts';
import { embyTargetSchema } from '../../../src/targets/emby/schema.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createMediaBrowserTarget } from '../../../src/targets/media-browser/target.ts';
import { FakeMediaServer } from '../../fakes/jellyfin.ts';
import { scanItem } from '../../helpers/plex-target.ts';

/*
 * Jellyfin/Emby REFRESH_METADATA (issue 39 item 1) and the `refresh` action (item 5): the items the files already are
 * get `POST /Items/{id}/Refresh` with the refresh mode; files that are no item yet are reported as changed. This is
 * autopulse's emby.rs process(): refresh_metadata (29-34) splits the events into found items (refreshed,
 * refresh_item 349-370) and the rest (scanned).
 */
describe('Jellyfin and Emby: metadata refresh of the items at the files', () => {
  let server: FakeMediaServer;
  before(async () => {
    server = await new FakeMediaServer({ apiKey: 'k' }).start();
    server.virtualFolders = [{ Name: 'tv', Locations: ['/media/TV'] }];
    server.items = [{ Id: 'ep1', Path: '/media/TV/Dark/S1/e1.mkv', library: 'tv' }];
  });
  after(() => server.stop());

  test('REFRESH_METADATA: the known file is refreshed with the configured mode, the new one reported as Created', async () => {
    const entry = jellyfinTargetSchema.parse({ TYPE: 'jellyfin', URL: server.url, API_KEY: 'k', REFRESH_METADATA: true, METADATA_REFRESH_MODE: 'Default' });
    const result = await createMediaBrowserTarget('jf', entry, silentLogger()).deliver(scanItem({ folder: '/media/TV/Dark/S1', files: ['/media/TV/Dark/S1/e1.mkv', '/media/TV/Dark/S1/e2.mkv'], updateType: 'Created' }));
    assert.equal(result.outcome, 'done');
    assert.deepEqual(server.itemRefreshes.map((r) => [r.id, r.query.MetadataRefreshMode, r.query.ImageRefreshMode]), [['ep1', 'Default', 'Default']]);
    assert.deepEqual(server.updates.map((u) => `${u.path} ${u.updateType}`), ['/media/TV/Dark/S1/e2.mkv Created']);
  });

  test('without REFRESH_METADATA a scan only reports; a refresh action refreshes (Emby, under /emby)', async () => {
    server.itemRefreshes.length = 0;
    server.updates.length = 0;
    const target = createMediaBrowserTarget('emby', embyTargetSchema.parse({ TYPE: 'emby', URL: server.url, API_KEY: 'k' }), silentLogger());
    await target.deliver(scanItem({ folder: '/media/TV/Dark/S1', files: ['/media/TV/Dark/S1/e1.mkv'] }));
    assert.equal(server.itemRefreshes.length, 0);
    assert.equal(server.updates.length, 1);
    await target.deliver({ ...scanItem({ folder: '/media/TV/Dark/S1', files: ['/media/TV/Dark/S1/e1.mkv'] }), action: 'refresh' });
    assert.deepEqual(server.itemRefreshes.map((r) => r.id), ['ep1']);
    assert.equal(server.calls.filter((c) => /\/items\/ep1\/refresh$/i.test(c.path)).at(-1)!.path, '/emby/Items/ep1/Refresh');
    // An analyze means nothing here: the file is reported as changed.
    await target.deliver({ ...scanItem({ folder: '/media/TV/Dark/S1', files: ['/media/TV/Dark/S1/e1.mkv'] }), action: 'analyze' });
    assert.equal(server.itemRefreshes.length, 1);
    assert.equal(server.updates.length, 2);
  });

  test('a backlog in one call (deliverMany): the scans that only report share one Media/Updated, each path with its own type; a refresh goes alone', async () => {
    server.itemRefreshes.length = 0;
    server.updates.length = 0;
    const before = server.calls.length;
    const target = createMediaBrowserTarget('jf', jellyfinTargetSchema.parse({ TYPE: 'jellyfin', URL: server.url, API_KEY: 'k' }), silentLogger());
    const results = await target.deliverMany([
      scanItem({ folder: '/media/TV/Dark/S2', files: ['/media/TV/Dark/S2/e1.mkv'], updateType: 'Created' }),
      { ...scanItem({ folder: '/media/TV/Dark/S1', files: ['/media/TV/Dark/S1/e1.mkv'] }), action: 'refresh' },
      scanItem({ folder: '/media/TV/Gone', updateType: 'Deleted' }),
    ]);
    assert.deepEqual(results.map((r) => r.outcome), ['done', 'done', 'done']);
    assert.deepEqual(server.updates.map((u) => `${u.path} ${u.updateType}`), ['/media/TV/Dark/S2/e1.mkv Created', '/media/TV/Gone Deleted']);
    assert.equal(server.calls.slice(before).filter((c) => c.path === '/Library/Media/Updated').length, 1);
    assert.deepEqual(server.itemRefreshes.map((r) => r.id), ['ep1']);
    // A refused request: every scan in it is retried, none reported done.
    const wrong = createMediaBrowserTarget('jf', jellyfinTargetSchema.parse({ TYPE: 'jellyfin', URL: server.url, API_KEY: 'wrong' }), silentLogger());
    const refused = await wrong.deliverMany([scanItem({ folder: '/media/TV/A' }), scanItem({ folder: '/media/TV/B' })]);
    assert.deepEqual(refused.map((r) => r.outcome), ['retry', 'retry']);
  });

  test('a wrong key is refused (401) and retried, never reported done', async () => {
    const entry = jellyfinTargetSchema.parse({ TYPE: 'jellyfin', URL: server.url, API_KEY: 'wrong', REFRESH_METADATA: true });
    const result = await createMediaBrowserTarget('jf', entry, silentLogger()).deliver(scanItem({ folder: '/media/TV/Dark/S1', files: ['/media/TV/Dark/S1/e1.mkv'] }));
    assert.equal(result.outcome, 'retry');
  });
});
