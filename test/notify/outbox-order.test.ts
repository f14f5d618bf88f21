import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import { notificationSchema } from '../../src/config/notifications.ts';
import type { NotifyEvent } from '../../src/core/events.ts';
import { NotifySender } from '../../src/notify/sender.ts';
import { addEvents } from '../../src/queue/pg/outbox.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { JsonReceiverFake, type NotifyCall } from '../fakes/notify-services.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { within } from '../helpers/relay.ts';

// Issue 52, item 1: outbox ids come from a sequence, and transactions on different connections commit out of id
// order. A sender that read "id > cursor" and moved its cursor to the highest id it read never sent a lower id that
// committed a moment later. These tests hold a transaction open on its own connection (as a relay's delivery
// transaction is) while later ids commit, with the senders looking meanwhile.

const hook = (url: string) => ({ hook: notificationSchema.parse({ TYPE: 'json', URL: url, BATCH_SECONDS: 0 }) });
const scanned = (i: number): NotifyEvent => ({ kind: 'scanned', at: Date.now(), target: 'plex', folder: `/data/Movies/Movie ${i}` });
const folders = (calls: NotifyCall[]) => calls.filter((c) => c.status === 200).flatMap((c) => c.json.events.map((e: NotifyEvent) => e.folder as string));

describe('the PostgreSQL outbox with writers committing out of id order', () => {
  let cluster: PgCluster;
  const receivers: JsonReceiverFake[] = [];
  before(async () => {
    cluster = await startPgCluster();
  });
  after(async () => {
    for (const r of receivers) await r.stop();
    cluster?.destroy();
  });

  test('an event whose transaction commits after a later id was sent is still sent, once', async () => {
    const j = await new JsonReceiverFake().start();
    receivers.push(j);
    const url = await cluster.createDatabase();
    const store = await PgQueueStore.open({ url, relayId: 'relay-a' });
    const sender = new NotifySender(store.outbox, hook(j.url), pino({ level: 'silent' }), { relayId: 'relay-a', pollMs: 20 });
    const held = new pg.Client({ connectionString: url });
    sender.start();
    try {
      await sender.ready();
      await held.connect();
      await held.query('BEGIN');
      await addEvents(held, [scanned(1)]); // the lower id, not committed yet
      await store.outbox.append([scanned(2)]); // a higher id, committed
      await sender.looked(); // the sender looked twice after id 2 committed
      await held.query('COMMIT');
      await within(j.until((c) => folders(c).length >= 2), 10_000, 'both events sent');
      await sender.looked();
      assert.deepEqual(folders(j.calls).sort(), ['/data/Movies/Movie 1', '/data/Movies/Movie 2']);
    } finally {
      await held.end().catch(() => undefined);
      await sender.stop();
      await store.close();
    }
  });

  test('two relays, three writers committing each round in reverse id order: every event sent once', async () => {
    const j = await new JsonReceiverFake().start();
    receivers.push(j);
    const url = await cluster.createDatabase();
    const stores = [await PgQueueStore.open({ url, relayId: 'relay-a' }), await PgQueueStore.open({ url, relayId: 'relay-b' })];
    const senders = stores.map((s) => new NotifySender(s.outbox, hook(j.url), pino({ level: 'silent' }), { relayId: s.shared.relayId, pollMs: 10 }));
    const writers = [0, 1, 2].map(() => new pg.Client({ connectionString: url }));
    senders.forEach((s) => s.start());
    const ROUNDS = 8;
    try {
      await Promise.all(senders.map((s) => s.ready()));
      for (const w of writers) await w.connect();
      let n = 0;
      for (let round = 0; round < ROUNDS; round++) {
        for (const w of writers) {
          await w.query('BEGIN');
          await addEvents(w, [scanned(n++)]);
        }
        // One more on a relay's own connection, committed at once: the highest id of the round.
        await stores[round % 2]!.outbox.append([scanned(n++)]);
        for (const w of [...writers].reverse()) {
          await senders[round % 2]!.looked();
          await w.query('COMMIT');
        }
      }
      await within(j.until((c) => folders(c).length >= n), 20_000, `all ${n} events sent (got ${folders(j.calls).length})`);
      for (const s of senders) await s.looked();
      const sent = folders(j.calls);
      assert.equal(sent.length, n, 'none twice');
      assert.equal(new Set(sent).size, n);
    } finally {
      for (const w of writers) await w.end().catch(() => undefined);
      for (const s of senders) await s.stop();
      for (const s of stores) await s.close();
    }
  });
});
