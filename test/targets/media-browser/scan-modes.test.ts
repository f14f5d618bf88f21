import assert from 'node:assert/strict';
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import pino from 'pino';
import { asOutcome, type DeliveryResult } from '../../../src/core/scan.ts';
import type { ScannedItem } from '../../../src/core/events.ts';
import { mediaBrowserTarget, type MediaBrowserTarget } from '../../../src/targets/media-browser/target.ts';
import type { ScanModeSetting } from '../../../src/targets/media-browser/scan-mode.ts';
import { FakeMediaServer } from '../../fakes/jellyfin.ts';
import { episodeName, showName, writeMediaTree } from '../../fakes/jellyfin-library.ts';
import { runQueue, scanItem } from '../../helpers/plex-target.ts';
import { tempDir, waitFor } from '../../helpers/relay.ts';
import type { Target } from '../../../src/core/scan.ts';

/*
 * Issue 50: SCAN_MODE on Jellyfin and Emby, against a fake that models the server over a real directory tree and
 * counts the items each call touches (fakes/jellyfin-library.ts). A library of 6 shows x 2 seasons x 8 episodes
 * (6 + 12 + 96 = 114 items) and 20 movies.
 */

const silent = pino({ level: 'silent' });
const SIZE = { shows: 6, seasons: 2, episodes: 8, movies: 20 };
/** Fast looking: the fake's refresh queue runs after 20 ms. */
const LOOK = { firstMs: 10, maxWaitMs: 50, boundMs: 5_000 };

interface Setup {
  server: FakeMediaServer;
  root: string;
  tv: string;
  movies: string;
  target: (mode?: ScanModeSetting) => MediaBrowserTarget;
}

async function setup(opts: { product?: 'jellyfin' | 'emby'; version: string; plugin?: boolean; scanTv?: boolean }): Promise<Setup> {
  const root = tempDir('jf-modes-');
  const { tv, movies } = writeMediaTree(root, SIZE);
  const server = await new FakeMediaServer({ apiKey: 'key', version: opts.version, plugin: opts.plugin ?? false }).start();
  server.model.addLibrary('Shows', 'tvshows', [tv], { scan: opts.scanTv ?? true });
  server.model.addLibrary('Movies', 'movies', [movies]);
  return { server, root, tv, movies, target: (mode) => mediaBrowserTarget(opts.product ?? 'jellyfin', server.url, 'key', silent, undefined, opts.product ?? 'jellyfin', undefined, undefined, { ...(mode ? { scanMode: mode } : {}), look: LOOK }) };
}

async function teardown(s: Setup | undefined): Promise<void> {
  await s?.server.stop();
  if (s) rmSync(s.root, { recursive: true, force: true });
}

/** Runs a delivery's after-step as the scheduler does, and the items its `scanned` event would carry. */
async function afterStep(result: DeliveryResult): Promise<{ detail: string; items: ScannedItem[] | undefined }> {
  assert.equal(result.outcome, 'done', JSON.stringify(result));
  if (result.outcome !== 'done' || !result.after) return { detail: result.outcome === 'done' ? (result.detail ?? '') : '', items: undefined };
  const signal = new AbortController().signal;
  const out = asOutcome(await result.after(signal));
  return { detail: out.detail, items: out.items ? await out.items(signal) : undefined };
}

/** Where the touch count stands once the server's queue ran (what earlier tests queued is not counted). */
async function mark(server: FakeMediaServer): Promise<number> {
  await server.idle();
  return server.model.touches.length;
}

/** Items touched by the calls since `from` (an index into model.touches), once the server's queue ran. */
async function touchedSince(server: FakeMediaServer, from: number): Promise<number> {
  await server.idle();
  return server.model.touches.slice(from).reduce((n, t) => n + t.items, 0);
}

const scanRoutes = (server: FakeMediaServer) => server.calls.filter((c) => /\/library\/(media\/updated|refresh|scanpaths?)$|\/refresh$/i.test(c.path)).map((c) => c.path.replace(/\/Items\/[0-9a-f]+\//, '/Items/{id}/'));

describe('Jellyfin 10.11 without the TargetedScan plugin: auto is item mode', () => {
  let s: Setup;
  before(async () => {
    s = await setup({ version: '10.11.3' });
  });
  after(() => teardown(s));

  test('auto asks /System/Info and /Plugins once, picks item and says why', async () => {
    const target = s.target();
    assert.equal(target.scanMode(), undefined, 'not known before the first delivery');
    const ep = join(s.tv, showName(1), 'Season 01', episodeName(1, 1, 9, 'New One'));
    writeFileSync(ep, '');
    await target.deliver(scanItem({ folder: join(s.tv, showName(1), 'Season 01'), files: [ep], updateType: 'Created' }));
    await target.deliver(scanItem({ folder: join(s.tv, showName(1), 'Season 01'), files: [ep], updateType: 'Modified' }));
    assert.equal(s.server.calls.filter((c) => c.path === '/System/Info').length, 1);
    assert.equal(s.server.calls.filter((c) => c.path === '/Plugins').length, 1);
    assert.equal(target.scanMode()?.mode, 'item');
    assert.match(target.scanMode()!.why, /Jellyfin 10\.11\.3, no TargetedScan plugin/);
    const available = await target.available();
    assert.match(available.note ?? '', /^scan mode item: Jellyfin 10\.11\.3/);
  });

  test('a new episode refreshes its season only (Default modes, nothing replaced); the relay looks until it is an item and names it', async () => {
    const target = s.target();
    const season = join(s.tv, showName(2), 'Season 02');
    const ep = join(season, episodeName(2, 2, 9, 'The Ninth'));
    writeFileSync(ep, '');
    const from = await mark(s.server);
    const calls = s.server.calls.length;
    const result = await target.deliver(scanItem({ folder: season, files: [ep], updateType: 'Created' }));
    const seasonItem = s.server.model.byPath(season)!;
    assert.deepEqual(s.server.itemRefreshes.at(-1), {
      id: seasonItem.Id,
      query: { MetadataRefreshMode: 'Default', ImageRefreshMode: 'Default', ReplaceAllMetadata: 'false', ReplaceAllImages: 'false' },
    });
    const { detail, items } = await afterStep(result);
    assert.match(detail, /confirmed: 1 item/);
    assert.deepEqual(items, [{ key: s.server.model.byPath(ep)!.Id, type: 'episode', title: 'The Ninth', show: showName(2), season: 2, episode: 9 }]);
    // The season and its 9 episodes, against a library of 114 items: never Media/Updated, never /Library/Refresh.
    assert.equal(await touchedSince(s.server, from), 10);
    assert.deepEqual(scanRoutes({ ...s.server, calls: s.server.calls.slice(calls) } as FakeMediaServer), ['/Items/{id}/Refresh']);
    // Looking is listings only, never a recursive one.
    assert.ok(s.server.calls.slice(calls).every((c) => !/Recursive=true/i.test(c.path)));
  });

  test('a new season refreshes its series; a new series and a new movie refresh only their own library root', async () => {
    const target = s.target();
    const season = join(s.tv, showName(3), 'Season 03');
    mkdirSync(season);
    writeFileSync(join(season, episodeName(3, 3, 1, 'Premiere')), '');
    let from = await mark(s.server);
    let got = await afterStep(await target.deliver(scanItem({ folder: season, files: [join(season, episodeName(3, 3, 1, 'Premiere'))], updateType: 'Created' })));
    assert.equal(s.server.itemRefreshes.at(-1)!.id, s.server.model.byPath(join(s.tv, showName(3)))!.Id);
    assert.deepEqual(got.items?.map((i) => [i.show, i.season, i.episode, i.title]), [[showName(3), 3, 1, 'Premiere']]);
    // The series: 1 + 3 seasons + 17 episodes.
    assert.equal(await touchedSince(s.server, from), 21);

    const show = join(s.tv, 'Brand New (2024)', 'Season 01');
    mkdirSync(show, { recursive: true });
    writeFileSync(join(show, 'Brand New - S01E01 - Pilot.mkv'), '');
    got = await afterStep(await target.deliver(scanItem({ folder: show, files: [join(show, 'Brand New - S01E01 - Pilot.mkv')], updateType: 'Created' })));
    const shows = s.server.model.libraries.find((l) => l.Name === 'Shows')!;
    assert.equal(s.server.itemRefreshes.at(-1)!.id, shows.ItemId, "the library's own item, from VirtualFolders");
    assert.deepEqual(got.items?.map((i) => `${i.show} S${i.season}E${i.episode} ${i.title}`), ['Brand New S1E1 Pilot']);

    const film = join(s.movies, 'Dune (2021)');
    mkdirSync(film);
    writeFileSync(join(film, 'Dune (2021).mkv'), '');
    from = await mark(s.server);
    got = await afterStep(await target.deliver(scanItem({ folder: film, files: [join(film, 'Dune (2021).mkv')], updateType: 'Created' })));
    assert.equal(s.server.itemRefreshes.at(-1)!.id, s.server.model.libraries.find((l) => l.Name === 'Movies')!.ItemId);
    assert.deepEqual(got.items, [{ key: s.server.model.byPath(join(film, 'Dune (2021).mkv'))!.Id, type: 'movie', title: 'Dune', year: 2021 }]);
    // The Movies library (21 movies), not the shows.
    assert.equal(await touchedSince(s.server, from), 21);
  });

  test('a deleted episode refreshes its season (the nearest ancestor that exists), and the look confirms it is gone', async () => {
    const target = s.target();
    const season = join(s.tv, showName(4), 'Season 01');
    const ep = join(season, episodeName(4, 1, 3));
    assert.ok(s.server.model.byPath(ep));
    unlinkSync(ep);
    const got = await afterStep(await target.deliver(scanItem({ folder: season, files: [ep], updateType: 'Deleted' })));
    assert.equal(s.server.itemRefreshes.at(-1)!.id, s.server.model.byPath(season)!.Id);
    assert.match(got.detail, /confirmed \(gone\)/);
    assert.equal(s.server.model.byPath(ep), undefined);
    assert.deepEqual(got.items, []);
  });

  test('the walk lists one level at a time and remembers it: a second episode of the same season lists only the season', async () => {
    const target = s.target();
    const season = join(s.tv, showName(5), 'Season 01');
    /** The listings made before the refresh was sent (the walk; the look comes after it). */
    const walk = (from: number) => {
      const calls = s.server.calls.slice(from);
      return calls.slice(0, calls.findIndex((c) => /\/Refresh$/.test(c.path))).filter((c) => c.path === '/Items').length;
    };
    writeFileSync(join(season, episodeName(5, 1, 20)), '');
    let from = s.server.calls.length;
    await afterStep(await target.deliver(scanItem({ folder: season, files: [join(season, episodeName(5, 1, 20))], updateType: 'Created' })));
    // The library, the show, the season: one listing each.
    assert.equal(walk(from), 3);
    writeFileSync(join(season, episodeName(5, 1, 21)), '');
    from = s.server.calls.length;
    await afterStep(await target.deliver(scanItem({ folder: season, files: [join(season, episodeName(5, 1, 21))], updateType: 'Created' })));
    // The season was refreshed, so only its own level is read again.
    assert.equal(walk(from), 1);
  });

  test('a folder scan of a season it has names what the refresh added, not what was there', async () => {
    const target = s.target();
    const season = join(s.tv, showName(6), 'Season 02');
    for (const e of [31, 32]) writeFileSync(join(season, episodeName(6, 2, e)), '');
    const got = await afterStep(await target.deliver(scanItem({ folder: season })));
    assert.equal(s.server.itemRefreshes.at(-1)!.id, s.server.model.byPath(season)!.Id);
    assert.deepEqual(got.items?.map((i) => i.episode).sort(), [31, 32]);
  });

  test('a file the server never shows is "completion unknown" after the bound, and the delivery itself was done at once', async () => {
    const target = mediaBrowserTarget('jellyfin', s.server.url, 'key', silent, undefined, 'jellyfin', undefined, undefined, { look: { firstMs: 5, maxWaitMs: 10, boundMs: 100 } });
    const season = join(s.tv, showName(6), 'Season 01');
    const result = await target.deliver(scanItem({ folder: season, files: [join(season, 'not-a-video.txt')], updateType: 'Created' }));
    assert.equal(result.outcome, 'done');
    const got = await afterStep(result);
    assert.match(got.detail, /completion unknown/);
    assert.equal(got.items, undefined);
  });

  test('a backlog in item mode: the walks share what they read (the library is listed once), each scan refreshes its own season', async () => {
    const scans = [3, 4, 5, 6].map((n) => {
      const season = join(s.tv, showName(n), 'Season 02');
      const file = join(season, episodeName(n, 2, 50));
      writeFileSync(file, '');
      return scanItem({ id: n, folder: season, files: [file], updateType: 'Created' });
    });
    // A target that has read nothing yet.
    const fresh = s.target();
    const lib = s.server.model.libraries[0]!.ItemId;
    const from = s.server.calls.length;
    const results = await fresh.deliverMany(scans);
    assert.deepEqual(results.map((r) => r.outcome), ['done', 'done', 'done', 'done']);
    assert.equal(s.server.calls.slice(from).filter((c) => c.path === '/Items' && c.query.includes(`ParentId=${lib}`)).length, 1, 'one listing of the library for four scans');
    assert.deepEqual(s.server.itemRefreshes.slice(-4).map((r) => r.id), [3, 4, 5, 6].map((n) => s.server.model.byPath(join(s.tv, showName(n), 'Season 02'))!.Id));
  });

  test('looking never holds up the next delivery: a scan is sent while the one before it is still being looked for', async () => {
    const target = mediaBrowserTarget('jellyfin', s.server.url, 'key', silent, undefined, 'jellyfin', undefined, undefined, { look: { firstMs: 20, maxWaitMs: 50, boundMs: 2_000 } });
    let lookEnded: number | undefined;
    // The target as the scheduler sees it, noting when the first scan's look ended.
    const watched: Target = {
      name: 'jellyfin',
      available: () => target.available(),
      deliver: async (item) => {
        const r = await target.deliver(item);
        if (r.outcome !== 'done' || !r.after || item.files.some((f) => !f.endsWith('.txt'))) return r;
        const after = r.after;
        return { ...r, after: async (signal) => after(signal).finally(() => (lookEnded = Date.now())) };
      },
    };
    const queue = runQueue([watched]);
    try {
      const seasonA = join(s.tv, showName(2), 'Season 01');
      queue.enqueue(seasonA, [join(seasonA, 'never-an-item.txt')]);
      await waitFor(() => s.server.itemRefreshes.some((r) => r.id === s.server.model.byPath(seasonA)!.Id), 10_000, 'the first refresh');
      const seasonB = join(s.tv, showName(3), 'Season 01');
      const ep = join(seasonB, episodeName(3, 1, 60));
      writeFileSync(ep, '');
      queue.enqueue(seasonB, [ep]);
      const refreshes = s.server.itemRefreshes.length;
      await waitFor(() => s.server.itemRefreshes.length > refreshes, 10_000, 'the second refresh');
      assert.equal(lookEnded, undefined, 'the first look was still going when the second scan was sent');
      await queue.scheduler.afterStepsSettled();
      assert.ok(lookEnded, 'and it ended within its bound');
    } finally {
      await queue.close();
    }
  });

  test('SCAN_MODE media-updated on 10.11 costs the whole library (the reason auto does not pick it)', async () => {
    const target = s.target('media-updated');
    const season = join(s.tv, showName(1), 'Season 02');
    writeFileSync(join(season, episodeName(1, 2, 30)), '');
    const from = await mark(s.server);
    const result = await target.deliver(scanItem({ folder: season, files: [join(season, episodeName(1, 2, 30))], updateType: 'Created' }));
    assert.deepEqual(result, { outcome: 'done', detail: '1 path(s) reported as Created' });
    assert.equal(await touchedSince(s.server, from), s.server.model.descendants(s.server.model.libraries[0]!.ItemId).length);
    assert.ok((await touchedSince(s.server, from)) > 100);
  });

  test('the refresh action keeps refreshing the items at the files (FullRefresh), in item mode too', async () => {
    const target = s.target();
    const ep = join(s.tv, showName(2), 'Season 01', episodeName(2, 1, 1));
    const result = await target.deliver(scanItem({ folder: join(s.tv, showName(2), 'Season 01'), files: [ep], action: 'refresh' }));
    assert.deepEqual(result, { outcome: 'done', detail: 'metadata refresh (FullRefresh) of 1 item(s)' });
    assert.equal(s.server.itemRefreshes.at(-1)!.id, s.server.model.byPath(ep)!.Id);
    assert.equal(s.server.itemRefreshes.at(-1)!.query.MetadataRefreshMode, 'FullRefresh');
  });
});

describe('Jellyfin 10.11 with the TargetedScan plugin: auto is plugin mode', () => {
  let s: Setup;
  before(async () => {
    s = await setup({ version: '10.11.3', plugin: true });
  });
  after(() => teardown(s));

  test('a new episode goes in POST /Library/ScanPaths, is an item at once, and is named', async () => {
    const target = s.target();
    const season = join(s.tv, showName(1), 'Season 01');
    const ep = join(season, episodeName(1, 1, 9, 'Plugged'));
    writeFileSync(ep, '');
    const from = await mark(s.server);
    const calls = s.server.calls.length;
    const result = await target.deliver(scanItem({ folder: season, files: [ep], updateType: 'Created' }));
    assert.equal(target.scanMode()?.mode, 'plugin');
    assert.match(target.scanMode()!.why, /TargetedScan plugin 1\.9\.0\.0 active/);
    assert.ok(s.server.model.byPath(ep), 'made before the answer');
    const got = await afterStep(result);
    assert.match(got.detail, /TargetedScan: 1 created/);
    assert.deepEqual(got.items?.map((i) => [i.type, i.show, i.season, i.episode, i.title]), [['episode', showName(1), 1, 9, 'Plugged']]);
    assert.deepEqual(scanRoutes({ ...s.server, calls: s.server.calls.slice(calls) } as FakeMediaServer), ['/Library/ScanPaths']);
    // The episode, then the plugin's queued refreshes of it, its season and its series (the series' subtree).
    const touched = await touchedSince(s.server, from);
    assert.ok(touched < s.server.model.size / 2, `${touched} of ${s.server.model.size}`);
  });

  test('a backlog shares one ScanPaths request; a folder-only scan goes as the folder', async () => {
    const target = s.target();
    const a = join(s.tv, showName(2), 'Season 01', episodeName(2, 1, 10));
    const b = join(s.tv, showName(3), 'Season 02', episodeName(3, 2, 10));
    const film = join(s.movies, 'Heat (1995)');
    for (const f of [a, b]) writeFileSync(f, '');
    mkdirSync(film);
    writeFileSync(join(film, 'Heat (1995).mkv'), '');
    const before = s.server.calls.filter((c) => c.path === '/Library/ScanPaths').length;
    const results = await target.deliverMany([
      scanItem({ id: 1, folder: join(s.tv, showName(2), 'Season 01'), files: [a], updateType: 'Created' }),
      scanItem({ id: 2, folder: join(s.tv, showName(3), 'Season 02'), files: [b], updateType: 'Created' }),
      scanItem({ id: 3, folder: film }),
    ]);
    assert.deepEqual(results.map((r) => r.outcome), ['done', 'done', 'done']);
    assert.equal(s.server.calls.filter((c) => c.path === '/Library/ScanPaths').length - before, 1);
    const movie = s.server.model.byPath(join(film, 'Heat (1995).mkv'));
    assert.equal(movie?.Type, 'Movie');
    assert.deepEqual((await afterStep(results[2]!)).items, [{ key: movie.Id, type: 'movie', title: 'Heat', year: 1995 }]);
  });

  test('PathNotFound is retried; a deleted path the server no longer has is done', async () => {
    const target = s.target();
    const season = join(s.tv, showName(4), 'Season 01');
    const missing = join(season, episodeName(4, 1, 40));
    const result = await target.deliver(scanItem({ folder: season, files: [missing], updateType: 'Created' }));
    assert.equal(result.outcome, 'retry');
    assert.match(result.outcome === 'retry' ? result.error : '', /cannot see .* yet \(TargetedScan answered PathNotFound\)/);
    const existing = join(season, episodeName(4, 1, 2));
    unlinkSync(existing);
    const removed = await target.deliver(scanItem({ folder: season, files: [existing], updateType: 'Deleted' }));
    assert.equal(removed.outcome, 'done');
    assert.equal(s.server.model.byPath(existing), undefined, 'the plugin removed the stale item');
    assert.equal((await target.deliver(scanItem({ folder: season, files: [existing], updateType: 'Deleted' }))).outcome, 'done');
  });
});

describe('ParentNotFound falls back to item mode', () => {
  let s: Setup;
  before(async () => {
    // A library added but never scanned: its folder is no item, so the plugin finds no parent.
    s = await setup({ version: '10.11.0', plugin: true, scanTv: false });
  });
  after(() => teardown(s));

  test('the path is refreshed through its library item instead', async () => {
    const target = s.target();
    const season = join(s.tv, showName(1), 'Season 01');
    const ep = join(season, episodeName(1, 1, 1));
    const result = await target.deliver(scanItem({ folder: season, files: [ep], updateType: 'Created' }));
    const got = await afterStep(result);
    assert.match(got.detail, /item refresh of library Shows/);
    assert.deepEqual(got.items?.map((i) => [i.show, i.season, i.episode]), [[showName(1), 1, 1]]);
    assert.equal(s.server.itemRefreshes.at(-1)!.id, s.server.model.libraries[0]!.ItemId);
  });
});

describe('Jellyfin 10.10 and Emby: auto is media-updated, which scans the path only', () => {
  const cases = [
    { product: 'jellyfin' as const, version: '10.10.7', prefix: '' },
    { product: 'emby' as const, version: '4.8.10.0', prefix: '/emby' },
  ];
  for (const c of cases) {
    test(`${c.product} ${c.version}`, async () => {
      const s = await setup({ product: c.product, version: c.version });
      try {
        const target = s.target();
        const season = join(s.tv, showName(1), 'Season 01');
        const ep = join(season, episodeName(1, 1, 9));
        writeFileSync(ep, '');
        const from = await mark(s.server);
        const result = await target.deliver(scanItem({ folder: season, files: [ep], updateType: 'Created' }));
        assert.deepEqual(result, { outcome: 'done', detail: '1 path(s) reported as Created' });
        assert.equal(target.scanMode()?.mode, 'media-updated');
        assert.deepEqual(s.server.updates.map((u) => [u.prefix, u.path]), [[c.prefix, ep]]);
        // Its season: the season item and its 9 episodes.
        assert.equal(await touchedSince(s.server, from), 10);
        assert.ok(s.server.model.byPath(ep));
      } finally {
        await teardown(s);
      }
    });
  }

  test('Emby with the plugin uses it (Emby lists plugins without a Status)', async () => {
    const s = await setup({ product: 'emby', version: '4.8.10.0', plugin: true });
    try {
      const target = s.target();
      const season = join(s.tv, showName(2), 'Season 01');
      writeFileSync(join(season, episodeName(2, 1, 9)), '');
      const result = await target.deliver(scanItem({ folder: season, files: [join(season, episodeName(2, 1, 9))], updateType: 'Created' }));
      assert.equal(result.outcome, 'done');
      assert.equal(target.scanMode()?.mode, 'plugin');
      assert.ok(s.server.calls.some((c) => c.path === '/emby/Library/ScanPaths' && c.status === 200));
    } finally {
      await teardown(s);
    }
  });
});

describe('auto asks again after the server was unreachable', () => {
  let s: Setup | undefined;
  afterEach(() => teardown(s));

  test('a server that comes back with the plugin installed is then sent scans through it', async () => {
    s = await setup({ version: '10.11.3' });
    const target = s.target();
    const season = join(s.tv, showName(1), 'Season 01');
    const ep = join(season, episodeName(1, 1, 9));
    writeFileSync(ep, '');
    await target.deliver(scanItem({ folder: season, files: [ep], updateType: 'Created' }));
    assert.equal(target.scanMode()?.mode, 'item');
    await s.server.setMode('down');
    const down = await target.deliver(scanItem({ folder: season, files: [ep], updateType: 'Created' }));
    assert.equal(down.outcome, 'retry');
    s.server.plugin = { status: 'Active' };
    await s.server.setMode('up');
    await target.deliver(scanItem({ folder: season, files: [ep], updateType: 'Created' }));
    assert.equal(target.scanMode()?.mode, 'plugin');
    assert.equal(s.server.calls.filter((c) => c.path === '/Plugins').length, 2);
  });

  test('a plugin removed since (its route answers 404): the scan is retried, and the next delivery asks again and uses item mode', async () => {
    s = await setup({ version: '10.11.3', plugin: true });
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const target = mediaBrowserTarget('jellyfin', s.server.url, 'key', log, undefined, 'jellyfin', undefined, undefined, { look: LOOK });
    const season = join(s.tv, showName(1), 'Season 01');
    const ep = join(season, episodeName(1, 1, 9));
    writeFileSync(ep, '');
    assert.equal((await target.deliver(scanItem({ folder: season, files: [ep], updateType: 'Created' }))).outcome, 'done');
    await target.available();
    assert.equal(target.scanMode()?.mode, 'plugin');
    s.server.plugin = undefined;
    const gone = await target.deliver(scanItem({ folder: season, files: [ep] }));
    assert.equal(gone.outcome, 'retry');
    assert.match(gone.outcome === 'retry' ? gone.error : '', /ScanPaths\) answered HTTP 404|targeted scan answered HTTP 404/);
    assert.equal((await target.deliver(scanItem({ folder: season, files: [ep] }))).outcome, 'done');
    assert.equal(target.scanMode()?.mode, 'item');
    // Each choice is logged once: plugin, then item.
    assert.deepEqual(lines.filter((l) => l.scanMode).map((l) => l.scanMode), ['plugin', 'item']);
  });

  test('a disabled plugin is not used; SCAN_MODE set by hand asks nothing', async () => {
    s = await setup({ version: '10.11.3', plugin: true });
    s.server.plugin = { status: 'Disabled' };
    const target = s.target();
    const season = join(s.tv, showName(1), 'Season 01');
    writeFileSync(join(season, episodeName(1, 1, 9)), '');
    await target.deliver(scanItem({ folder: season, files: [join(season, episodeName(1, 1, 9))], updateType: 'Created' }));
    assert.equal(target.scanMode()?.mode, 'item');
    assert.match(target.scanMode()!.why, /TargetedScan plugin is Disabled/);
    const fixed = s.target('item');
    const calls = s.server.calls.length;
    await fixed.deliver(scanItem({ folder: season, files: [join(season, episodeName(1, 1, 9))] }));
    assert.ok(!s.server.calls.slice(calls).some((c) => c.path === '/System/Info' || c.path === '/Plugins'));
    assert.deepEqual(fixed.scanMode(), { mode: 'item', why: 'SCAN_MODE is "item"' });
  });
});

describe('the fake models the server', () => {
  let s: Setup;
  before(async () => {
    s = await setup({ version: '10.11.3' });
  });
  after(() => teardown(s));

  test('GET /Items returns Path only when Fields asks for it, and lists one level without Recursive', async () => {
    const lib = s.server.model.libraries[0]!;
    const get = async (q: string) => (await (await fetch(`${s.server.url}/Items?${q}`, { headers: { authorization: 'MediaBrowser Token="key"' } })).json()) as { Items: Array<Record<string, unknown>> };
    const bare = await get(`ParentId=${lib.ItemId}`);
    assert.equal(bare.Items.length, SIZE.shows);
    assert.ok(bare.Items.every((i) => !('Path' in i) && !('ParentId' in i)));
    const withPath = await get(`ParentId=${lib.ItemId}&Fields=Path`);
    assert.ok(withPath.Items.every((i) => typeof i.Path === 'string'));
    assert.equal((await get(`ParentId=${lib.ItemId}&Recursive=true`)).Items.length, SIZE.shows * (1 + SIZE.seasons * (1 + SIZE.episodes)));
    // Jellyfin 12 takes only the Authorization header.
    assert.equal((await fetch(`${s.server.url}/Items?ParentId=${lib.ItemId}`, { headers: { 'x-emby-token': 'key' } })).status, 401);
    // Without the plugin there are no plugin routes.
    assert.equal((await fetch(`${s.server.url}/Library/ScanPaths`, { method: 'POST', headers: { authorization: 'MediaBrowser Token="key"', 'content-type': 'application/json' }, body: '{"Paths":["/x"]}' })).status, 404);
  });

  test("/socket: LibraryChanged goes to a user's session, never to the API key's (why the relay looks instead)", async () => {
    s.server.userTokens.add('user-token');
    const { default: WebSocket } = await import('ws');
    const open = (token: string) =>
      new Promise<{ ws: InstanceType<typeof WebSocket>; messages: string[] }>((resolve, reject) => {
        const ws = new WebSocket(`${s.server.url.replace('http', 'ws')}/socket?api_key=${token}`);
        const messages: string[] = [];
        ws.on('message', (m) => messages.push(String(m)));
        ws.on('open', () => resolve({ ws, messages }));
        ws.on('error', reject);
      });
    const [key, user] = await Promise.all([open('key'), open('user-token')]);
    try {
      const season = join(s.tv, showName(1), 'Season 02');
      writeFileSync(join(season, episodeName(1, 2, 70)), '');
      await afterStep(await s.target('item').deliver(scanItem({ folder: season, files: [join(season, episodeName(1, 2, 70))], updateType: 'Created' })));
      await waitFor(() => user.messages.some((m) => m.includes('LibraryChanged')), 5_000, "the user's LibraryChanged");
      const changed = JSON.parse(user.messages.find((m) => m.includes('LibraryChanged'))!);
      assert.deepEqual(changed.Data.ItemsAdded, [s.server.model.byPath(join(season, episodeName(1, 2, 70)))!.Id]);
      assert.deepEqual(key.messages.map((m) => JSON.parse(m).MessageType), ['ForceKeepAlive']);
    } finally {
      key.ws.close();
      user.ws.close();
    }
  });
});
