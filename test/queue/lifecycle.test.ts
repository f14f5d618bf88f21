import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scanRequestSchema, type ScanRequest, type Target } from '../../src/core/scan.ts';
import { bothStores } from '../helpers/both-stores.ts';

// The queue's lifecycle after enqueue (queue/lifecycle.ts) is one set of rules over two dialects: each rule here
// holds on both stores alike. The first two tests failed on PostgreSQL before the rules were written once (issue 49).

const { stores, cluster: pgCluster } = bothStores();
const req = (folder: string, extra: Partial<ScanRequest> = {}) => scanRequestSchema.parse({ folder, source: 'Radarr', event: 'Download', ...extra });
const removal = (folder: string) => req(folder, { event: 'MovieDelete', updateType: 'Deleted', removal: true });
const timing = { delayMs: 10_000, maxMs: 30_000, roots: ['/data/Movies'] };

for (const [name, open] of stores) {
  describe(`the queue's lifecycle (${name})`, () => {
    test('"Scan now" on a removal scan held for the imports below it: it goes now, without waiting for them', async () => {
      const store = await open();
      await store.enqueueMany([req('/data/Movies/Heat (1995)')], timing, 0);
      const [root] = await store.enqueueMany([removal('/data/Movies')], timing, 1_000);
      // Due, but held while the import below it is open: activation puts it off.
      await store.activateDue(['plex'], 31_000 - 1);
      assert.equal((await store.view.get(root!.id))!.status, 'pending');
      assert.equal(await store.retryNow(root!.id, 2_000), true);
      assert.equal(await store.activateDue(['plex'], 2_000), 1);
      assert.equal((await store.view.get(root!.id))!.status, 'active');
      assert.deepEqual((await store.claimDeliveries(5, 2_001, 'plex')).map((c) => c.item.folder), ['/data/Movies']);
    });

    test('a target removed from the config while its delivery waits: the delivery fails with a reason naming it, and the scan ends', async () => {
      const store = await open();
      const [scan] = await store.enqueueMany([req('/data/Movies/Heat (1995)', { targets: ['plex', 'plex4k'] })], { delayMs: 0, maxMs: 0 }, 1_000);
      await store.activateDue(['plex', 'plex4k'], 1_000);
      const [claimed] = await store.claimDeliveries(1, 1_000, 'plex');
      await store.completeDelivery(claimed!.item.id, 'plex', { status: 'done' }, 1_500);
      // Restarted without plex4k.
      assert.equal(await store.failUnknownTargets(['plex'], 2_000), 1);
      const entry = (await store.view.get(scan!.id))!;
      assert.equal(entry.status, 'failed');
      const gone = entry.deliveries.find((d) => d.target === 'plex4k')!;
      assert.equal(gone.status, 'failed');
      assert.equal(gone.last_error, 'target plex4k is no longer configured');
      assert.equal(entry.deliveries.find((d) => d.target === 'plex')!.status, 'done');
    });

    test('a scan routed to a target removed from the config before it was due: that delivery fails, named; the others go', async () => {
      const store = await open();
      const [both, only] = await store.enqueueMany(
        [req('/data/Movies/Heat (1995)', { targets: ['plex', 'plex4k'] }), req('/data/Movies/Up (2009)', { targets: ['plex4k'] })],
        { delayMs: 0, maxMs: 0 },
        1_000,
      );
      assert.equal(await store.activateDue(['plex'], 1_000), 2);
      const a = (await store.view.get(both!.id))!;
      assert.equal(a.status, 'active');
      assert.deepEqual(
        a.deliveries.map((d) => [d.target, d.status, d.last_error]),
        [
          ['plex', 'waiting', null],
          ['plex4k', 'failed', 'target plex4k is no longer configured'],
        ],
      );
      // Its only target gone: it ends failed at once, for all to see, instead of waiting for ever.
      const b = (await store.view.get(only!.id))!;
      assert.equal(b.status, 'failed');
      assert.equal(b.deliveries[0]!.last_error, 'target plex4k is no longer configured');
      const [claimed] = await store.claimDeliveries(5, 1_000, 'plex');
      assert.equal(claimed!.item.id, both!.id);
      assert.equal((await store.completeDelivery(both!.id, 'plex', { status: 'done' }, 1_100)).scanFinished, 'failed');
    });

    test('an active scan left without deliveries keeps its route: it gets deliveries to its own targets, not every target', async () => {
      const store = await open();
      const [scan] = await store.enqueueMany([req('/data/Movies/Heat (1995)')], { delayMs: 0, maxMs: 0 }, 1_000);
      // Activated by a relay without targets (as before relays had a registry): active, with no delivery.
      await store.activateDue([], 1_000);
      assert.deepEqual((await store.view.get(scan!.id))!.deliveries, []);
      // Its route names plex alone (routeUnrouted at start).
      assert.equal(await store.routeUnrouted(() => ['plex'], ['plex', 'plex4k']), 1);
      assert.equal(await store.failUnknownTargets(['plex', 'plex4k'], 2_000), 0);
      assert.deepEqual((await store.view.get(scan!.id))!.deliveries.map((d) => [d.target, d.status]), [['plex', 'waiting']]);
    });

    test('cancel removes an open scan unless a delivery of it is being sent; prune keeps the newest finished', async () => {
      const store = await open();
      const [a, b] = await store.enqueueMany([req('/data/Movies/A'), req('/data/Movies/B')], { delayMs: 0, maxMs: 0 }, 1_000);
      await store.activateDue(['plex'], 1_000);
      await store.claimDeliveries(1, 1_000, 'plex');
      const sending = (await store.view.get(a!.id))!.deliveries[0]!.status === 'sending' ? a! : b!;
      const other = sending === a ? b! : a!;
      assert.equal(await store.cancel(sending.id), false);
      assert.equal(await store.cancel(other.id), true);
      assert.equal(await store.view.get(other.id), undefined);
      await store.completeDelivery(sending.id, 'plex', { status: 'done' }, 1_100);
      assert.equal(await store.cancel(sending.id), false);
      const [c] = await store.enqueueMany([req('/data/Movies/C')], { delayMs: 0, maxMs: 0 }, 2_000);
      await store.activateDue(['plex'], 2_000);
      await store.claimDeliveries(1, 2_000, 'plex');
      await store.completeDelivery(c!.id, 'plex', { status: 'failed', error: 'no' }, 2_100);
      assert.equal(await store.pruneHistory(1), 1);
      assert.deepEqual((await store.view.listHistory()).map((e) => e.id), [c!.id]);
      // A failed scan retried: active again, its failed delivery waiting and due now.
      assert.equal(await store.retryNow(c!.id, 3_000), true);
      const again = (await store.view.get(c!.id))!;
      assert.equal(again.status, 'active');
      assert.deepEqual(again.deliveries.map((d) => [d.status, d.next_at]), [['waiting', 3_000]]);
      assert.equal(await store.retryNow(999_999, 3_000), false);
    });
  });
}

describe('a shared queue (PostgreSQL): a target only another relay has is not "no longer configured"', () => {
  const target = (name: string): Target => ({ name, deliver: async () => ({ outcome: 'done' }), available: async () => ({ ok: true }) });
  test("relay A without jellyfin activates and restarts: jellyfin's deliveries wait for relay B, which has it", async () => {
    const openPg = stores.find(([name]) => name === 'PostgreSQL')![1];
    const a = await openPg('relay-a');
    const b = await openPg('relay-b', a.url);
    await b.shared!.join([target('jellyfin')]);
    await a.shared!.join([target('plex')]);
    const [scan] = await a.enqueueMany([req('/data/Movies/Heat (1995)', { targets: ['jellyfin', 'plex'] })], { delayMs: 0, maxMs: 0 }, Date.now());
    assert.equal(await a.activateDue(['plex'], Date.now()), 1);
    assert.equal(await a.failUnknownTargets(['plex']), 0);
    const entry = (await a.view.get(scan!.id))!;
    assert.deepEqual(entry.deliveries.map((d) => [d.target, d.status]).sort(), [['jellyfin', 'waiting'], ['plex', 'waiting']]);
  });
});

test('PostgreSQL: routing the unrouted scans at start reads their files on its own transaction, so a pool of one cannot deadlock', async () => {
  const { PgQueueStore } = await import('../../src/queue/pg/store.ts');
  const url = await pgCluster().createDatabase();
  const store = await PgQueueStore.open({ url, relayId: 'relay-a', poolSize: 1 });
  try {
    await store.enqueueMany([req('/data/Movies/Heat (1995)', { files: ['/data/Movies/Heat (1995)/Heat.mkv'] })], { delayMs: 0, maxMs: 0 }, 1_000);
    // Before: the sample read asked the pool for a second connection while the transaction held the only one.
    let stuck: NodeJS.Timeout | undefined;
    const routed = await Promise.race([
      store.routeUnrouted((scan) => (scan.files.length ? ['plex'] : []), ['plex']),
      new Promise<never>((_, reject) => (stuck = setTimeout(() => reject(new Error('routeUnrouted never ended: it waits for a second pooled connection')), 20_000))),
    ]).finally(() => clearTimeout(stuck));
    assert.equal(routed, 1);
  } finally {
    await store.close();
  }
});
