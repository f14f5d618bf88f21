import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pino from 'pino';
import type { ScannedItem } from '../../src/core/events.ts';
import type { DeliveryResult, ScanItem, Target } from '../../src/core/scan.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { Scheduler } from '../../src/queue/scheduler.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { startPgCluster } from '../helpers/postgres.ts';
import type { Logger } from '../../src/core/logger.ts';
import { recordingLogger } from '../helpers/plex-target.ts';
import { waitFor } from '../helpers/relay.ts';

// The items a scan added (issue 40: `scanned` carries them) are looked up after the serial target's turn is let go:
// the server's next scan never waits for a lookup that only feeds a notification, and a failed lookup costs the
// items, never the event or the delivery.

const DUNE: ScannedItem = { key: '7', type: 'movie', title: 'Dune', year: 2021 };

/** The events people are told: a delivery whose after-steps still run is written too, marked, and told once they end. */
const toldOf = async (store: Pick<QueueBackend, 'outbox'>) => (await store.outbox.after(0, 100)).filter((e) => e.afterSteps !== 'running');

/** A serial target (Plex's shape): each delivery's after-steps end at once, and hand back `lookup` for the items. */
function serialTarget(lookup: (folder: string) => Promise<ScannedItem[]>): Target & { sent: string[] } {
  const sent: string[] = [];
  return {
    name: 'plex',
    serial: true,
    sent,
    async deliver(item: ScanItem): Promise<DeliveryResult> {
      sent.push(item.folder);
      return { outcome: 'done', detail: 'sent', after: async () => ({ detail: 'completed', items: () => lookup(item.folder) }) };
    },
    available: async () => ({ ok: true }),
  };
}

function queue(target: Target, scannedItems: boolean, log: Logger = pino({ level: 'silent' }), itemLookupMaxMs?: number) {
  const store = new QueueStore(':memory:');
  const scheduler = new Scheduler(store, [target], log, { retryBaseMs: 50, retryMaxMs: 200, scannedItems: () => scannedItems, ...(itemLookupMaxMs ? { itemLookupMaxMs } : {}) });
  scheduler.start();
  const enqueue = (folder: string) => {
    const [r] = store.enqueueMany([{ folder, files: [], source: 'Radarr', event: 'Download', updateType: 'Modified', priority: 0 }], { delayMs: 0, maxMs: 0 });
    scheduler.poke();
    return r!.id;
  };
  return { store, scheduler, enqueue, close: async () => (await scheduler.stop(), store.close()) };
}

describe('the items of a scanned event', () => {
  test("the next scan is sent while the previous scan's item lookup still runs; its event then carries the items", async () => {
    let answer!: (items: ScannedItem[]) => void;
    const pending = new Promise<ScannedItem[]>((r) => (answer = r));
    const target = serialTarget((folder) => (folder === '/data/Movies/Dune (2021)' ? pending : Promise.resolve([])));
    const q = queue(target, true);
    try {
      const dune = q.enqueue('/data/Movies/Dune (2021)');
      await waitFor(() => target.sent.length === 1, 10_000, 'Dune sent');
      q.enqueue('/data/Movies/Heat (1995)');
      // The lookup for Dune has not answered: Plex's turn is free all the same.
      await waitFor(() => target.sent.length === 2, 10_000, 'Heat sent while the lookup for Dune waits');
      assert.equal((await toldOf(q.store)).filter((e) => e.scan === dune).length, 0, 'Dune is not told before its items are known');
      answer([DUNE]);
      await waitFor(async () => (await toldOf(q.store)).some((e) => e.scan === dune), 10_000, 'Dune told');
      const events = await toldOf(q.store);
      const told = events.find((e) => e.scan === dune)!;
      assert.equal(told.kind, 'scanned');
      assert.deepEqual(told.items, [DUNE]);
      assert.equal(told.detail, 'completed');
      assert.equal(q.store.view.get(dune)!.deliveries[0]!.detail, 'completed');
    } finally {
      await q.close();
    }
  });

  test('a lookup that fails tells the scan without items, with one warning for a run of failures; the delivery stays done', async () => {
    const target = serialTarget(async () => {
      throw new Error('Plex item listing: 500');
    });
    const { log, lines } = recordingLogger();
    const q = queue(target, true, log);
    try {
      const id = q.enqueue('/data/Movies/Heat (1995)');
      await waitFor(async () => (await toldOf(q.store)).length === 1, 10_000, 'told');
      const [told] = await toldOf(q.store);
      assert.equal(told?.kind, 'scanned');
      assert.equal(told.items, undefined);
      assert.equal(q.store.view.get(id)!.deliveries[0]!.status, 'done');
      q.enqueue('/data/Movies/Dune (2021)');
      await waitFor(async () => (await toldOf(q.store)).length === 2, 10_000, 'the second told');
      const warned = lines.filter((l) => /could not look up the items/.test(l.msg));
      assert.deepEqual(warned.map((l) => l.level), [40, 20], 'warn once, then debug');
      assert.match(warned[0]!.err, /500/);
    } finally {
      await q.close();
    }
  });

  test('stopping does not wait for a lookup Plex never answers; the scan is still told, without items', async () => {
    let asked = 0;
    const q = queue(serialTarget(() => (asked++, new Promise<ScannedItem[]>(() => {}))), true);
    const id = q.enqueue('/data/Movies/Dune (2021)');
    await waitFor(() => asked === 1, 10_000, 'the lookup asked');
    await q.scheduler.stop();
    const [told] = await toldOf(q.store);
    assert.equal(told?.scan, id);
    assert.equal(told.items, undefined);
    q.store.close();
  });

  test('a lookup the server never answers: the scan is told without items once the lookup gave up', async () => {
    const q = queue(serialTarget(() => new Promise<ScannedItem[]>(() => {})), true, undefined, 100);
    try {
      const id = q.enqueue('/data/Movies/Dune (2021)');
      await waitFor(async () => (await toldOf(q.store)).length === 1, 10_000, 'told');
      const [told] = await toldOf(q.store);
      assert.equal(told?.scan, id);
      assert.equal(told.items, undefined);
    } finally {
      await q.close();
    }
  });

  test('no destination takes scanned events: Plex is not asked for the items', async () => {
    let asked = 0;
    const target = serialTarget(async () => (asked++, [DUNE]));
    const q = queue(target, false);
    try {
      q.enqueue('/data/Movies/Dune (2021)');
      await waitFor(async () => (await toldOf(q.store)).length === 1, 10_000, 'told');
      assert.equal(asked, 0);
      const [told] = await toldOf(q.store);
      assert.equal(told?.items, undefined);
    } finally {
      await q.close();
    }
  });

  test('an event keeps 20 items and counts the rest', async () => {
    const many = Array.from({ length: 25 }, (_, i) => ({ type: 'episode', title: `Episode ${i + 1}`, show: 'Show', season: 1, episode: i + 1 }));
    const q = queue(serialTarget(async () => many), true);
    try {
      q.enqueue('/data/TV/Show/Season 01');
      await waitFor(async () => (await toldOf(q.store)).length === 1, 10_000, 'told');
      const [told] = await toldOf(q.store);
      assert.equal(told!.items!.length, 20);
      assert.equal(told!.moreItems, 5);
    } finally {
      await q.close();
    }
  });
});

describe('the items of a scanned event on a shared PostgreSQL queue', () => {
  const pg = startPgCluster();
  after(async () => (await pg).destroy());

  test("the shared turn is let go before the lookup; the event and its items are stored in PostgreSQL", async () => {
    const store = await PgQueueStore.open({ url: await (await pg).createDatabase(), relayId: 'relay-a' });
    let answer!: (items: ScannedItem[]) => void;
    const pending = new Promise<ScannedItem[]>((r) => (answer = r));
    const target = serialTarget((folder) => (folder === '/data/Movies/Dune (2021)' ? pending : Promise.resolve([])));
    const scheduler = new Scheduler(store, [target], pino({ level: 'silent' }), { retryBaseMs: 50, retryMaxMs: 200, scannedItems: () => true });
    await scheduler.start();
    try {
      const [dune] = await store.enqueueMany([{ folder: '/data/Movies/Dune (2021)', files: [], source: 'Radarr', event: 'Download', updateType: 'Modified', priority: 0 }], { delayMs: 0, maxMs: 0 });
      scheduler.poke();
      await waitFor(() => target.sent.length === 1, 30_000, 'Dune sent');
      await store.enqueueMany([{ folder: '/data/Movies/Heat (1995)', files: [], source: 'Radarr', event: 'Download', updateType: 'Modified', priority: 0 }], { delayMs: 0, maxMs: 0 });
      scheduler.poke();
      await waitFor(() => target.sent.length === 2, 30_000, "Heat sent on Plex's shared turn while Dune's lookup waits");
      answer([DUNE]);
      await waitFor(async () => (await toldOf(store)).some((e) => e.scan === dune!.id), 30_000, 'Dune told');
      assert.deepEqual((await toldOf(store)).find((e) => e.scan === dune!.id)?.items, [DUNE]);
    } finally {
      await scheduler.stop();
      await store.close();
    }
  });
});
