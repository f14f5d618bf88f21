import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { asOutcome, type AfterDelivery, type ScanItem } from '../../src/core/scan.ts';
import { placeRewriter } from '../../src/paths/rewrite.ts';
import { plexTarget } from '../../src/targets/plex/create.ts';
import { mediaBrowserTarget } from '../../src/targets/media-browser/target.ts';
import { LibraryRoots } from '../../src/targets/library-roots.ts';
import { PlexApi } from '../../src/targets/plex/api.ts';
import { PlexApiBackend } from '../../src/targets/plex/backends/api.ts';
import { allSectionsFor } from '../../src/targets/plex/sections.ts';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakePlex } from '../fakes/plex.ts';
import { makePlexTarget, plexSettingsOf, testConfig } from '../helpers/plex-target.ts';
import { runCli, tempDir } from '../helpers/relay.ts';

/*
 * Each target owns its translation of the relay's path (autoscan targets/plex/plex.go:79 and
 * targets/jellyfin/jellyfin.go:68, `t.rewrite(scan.Folder)`), and Plex scans every library whose location
 * holds the folder (targets/plex/plex.go:91-123, getScanLibrary).
 */
const log = pino({ level: 'silent' });
let nextId = 1;
const item = (folder: string, files: string[] = []): ScanItem => ({
  id: nextId++, folder, files, source: 'Manual', event: 'Manual', title: null, ids: {}, updateType: 'Modified',
  priority: 0, requests: 1, upgrade: false, firstAt: Date.now(), attempt: 1, fileChecks: 0, moreFiles: 0,
});
const SECTIONS = [
  { id: '1', title: 'Movies', type: 'movie' as const, locations: ['/data/Movies'] },
  { id: '2', title: 'Movies 4K', type: 'movie' as const, locations: ['/data/Movies'] },
  { id: '3', title: 'TV Shows', type: 'show' as const, locations: ['/data/TV'] },
];

describe('allSectionsFor: every section whose location holds the folder', () => {
  const locations = [
    { id: '1', title: 'Movies', location: '/data/Movies' },
    { id: '2', title: 'Movies 4K', location: '/data/Movies' },
    { id: '4', title: 'Everything', location: '/data' },
    { id: '4', title: 'Everything', location: '/data/Movies' },
    { id: '5', title: 'Movies2', location: '/data/Movies2' },
  ];
  test('two libraries over one folder, and a library above it, each once, closest first; whole segments only', () => {
    assert.deepEqual(allSectionsFor(locations, '/data/Movies/Heat (1995)').map((s) => s.id), ['1', '2', '4']);
    assert.deepEqual(allSectionsFor(locations, '/data/Movies2/X').map((s) => s.id), ['5', '4']);
    assert.deepEqual(allSectionsFor(locations, '/other'), []);
  });
});

describe('Plex and Jellyfin each with their own rewrite, Plex in every matching library', () => {
  let plex: FakePlex;
  let jellyfin: FakeMediaServer;
  before(async () => {
    plex = await new FakePlex({ sections: SECTIONS }).start();
    jellyfin = await new FakeMediaServer({ apiKey: 'jf' }).start();
    jellyfin.virtualFolders = [{ Name: 'Movies', Locations: ['/media/Movies'] }];
  });
  after(async () => {
    await plex.stop();
    await jellyfin.stop();
  });
  const plexWith = (extra: Record<string, unknown>) => {
    const config = testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_FILE_CHECKS_ENABLED: false, PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, ...extra });
    const api = new PlexApi(plex.url, plex.token);
    return plexTarget(new PlexApiBackend(api), plexSettingsOf(config), api, log);
  };

  test('PLEX_REWRITE: Plex is sent its own path, in both movie libraries, in one delivery', async () => {
    const target = plexWith({ PLEX_REWRITE: [{ from: '^/mnt/unionfs/Media/', to: '/data/' }] });
    const before = plex.refreshes().length;
    const result = await target.deliver(item('/mnt/unionfs/Media/Movies/Heat (1995)'));
    assert.equal(result.outcome, 'done', JSON.stringify(result));
    assert.deepEqual(plex.refreshes().slice(before).map((r) => `${r.section} ${r.path}`), ['1 /data/Movies/Heat (1995)', '2 /data/Movies/Heat (1995)']);
    assert.match((result as { detail: string }).detail, /section 1 \(Movies\) via api \| section 2 \(Movies 4K\) via api/);
  });

  test('two libraries: each gets its completion watch, the after-command runs once (it pairs with the one before-command)', async () => {
    const dir = tempDir();
    const record = join(dir, 'commands.txt');
    const config = testConfig({
      PLEX_TOKEN: plex.token,
      PLEX_LOCAL_URL: plex.url,
      SERVER_FILE_CHECKS_ENABLED: false,
      PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false,
      PLEX_ANALYZE_TYPE: 'off',
      RUN_COMMAND_BEFORE_SCAN: `echo "before $SCANRELAY_PATH" >> ${record}`,
      RUN_COMMAND_AFTER_SCAN: `echo "after $SCANRELAY_SECTION" >> ${record}`,
    });
    const result = await makePlexTarget(plex, config).deliver(item('/data/Movies/Pair (2001)'));
    assert.equal(result.outcome, 'done');
    const detail = asOutcome(await (result as { after: AfterDelivery }).after(new AbortController().signal)).detail;
    assert.match(detail, /^section 1 \(Movies\) via api; completed \| section 2 \(Movies 4K\) via api; completed; after-scan command ok$/);
    assert.deepEqual(readFileSync(record, 'utf8').trim().split('\n'), ['before /data/Movies/Pair (2001)', 'after 2']);
  });

  test("a plex_autoscan config (no rewrite) also scans every library over the folder", async () => {
    const target = plexWith({});
    const before = plex.refreshes().length;
    const result = await target.deliver(item('/data/Movies/Up (2009)'));
    assert.equal(result.outcome, 'done');
    assert.deepEqual(plex.refreshes().slice(before).map((r) => `${r.section} ${r.path}`), ['1 /data/Movies/Up (2009)', '2 /data/Movies/Up (2009)']);
  });

  test('JELLYFIN.REWRITE: Jellyfin is told its own path for the files', async () => {
    const target = mediaBrowserTarget('jellyfin', jellyfin.url, 'jf', log, placeRewriter([{ from: '^/mnt/unionfs/Media/', to: '/media/' }]));
    const result = await target.deliver(item('/mnt/unionfs/Media/Movies/Heat (1995)', ['/mnt/unionfs/Media/Movies/Heat (1995)/Heat.mkv']));
    assert.equal(result.outcome, 'done');
    assert.deepEqual(jellyfin.updates.map((u) => u.path), ['/media/Movies/Heat (1995)/Heat.mkv']);
  });

  test("the library check asks each target in its own terms; roots behind a rewrite bound nothing in the queue", async () => {
    const targets = [
      plexWith({ PLEX_REWRITE: [{ from: '^/mnt/unionfs/Media/', to: '/data/' }] }),
      mediaBrowserTarget('jellyfin', jellyfin.url, 'jf', log, placeRewriter([{ from: '^/mnt/unionfs/Media/', to: '/media/' }])),
    ];
    const roots = new LibraryRoots(targets, log);
    const r = await roots.check(['/mnt/unionfs/Media/Movies/Heat (1995)', '/mnt/unionfs/Media/TV/Dark', '/mnt/unionfs', '/elsewhere/X']);
    assert.deepEqual(r.outside, ['/mnt/unionfs', '/elsewhere/X']);
    assert.deepEqual(roots.known(), []);
  });
});

describe('scanrelay map --trigger: the trigger rule, the relay path, and what each server is sent', () => {
  test("sonarr's rule into the relay's path, then Plex's and Jellyfin's own, and Plex's section for its path", async () => {
    const plex = await new FakePlex({ sections: SECTIONS }).start();
    try {
      const dir = tempDir();
      const file = join(dir, 'config.json');
      writeFileSync(
        file,
        JSON.stringify({
          PLEX_LOCAL_URL: plex.url,
          PLEX_TOKEN: plex.token,
          PLEX_REWRITE: [{ from: '^/mnt/unionfs/Media/', to: '/data/' }],
          JELLYFIN: { ENABLED: true, URL: 'http://127.0.0.1:1', REWRITE: [{ from: '^/mnt/unionfs/Media/', to: '/media/' }] },
          SERVER_AUTOSCAN_TRIGGERS: { sonarr: { REWRITE: [{ from: '^/data/', to: '/mnt/unionfs/Media/TV/' }] } },
        }),
      );
      const out = await runCli(['--config', file, 'map', '--trigger', 'sonarr', '/data/Dark/Season 1/e1.mkv']);
      assert.equal(out.code, 0, out.stderr);
      assert.match(out.stdout, /trigger: sonarr's REWRITE: \/mnt\/unionfs\/Media\/TV\/Dark\/Season 1\/e1\.mkv/);
      assert.match(out.stdout, /folder: {2}\/mnt\/unionfs\/Media\/TV\/Dark\/Season 1/);
      assert.match(out.stdout, /target: {2}plex \(plex\): \/data\/TV\/Dark\/Season 1 \(its own REWRITE\), sent/);
      assert.match(out.stdout, /target: {2}jellyfin \(jellyfin\): \/media\/TV\/Dark\/Season 1 \(its own REWRITE\), sent/);
      assert.match(out.stdout, /section: 3 \(TV Shows\), location \/data\/TV/);
      const bad = await runCli(['--config', file, 'map', '--trigger', 'radarr', '/data/x']);
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /no SERVER_AUTOSCAN_TRIGGERS entry named "radarr"/);
    } finally {
      await plex.stop();
    }
  });
});
