import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { notificationSchema } from '../../src/config/notifications.ts';
import type { NotifyEvent } from '../../src/core/events.ts';
import { NotifySender } from '../../src/notify/sender.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { SqliteOutbox } from '../../src/queue/outbox.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { DiscordFake } from '../fakes/discord.ts';
import { JsonReceiverFake, type NotifyCall } from '../fakes/notify-services.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { spawnRelay, tempDir, waitFor, within, type RelayProcess } from '../helpers/relay.ts';

// Issue 52, item 6: a batch of Discord messages got a 429 on message 2, then a kill -9 and a restart sent message 1
// again: how many messages were taken was kept only in memory. It is now kept with the destination's cursor.
// A Discord batch is one message now (one embed per kind, a line per scan), so the batch of several messages here
// is a json backlog: 600 events are two documents, of 500 and 100 (JSON_EVENTS_PER_DOCUMENT).

const BACKLOG: NotifyEvent[] = Array.from({ length: 600 }, (_, i) => ({ kind: 'scanned', at: Date.now(), target: `server${i % 12}`, scan: i + 1, folder: `/data/Movies/Movie ${i}` }));
const sizes = (calls: NotifyCall[]) => calls.map((c) => [c.status, c.json.events.length]);
const told = (calls: NotifyCall[]) => calls.filter((c) => c.status === 200).flatMap((c) => c.json.events.map((e: { id: number }) => e.id));
/** A 429 on the second document, with a Retry-After longer than the test. */
const refuseSecond = (j: JsonReceiverFake) => j.failAfter(1, 1, { status: 429, body: 'slow down', headers: { 'retry-after': '600' } });

describe('a batch of several messages taken in part is not sent again after a restart', () => {
  let cluster: PgCluster;
  const fakes: Array<{ stop(): Promise<void> }> = [];
  const dirs: string[] = [];
  before(async () => {
    cluster = await startPgCluster();
  });
  after(async () => {
    for (const d of fakes) await d.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    cluster?.destroy();
  });

  // The store closed and opened again, as a restart does (the process itself is killed in the test below).
  const reopen: Array<[string, () => Promise<() => Promise<QueueBackend>>]> = [
    [
      'SQLite',
      async () => {
        const dir = tempDir();
        dirs.push(dir);
        return async () => new QueueStore(join(dir, 'queue.db'));
      },
    ],
    [
      'PostgreSQL',
      async () => {
        const url = await cluster.createDatabase();
        return async () => PgQueueStore.open({ url, relayId: 'relay-a' });
      },
    ],
  ];

  for (const [name, prepare] of reopen) {
    test(`${name}: a 429 on message 2, the relay stops, a new one goes on with message 2 only`, async () => {
      const receiver = await new JsonReceiverFake().start();
      fakes.push(receiver);
      const open = await prepare();
      const dests = { feed: notificationSchema.parse({ TYPE: 'json', URL: receiver.url, BATCH_SECONDS: 0 }) };
      const opts = { relayId: 'relay-a', pollMs: 20 };
      // Message 1 taken, message 2 refused with a Retry-After longer than the test.
      refuseSecond(receiver);
      let store = await open();
      let sender = new NotifySender(store.outbox, dests, pino({ level: 'silent' }), opts);
      sender.start();
      await sender.ready();
      await store.outbox.append(BACKLOG);
      await within(receiver.until((c) => c.length >= 2), 10_000, 'message 2 refused');
      await sender.stop();
      await store.close();

      store = await open();
      sender = new NotifySender(store.outbox, dests, pino({ level: 'silent' }), opts);
      sender.start();
      try {
        await within(receiver.until((c) => c.length >= 3), 10_000, 'the batch sent on after the restart');
        await sender.looked();
        assert.deepEqual(sizes(receiver.calls), [[200, 500], [429, 100], [200, 100]]);
        assert.equal(told(receiver.calls).length, 600);
        assert.equal(new Set(told(receiver.calls)).size, 600, 'each event told once');
        assert.ok(sender.status()[0]!.lastSuccessAt, 'the last success is known');
      } finally {
        await sender.stop();
        await store.close();
      }
    });
  }

  test('a real relay killed with SIGKILL after a 429 on message 2: the restarted relay sends message 2 only', async () => {
    const discord = await new DiscordFake().start();
    const receiver = await new JsonReceiverFake().start();
    fakes.push(discord, receiver);
    let relay: RelayProcess | undefined = await spawnRelay({
      config: {
        PLEX_ENABLED: false,
        NOTIFICATIONS: { chat: { TYPE: 'discord', URL: discord.webhookUrl, BATCH_SECONDS: 0 }, feed: { TYPE: 'json', URL: receiver.url, BATCH_SECONDS: 0 } },
      },
    });
    dirs.push(relay.dir);
    // Issue 52, item 7: a stand-in's URL is not Discord's: warned about at start, and used.
    assert.ok(
      relay.events().some((e) => e.level === 40 && /NOTIFICATIONS\.chat\.URL: http:\/\/127\.0\.0\.1:\d+\/… is not a Discord webhook URL/.test(e.msg)),
      relay.logs.join('\n'),
    );
    const file = relay.queuefile;
    const cursor = () => {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        return db.prepare<[], { last_id: number; batch: string | null; newest: number }>(`SELECT last_id, batch, (SELECT max(id) FROM events) AS newest FROM event_cursors WHERE destination = 'feed'`).get();
      } finally {
        db.close();
      }
    };
    try {
      // The relay's sender has its cursor; the events come from another writer on the same file.
      await waitFor(() => cursor(), 15_000, "the relay's notification cursor");
      refuseSecond(receiver);
      const writer = new Database(file);
      new SqliteOutbox(writer).append(BACKLOG);
      writer.close();
      await within(receiver.until((c) => c.length >= 2), 15_000, 'message 2 refused');
      assert.ok(cursor()?.batch, 'the batch is kept with the cursor');
      await relay.kill('SIGKILL');
      relay = await spawnRelay({ dir: relay.dir, configPath: relay.configPath });
      await within(receiver.until((c) => c.length >= 3), 15_000, 'the batch sent on after the restart');
      await waitFor(() => {
        const c = cursor();
        return c && c.last_id === c.newest && c.batch === null;
      }, 15_000, 'the cursor past the batch');
      assert.deepEqual(sizes(receiver.calls), [[200, 500], [429, 100], [200, 100]]);
      assert.equal(told(receiver.calls).length, 600);
      assert.equal(new Set(told(receiver.calls)).size, 600, 'each event told once');
    } finally {
      await relay?.kill('SIGKILL');
    }
  });
});
