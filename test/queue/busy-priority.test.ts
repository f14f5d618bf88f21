import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { NormalizedScanRequest } from '../../src/core/scan.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { Scheduler } from '../../src/queue/scheduler.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { FakePlex } from '../fakes/plex.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { makePlexTarget, testConfig } from '../helpers/plex-target.ts';
import { waitFor } from '../helpers/relay.ts';

// PLEX_WAIT_FOR_EXTERNAL_SCANNERS while Plex runs its own library scan: six scans come due meanwhile, in an
// order that is not their priority. plex_autoscan's PriorityLock (threads.py:13-41) hands the lock on to the
// waiter with the lowest (priority, time it began waiting): the scans go in priority order, oldest first within
// one priority, whatever order they came due in. Here the wait holds Plex's turn, not one scan.

let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

const SCANS: Array<[string, number]> = [
  ['/data/TV/TV A', 2],
  ['/data/Movies/Movies A', 1],
  ['/data/Movies/Music', 0],
  ['/data/TV/TV B', 2],
  ['/data/Movies/Movies B', 1],
  ['/data/Movies/Music 2', 0],
];
const WANT = ['/data/Movies/Music', '/data/Movies/Music 2', '/data/Movies/Movies A', '/data/Movies/Movies B', '/data/TV/TV A', '/data/TV/TV B'];

const request = ([folder, priority]: [string, number]): NormalizedScanRequest => ({ folder, files: [], source: 'Manual', event: 'Manual', updateType: 'Modified', priority }) as NormalizedScanRequest;

async function run(open: () => Promise<{ store: QueueBackend; done: () => Promise<void> }>): Promise<string[]> {
  const plex = await new FakePlex().start();
  // Plex's own library scan, running before any scan of the relay's is due.
  plex.activities.push({ uuid: 'own-scan', type: 'library.update.section', title: 'Scanning Movies', sectionId: '1', progress: 10 });
  const config = testConfig({ PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_FILE_CHECKS_ENABLED: false, PLEX_WAIT_FOR_EXTERNAL_SCANNERS: true, PLEX_ANALYZE_TYPE: 'off' });
  // Each scan waiting for Plex is looked at again 1.5 s later: long enough that six of them each have their own time.
  const target = makePlexTarget(plex, config, { notifications: false, timings: { externalScanPollMs: 1500, externalScanStreamPollMs: 1500 } });
  const { store, done } = await open();
  const scheduler = new Scheduler(store, [target], silentLogger(), { retryBaseMs: 50, retryMaxMs: 200 });
  await scheduler.start();
  try {
    // They come due one after the other, each while Plex scans.
    for (const scan of SCANS) {
      await store.enqueueMany([request(scan)], { delayMs: 0, maxMs: 0 });
      scheduler.poke();
      await waitFor(async () => (await store.view.listOpen()).find((e) => e.folder === scan[0])?.status === 'active', 15_000, `${scan[0]} due`);
    }
    // Plex was asked at least once more after the last came due, then its own scan ends.
    const asked = plex.callsTo('GET', /^\/activities$/).length;
    await waitFor(() => plex.callsTo('GET', /^\/activities$/).length > asked, 15_000, 'another look at /activities');
    assert.deepEqual(plex.refreshes(), [], 'nothing sent while Plex scans');
    plex.activities = [];
    await waitFor(() => plex.refreshes().length === 6, 30_000, 'six scans sent');
    return plex.refreshes().map((r) => r.path);
  } finally {
    await scheduler.stop();
    await done();
    await plex.stop();
  }
}

describe('PLEX_WAIT_FOR_EXTERNAL_SCANNERS: the order of scans that waited for Plex', () => {
  test('SQLite: priority order, oldest first within one priority', async () => {
    const order = await run(async () => {
      const store = new QueueStore(':memory:');
      return { store, done: async () => store.close() };
    });
    assert.deepEqual(order, WANT);
  });

  test('PostgreSQL: the same order, with the turn shared by relays', async () => {
    const order = await run(async () => {
      const store = await PgQueueStore.open({ url: await cluster.createDatabase(), relayId: 'relay-a', leaseMs: 3000, pollMs: 500 });
      return { store, done: () => store.close() };
    });
    assert.deepEqual(order, WANT);
  });
});
