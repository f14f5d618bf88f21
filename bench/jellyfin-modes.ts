/**
 * Issue 50: what one scan costs a Jellyfin or Emby server in each scan mode, for a library of about 5,000 items
 * (`BENCH_JF_SHOWS` (100) shows of 4 seasons of 11 episodes, and `BENCH_JF_MOVIES` (100) movies: 5,000 items).
 * The fake server (test/fakes/jellyfin.ts) models it over a real directory tree and counts the items each call
 * touches: read again from disk, made or dropped. Five scans per set-up: a new episode in an existing season, a new
 * season, a new series, a new movie and a deleted episode; each through the real MediaBrowserTarget, its after-step
 * (the look that confirms it) included. Per scan: items touched, items the relay's listings read, requests, and the
 * time until the look confirmed it (the fake's refresh queue runs 20 ms after a request).
 * Run on its own: `node --import tsx bench/jellyfin-modes.ts`.
 */
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asOutcome } from '../src/core/scan.ts';
import { silentLogger } from '../src/core/logger.ts';
import { mediaBrowserTarget } from '../src/targets/media-browser/target.ts';
import type { ScanModeSetting } from '../src/targets/media-browser/scan-mode.ts';
import { FakeMediaServer } from '../test/fakes/jellyfin.ts';
import { episodeName, showName, writeMediaTree } from '../test/fakes/jellyfin-library.ts';
import { scanItem } from '../test/helpers/plex-target.ts';
import { tempDir } from '../test/helpers/relay.ts';
import { report } from './lib.ts';

const SHOWS = Number(process.env.BENCH_JF_SHOWS ?? 100);
const MOVIES = Number(process.env.BENCH_JF_MOVIES ?? 100);

const SETUPS: Array<{ name: string; product: 'jellyfin' | 'emby'; version: string; plugin: boolean; mode?: ScanModeSetting }> = [
  { name: 'Jellyfin 10.11, SCAN_MODE media-updated', product: 'jellyfin', version: '10.11.3', plugin: false, mode: 'media-updated' },
  { name: 'Jellyfin 10.11, auto (item)', product: 'jellyfin', version: '10.11.3', plugin: false },
  { name: 'Jellyfin 10.11 + TargetedScan, auto (plugin)', product: 'jellyfin', version: '10.11.3', plugin: true },
  { name: 'Jellyfin 10.10, auto (media-updated)', product: 'jellyfin', version: '10.10.7', plugin: false },
  { name: 'Emby 4.8, auto (media-updated)', product: 'emby', version: '4.8.10.0', plugin: false },
];

async function run(setup: (typeof SETUPS)[number]): Promise<Array<Record<string, unknown>>> {
  const root = tempDir('jf-bench-');
  const { tv, movies } = writeMediaTree(root, { shows: SHOWS, seasons: 4, episodes: 11, movies: MOVIES });
  const server = await new FakeMediaServer({ apiKey: 'key', version: setup.version, plugin: setup.plugin }).start();
  server.model.addLibrary('Shows', 'tvshows', [tv]);
  server.model.addLibrary('Movies', 'movies', [movies]);
  const library = server.model.size;
  const target = mediaBrowserTarget(setup.product, server.url, 'key', silentLogger(), undefined, setup.product, undefined, undefined, {
    ...(setup.mode ? { scanMode: setup.mode } : {}),
    look: { firstMs: 20, maxWaitMs: 200, boundMs: 30_000 },
  });
  const show = Math.ceil(SHOWS / 2);
  const scans: Array<{ what: string; make: () => { folder: string; file: string; deleted?: boolean } }> = [
    { what: 'new episode', make: () => ({ folder: join(tv, showName(show), 'Season 02'), file: join(tv, showName(show), 'Season 02', episodeName(show, 2, 12)) }) },
    {
      what: 'new season',
      make: () => {
        mkdirSync(join(tv, showName(show), 'Season 05'));
        return { folder: join(tv, showName(show), 'Season 05'), file: join(tv, showName(show), 'Season 05', episodeName(show, 5, 1)) };
      },
    },
    {
      what: 'new series',
      make: () => {
        mkdirSync(join(tv, 'Brand New', 'Season 01'), { recursive: true });
        return { folder: join(tv, 'Brand New', 'Season 01'), file: join(tv, 'Brand New', 'Season 01', 'Brand New - S01E01 - Pilot.mkv') };
      },
    },
    {
      what: 'new movie',
      make: () => {
        mkdirSync(join(movies, 'Dune (2021)'));
        return { folder: join(movies, 'Dune (2021)'), file: join(movies, 'Dune (2021)', 'Dune (2021).mkv') };
      },
    },
    {
      what: 'deleted episode',
      make: () => {
        const file = join(tv, showName(show), 'Season 01', episodeName(show, 1, 3));
        unlinkSync(file);
        return { folder: join(tv, showName(show), 'Season 01'), file, deleted: true };
      },
    },
  ];
  const rows: Array<Record<string, unknown>> = [];
  try {
    for (const scan of scans) {
      const { folder, file, deleted } = scan.make();
      if (!deleted) writeFileSync(file, '');
      await server.idle();
      const touches = server.model.touches.length;
      const listed = server.model.listed;
      const calls = server.calls.length;
      const started = performance.now();
      const result = await target.deliver(scanItem({ folder, files: [file], updateType: deleted ? 'Deleted' : 'Created' }));
      let confirmed = 'no look';
      if (result.outcome === 'done' && result.after) {
        const out = asOutcome(await result.after(new AbortController().signal));
        confirmed = /completion unknown/.test(out.detail) ? 'unknown' : `${Math.round(performance.now() - started)} ms`;
      }
      await server.idle();
      rows.push({
        setup: setup.name,
        scan: scan.what,
        outcome: result.outcome,
        'items touched': server.model.touches.slice(touches).reduce((n, t) => n + t.items, 0),
        library,
        'items listed': server.model.listed - listed,
        requests: server.calls.length - calls,
        confirmed,
      });
    }
  } finally {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

export async function benchJellyfinModes(): Promise<Record<string, unknown>> {
  const rows: Array<Record<string, unknown>> = [];
  for (const setup of SETUPS) rows.push(...(await run(setup)));
  report('jellyfin-modes', rows, { shows: SHOWS, movies: MOVIES });
  return { rows: rows.length };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchJellyfinModes();
