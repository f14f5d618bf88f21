import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.ts';
import { scanRequestSchema } from '../../src/core/scan.ts';
import { configIntake } from '../../src/queue/door.ts';
import { relayRoutes, routeRequest } from '../../src/queue/route.ts';
import { importAutoscanQueue } from '../../src/peers/autoscan/queue-db.ts';
import { importAutopulseQueue } from '../../src/peers/autopulse/queue-db.ts';
import { importPlexAutoscanQueue } from '../../src/peers/plex-autoscan/takeover.ts';
import { autopulseDb } from '../helpers/autopulse-db.ts';
import { autoscanDb } from '../helpers/autoscan-db.ts';
import { bothStores } from '../helpers/both-stores.ts';
import { tempDir } from '../helpers/relay.ts';

// Issue 49 item 2: a scan taken over from plex_autoscan, autoscan or autopulse is routed as a live request is (a
// second Plex's INCLUDE, a trigger's excludes), and every open scan names its targets: never NULL for "all".
// Before, the takeovers built their intake without the routing table, and a 4K Plex got every folder.

const { config } = parseConfig({
  SERVER_PASS: 'a-long-enough-secret-for-tests',
  TARGETS: { plex4k: { TYPE: 'plex', URL: 'http://4k', INCLUDE: ['2160p'] } },
  SERVER_AUTOPULSE_TRIGGERS: { sonarr: { TYPE: 'sonarr', EXCLUDE_TARGETS: ['plex4k'] } },
});
const HEAT_4K = '/data/Movies/Heat (1995) 2160p';
const MUSIC = '/data/Music/Artist/Album';

/** plex_autoscan's queue.db (its peewee model QueueItemModel). */
function plexAutoscanDb(file: string, paths: string[]): void {
  const db = new Database(file);
  db.exec(`CREATE TABLE "queueitemmodel" ("id" INTEGER NOT NULL PRIMARY KEY, "scan_path" VARCHAR(256) NOT NULL, "scan_for" VARCHAR(64) NOT NULL, "scan_section" INTEGER NOT NULL, "scan_type" VARCHAR(64) NOT NULL)`);
  const insert = db.prepare(`INSERT INTO queueitemmodel (scan_path, scan_for, scan_section, scan_type) VALUES (?, 'Manual', 1, 'Manual')`);
  for (const p of paths) insert.run(p);
  db.close();
}

const { stores } = bothStores();

for (const [name, open] of stores) {
  describe(`takeovers route as live requests do (${name})`, () => {
    const routesOf = async (store: Store) => Object.fromEntries((await store.view.listOpen()).map((e) => [e.folder, e.targets]));

    test("plex_autoscan's queue: the 4K Plex gets only what its INCLUDE takes", async () => {
      const store = await open();
      const file = join(tempDir(), 'queue.db');
      plexAutoscanDb(file, [HEAT_4K, MUSIC]);
      await importPlexAutoscanQueue({ file, config, intake: configIntake(store, config) });
      assert.deepEqual(await routesOf(store), { [HEAT_4K]: ['plex', 'plex4k'], [MUSIC]: ['plex'] });
    });

    test("autoscan's queue: the 4K Plex gets only what its INCLUDE takes", async () => {
      const store = await open();
      const file = join(tempDir(), 'autoscan.db');
      autoscanDb(file, [
        [HEAT_4K, 0, '2026-11-25 10:00:00+00:00'],
        [MUSIC, 0, '2026-11-25 10:01:00+00:00'],
      ]);
      await importAutoscanQueue({ file, config, intake: configIntake(store, config), priorityOf: (p) => p });
      assert.deepEqual(await routesOf(store), { [HEAT_4K]: ['plex', 'plex4k'], [MUSIC]: ['plex'] });
    });

    test("autopulse's queue: a row keeps its trigger's excludes and gets the targets' INCLUDE", async () => {
      const store = await open();
      const database = join(tempDir(), 'autopulse.db');
      autopulseDb(database, [
        { id: 'a', file_path: `${HEAT_4K}/heat.mkv`, event_source: 'sonarr' },
        { id: 'b', file_path: `${HEAT_4K}/heat.mkv`, event_source: 'manual' },
        { id: 'c', file_path: `${MUSIC}/01.flac`, event_source: 'manual' },
      ]);
      const targetNames = [...config.targets.keys()];
      await importAutopulseQueue({ database, config, targetNames, intake: configIntake(store, config) });
      const open2 = await store.view.listOpen();
      const routes = open2.map((e) => `${e.folder} ${e.targets!.join(',')}`).sort();
      // The sonarr trigger leaves plex4k out; the manual row is taken by both Plex; the music only by the first.
      assert.deepEqual(routes, [`${HEAT_4K} plex`, `${HEAT_4K} plex,plex4k`, `${MUSIC} plex`]);
      // Each keeps its trigger's name, as a live request of that trigger is titled (what /list's event_source reads).
      assert.deepEqual([...new Set(open2.map((e) => e.title))].sort(), ['autopulse trigger manual', 'autopulse trigger sonarr']);
    });

    test("autopulse's queue: a row keeps its can_process, so one due in 3 minutes is not sent in seconds", async () => {
      const store = await open();
      const database = join(tempDir(), 'autopulse.db');
      // autopulse writes can_process as a naive UTC time.
      const at = new Date(Date.now() + 180_000).toISOString().replace('T', ' ').replace('Z', '');
      autopulseDb(database, [{ id: 'later', file_path: `${MUSIC}/01.flac`, event_source: 'manual', can_process: at }]);
      await importAutopulseQueue({ database, config, targetNames: [...config.targets.keys()], intake: configIntake(store, config) });
      const [entry] = await store.view.listOpen();
      assert.ok(entry!.dueAt > Date.now() + 150_000, `due ${entry!.dueAt - Date.now()} ms from now`);
    });

    test('at start, open scans stored without a route (NULL) get the explicit list their paths route to', async () => {
      const store = await open();
      const req = (folder: string) => scanRequestSchema.parse({ folder, source: 'Manual' });
      // As the takeovers stored them before: no route.
      await store.enqueueMany([req(HEAT_4K), req(MUSIC)], { delayMs: 60_000, maxMs: 0 }, Date.now());
      assert.deepEqual(await routesOf(store), { [HEAT_4K]: undefined, [MUSIC]: undefined });
      const routes = relayRoutes(config);
      assert.equal(await store.routeUnrouted((s) => routeRequest(routes, s) ?? [], routes.map((r) => r.name)), 2);
      assert.deepEqual(await routesOf(store), { [HEAT_4K]: ['plex', 'plex4k'], [MUSIC]: ['plex'] });
      assert.equal(await store.routeUnrouted((s) => routeRequest(routes, s) ?? [], routes.map((r) => r.name)), 0);
    });
  });
}

type Store = Awaited<ReturnType<(typeof stores)[number][1]>>;
