import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import pino from 'pino';
import { mediaBrowserTarget } from '../../src/targets/media-browser/target.ts';
import { LibraryRoots } from '../../src/targets/library-roots.ts';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakePlex } from '../fakes/plex.ts';
import { makePlexTarget, testConfig } from '../helpers/plex-target.ts';

describe('library roots of the enabled targets (the intake check)', () => {
  let plex: FakePlex;
  let jellyfin: FakeMediaServer;
  beforeEach(async () => {
    plex = await new FakePlex().start();
    jellyfin = await new FakeMediaServer().start();
    jellyfin.virtualFolders = [{ Name: 'Shows', Locations: ['/media/tv', '/media/tv2'], CollectionType: 'tvshows' }];
  });
  afterEach(async () => {
    await plex.stop();
    await jellyfin.stop();
  });
  const log = pino({ level: 'silent' });
  const targets = () => [makePlexTarget(plex, testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url })), mediaBrowserTarget('jellyfin', jellyfin.url, jellyfin.apiKey, log)];

  test('Plex section locations and Jellyfin virtual folders are library roots; a folder in none is outside', async () => {
    const roots = new LibraryRoots(targets(), log);
    const r = await roots.check(['/data/Movies/Heat', '/media/tv/Dark/Season 01', '/', '/media']);
    assert.deepEqual(r.outside, ['/', '/media']);
    assert.deepEqual(r.unknown, []);
    assert.deepEqual(r.roots.sort(), ['/data/Movies', '/data/TV', '/data/TV2', '/media/tv', '/media/tv2']);
    assert.deepEqual(roots.known().sort(), r.roots);
    assert.ok(jellyfin.calls.some((c) => c.path === '/Library/VirtualFolders' && c.status === 200));
  });

  test('a server that is down makes its libraries unknown: nothing is refused on its account, known roots are kept', async () => {
    const roots = new LibraryRoots(targets(), log);
    await roots.check(['/data/Movies/Heat']);
    await plex.setMode('down');
    try {
      const r = await roots.check(['/elsewhere/x']);
      assert.deepEqual(r.outside, ['/elsewhere/x']);
      assert.deepEqual(r.unknown, ['plex']);
      assert.ok(roots.known().includes('/data/Movies'), 'the last known Plex roots still bound absorption');
    } finally {
      await plex.setMode('up');
    }
  });

  test('a server that is down is not asked again for a few seconds: a burst of requests makes one attempt', async (t) => {
    // The window is a time: the test's own clock says when it passed, not the machine's (a loaded machine could
    // spend the whole 200 ms on the burst, and the check after it would then ask again).
    t.mock.timers.enable({ apis: ['Date'], now: 1_700_000_000_000 });
    let attempts = 0;
    const down = { name: 'plex', libraryRoots: async () => {
      attempts++;
      throw new Error('Plex (GET /library/sections) unreachable: ECONNREFUSED');
    } };
    const roots = new LibraryRoots([down], log, 60_000, 200);
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => roots.check([`/data/Movies/M${i}`])));
    await roots.check(['/data/Movies/Later']);
    assert.ok(burst.every((r) => r.unknown.includes('plex') && r.outside.length === 1), 'unknown, so nothing is refused on its account');
    assert.equal(attempts, 1, 'the burst shares one attempt, and the check after it makes none');
    t.mock.timers.tick(199);
    await roots.check(['/data/Movies/Still']);
    assert.equal(attempts, 1, 'not asked again within the window');
    t.mock.timers.tick(51);
    await roots.check(['/data/Movies/Again']);
    assert.equal(attempts, 2, 'asked again once the window passed');
  });

  test('a library added since the last read is found before a folder is refused', async () => {
    const roots = new LibraryRoots(targets(), log);
    assert.deepEqual((await roots.check(['/data/Docs/Planet'])).outside, ['/data/Docs/Planet']);
    const saved = plex.sections;
    plex.sections = [...saved, { id: '3', title: 'Docs', type: 'movie', locations: ['/data/Docs'] }];
    try {
      assert.deepEqual((await roots.check(['/data/Docs/Planet'])).outside, []);
    } finally {
      plex.sections = saved;
    }
  });
});
