import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildTargets } from '../../src/targets/index.ts';
import { MediaBrowserTarget } from '../../src/targets/media-browser/target.ts';
import { PlexTarget } from '../../src/targets/plex/target.ts';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { scanItem, testConfig } from '../helpers/plex-target.ts';

const silent = pino({ level: 'silent' });

describe('the targets registry: every named target built by its TYPE', () => {
  let jf: FakeMediaServer;
  before(async () => {
    jf = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
  });
  after(async () => jf.stop());

  test('the PLEX_* keys are `plex`; TARGETS entries keep their names; each Plex reads its own settings', async () => {
    const targets = await buildTargets(
      testConfig({
        PLEX_TOKEN: 'main',
        PLEX_LOCAL_URL: 'http://127.0.0.1:9',
        TARGETS: {
          plex4k: { TYPE: 'plex', URL: 'http://127.0.0.1:10', TOKEN: '4k', EMPTY_TRASH: true, REWRITE: [{ from: '^/data/', to: '/4k/' }] },
          kids: { TYPE: 'jellyfin', URL: jf.url, API_KEY: 'jf-key' },
          shed: { TYPE: 'emby', URL: jf.url, API_KEY: 'jf-key' },
        },
      }),
      silent,
    );
    assert.deepEqual(targets.map((t) => t.name), ['plex', 'plex4k', 'kids', 'shed']);
    const [plex, plex4k] = targets as [PlexTarget, PlexTarget];
    assert.ok(plex instanceof PlexTarget && plex4k instanceof PlexTarget);
    assert.equal(plex.settings.TOKEN, 'main');
    assert.equal(plex4k.settings.TOKEN, '4k');
    assert.equal(plex4k.settings.URL, 'http://127.0.0.1:10');
    assert.equal(plex4k.settings.EMPTY_TRASH, true);
    assert.equal(plex.settings.EMPTY_TRASH, false);
    assert.equal(plex4k.toTargetPath?.('/data/Movies/X'), '/4k/Movies/X');
    assert.equal(plex.toTargetPath, undefined);
    assert.ok(targets[2] instanceof MediaBrowserTarget && targets[3] instanceof MediaBrowserTarget);
    // What the server and the CLI ask, through the Target contract alone (issue 49 item 3).
    assert.deepEqual(targets.map((t) => t.describe?.()), [
      { type: 'plex', url: 'http://127.0.0.1:9', method: 'api' },
      { type: 'plex', url: 'http://127.0.0.1:10', method: 'api' },
      { type: 'jellyfin', url: jf.url },
      { type: 'emby', url: jf.url },
    ]);
    assert.deepEqual(targets.map((t) => [t.name, !!t.setupProblems, !!t.sections]), [['plex', true, true], ['plex4k', true, true], ['kids', false, false], ['shed', false, false]]);
    for (const t of targets) t.close?.();
  });

  test('a Jellyfin entry delivers under its name, with its own rewrite', async () => {
    const [kids] = await buildTargets(
      testConfig({ PLEX_ENABLED: false, TARGETS: { kids: { TYPE: 'jellyfin', URL: jf.url, API_KEY: 'jf-key', REWRITE: [{ from: '^/data/', to: '/media/' }] } } }),
      silent,
    );
    assert.equal(kids!.name, 'kids');
    const result = await kids!.deliver(scanItem({ folder: '/data/Kids/Bluey' }));
    assert.equal(result.outcome, 'done');
    assert.deepEqual(jf.updates.map((u) => u.path), ['/media/Kids/Bluey']);
  });

  test('every kind beyond media servers is built from its TARGETS entry by TYPE, under its own name', async () => {
    const targets = await buildTargets(
      testConfig({
        PLEX_ENABLED: false,
        TARGETS: {
          books: { TYPE: 'audiobookshelf', URL: 'http://127.0.0.1:9', TOKEN: 't' },
          tdarr: { TYPE: 'tdarr', URL: 'http://127.0.0.1:9', DB_ID: 'lib1' },
          flows: { TYPE: 'fileflows', URL: 'http://127.0.0.1:9' },
          tv: { TYPE: 'sonarr', URL: 'http://127.0.0.1:9', API_KEY: 'k' },
          films: { TYPE: 'radarr', URL: 'http://127.0.0.1:9', API_KEY: 'k' },
          hook: { TYPE: 'command', COMMAND: ['/bin/true'] },
          peer: { TYPE: 'relay', URL: 'http://127.0.0.1:9', PEER: 'autoscan' },
        },
      }),
      silent,
    );
    assert.deepEqual(targets.map((t) => t.name), ['books', 'tdarr', 'flows', 'tv', 'films', 'hook', 'peer']);
    for (const t of targets) t.close?.();
  });
});
