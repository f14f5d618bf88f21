import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DeliveryResult, Target } from '../../src/core/scan.ts';
import { Scheduler } from '../../src/queue/scheduler.ts';
import { RETRYING_TOLD } from '../../src/queue/events.ts';
import { notificationSchema } from '../../src/config/notifications.ts';
import { wants } from '../../src/notify/message.ts';
import pg from 'pg';
import { pino } from 'pino';
import { bothStores } from '../helpers/both-stores.ts';
import { waitFor } from '../helpers/relay.ts';

// The outbox on both stores: a delivery's event is written in the transaction of its state change, a destination's
// turn to send is a lease that one relay holds at a time, and old events are pruned.

const { stores: STORES } = bothStores();

const req = (folder: string) => ({ folder, files: [`${folder}/a.mkv`], source: 'Radarr' as const, event: 'Download', updateType: 'Modified' as const, priority: 0 });

for (const [name, open] of STORES) {
  describe(`outbox on ${name}`, () => {
    test('a finished delivery writes its event with its state change; a failed one, with the reason', async () => {
      const s = await open();
      await s.enqueueMany([req('/m/A'), req('/m/B')], { delayMs: 0, maxMs: 0 }, 1000);
      await s.activateDue(['plex'], 1000);
      const claimed = await s.claimDeliveries(10, 1000, 'plex');
      assert.equal(claimed.length, 2);
      const [a, b] = claimed;
      await s.completeDelivery(a!.item.id, 'plex', { status: 'done', event: { kind: 'scanned', at: 2000, target: 'plex', folder: a!.item.folder, tookMs: 1000 } }, 2000);
      await s.completeDelivery(b!.item.id, 'plex', { status: 'failed', error: 'no section', event: { kind: 'failed', at: 2001, target: 'plex', folder: b!.item.folder, reason: 'no section' } }, 2001);
      const events = await s.outbox.after(0, 10);
      assert.deepEqual(events.map((e) => [e.kind, e.folder]), [['scanned', a!.item.folder], ['failed', b!.item.folder]]);
      assert.equal(events[1]!.reason, 'no section');
      await s.setDeliveryDetail(a!.item.id, 'plex', 'completed', { kind: 'scanned', at: 3000, target: 'plex', folder: '/m/A' });
      assert.equal((await s.outbox.after(events[1]!.id, 10)).length, 1);
      assert.equal(await s.outbox.latestId(), events[1]!.id + 1);
    });

    test("a delivery's event counts its scan's targets still open and failed, in its transaction; a retry writes its event with it", async () => {
      const s = await open();
      const [r] = await s.enqueueMany([req('/m/C')], { delayMs: 0, maxMs: 0 }, 1000);
      await s.activateDue(['plex', 'jellyfin', 'emby'], 1000);
      for (const t of ['plex', 'jellyfin', 'emby']) assert.equal((await s.claimDeliveries(10, 1000, t)).length, 1);
      await s.retryDelivery(r!.id, 'emby', 'Emby answered 503', 1500, true, undefined, { kind: 'retrying', at: 1100, target: 'emby', scan: r!.id, reason: 'Emby answered 503' });
      await s.completeDelivery(r!.id, 'jellyfin', { status: 'failed', error: 'no library', event: { kind: 'failed', at: 1200, target: 'jellyfin', scan: r!.id } }, 1200);
      await s.completeDelivery(r!.id, 'plex', { status: 'done', event: { kind: 'scanned', at: 1300, target: 'plex', scan: r!.id } }, 1300);
      assert.equal((await s.claimDeliveries(10, 2000, 'emby')).length, 1);
      await s.completeDelivery(r!.id, 'emby', { status: 'done', event: { kind: 'scanned', at: 2100, target: 'emby', scan: r!.id } }, 2100);
      const events = await s.outbox.after(0, 10);
      assert.deepEqual(
        events.map((e) => [e.kind, e.target, e.scanOpen, e.scanFailed]),
        [
          ['retrying', 'emby', undefined, undefined],
          ['failed', 'jellyfin', 2, 1],
          ['scanned', 'plex', 1, 1],
          ['scanned', 'emby', 0, 1],
        ],
      );
    });

    test('one relay at a time holds a destination, until its lease runs out; the cursor only moves forward', async () => {
      const s = await open();
      await s.outbox.append([{ kind: 'waiting', at: 1, reason: 'before' }]);
      const start = (await s.outbox.claim('discord', 'relay-a', 1000, 10_000))!;
      assert.deepEqual((await s.outbox.read(start.cursor, 10)).events, [], 'a new destination starts after the newest event');
      assert.equal(await s.outbox.claim('discord', 'relay-b', 1000, 10_500), undefined, 'relay-a holds it');
      assert.deepEqual(await s.outbox.claim('discord', 'relay-a', 1000, 10_500), start, 'its holder renews it');
      await s.outbox.append([{ kind: 'recovered', at: 2 }, { kind: 'recovered', at: 3 }]);
      const [first, second] = (await s.outbox.read(start.cursor, 10)).events;
      assert.deepEqual([first?.event.at, second?.event.at], [2, 3]);
      await s.outbox.advance('discord', 'relay-a', first!.cursor);
      await s.outbox.advance('discord', 'relay-b', second!.cursor);
      await s.outbox.advance('discord', 'relay-a', start.cursor);
      const taken = (await s.outbox.claim('discord', 'relay-b', 1000, 12_000))!;
      assert.equal(taken.cursor, first!.cursor, 'relay-b takes over after the lease, where relay-a stopped');
      assert.deepEqual((await s.outbox.read(taken.cursor, 10)).events.map((e) => e.event.at), [3]);
    });

    test('a batch kept with the cursor comes back with the turn, and goes when the cursor moves past it', async () => {
      const s = await open();
      const start = (await s.outbox.claim('discord', 'relay-a', 1000, 10_000))!;
      await s.outbox.append([{ kind: 'recovered', at: 2 }]);
      const read = await s.outbox.read(start.cursor, 10);
      await s.outbox.keepBatch('discord', 'relay-a', '{"kept":1}', 10_100);
      assert.deepEqual(await s.outbox.claim('discord', 'relay-b', 1000, 12_000), { cursor: start.cursor, batch: '{"kept":1}', sentAt: 10_100 });
      await s.outbox.advance('discord', 'relay-b', read.end, 12_100);
      assert.deepEqual(await s.outbox.claim('discord', 'relay-b', 1000, 12_200), { cursor: read.end, sentAt: 12_100 });
    });

    test('a reader starting at the head gets what is written from then on (the dashboard stream)', async () => {
      const s = await open();
      await s.outbox.append([{ kind: 'waiting', at: 1, reason: 'before' }]);
      const head = await s.outbox.head();
      assert.deepEqual((await s.outbox.read(head, 10)).events, []);
      await s.outbox.append([{ kind: 'recovered', at: 2 }]);
      const read = await s.outbox.read(head, 10);
      assert.deepEqual(read.events.map((e) => e.event.at), [2]);
      assert.equal(read.end, read.events[0]!.cursor);
      assert.deepEqual((await s.outbox.read(read.end, 10)).events, []);
    });

    if (name === 'PostgreSQL') {
      test('a cursor moved by id alone (from before the upgrade, or by an older relay during one) goes on after that id', async () => {
        const s = await open();
        const start = (await s.outbox.claim('d', 'relay-a', 60_000, 10_000))!;
        for (const at of [1, 2, 3]) await s.outbox.append([{ kind: 'recovered', at }]);
        const ids = (await s.outbox.read(start.cursor, 10)).events.map((e) => e.event.id);
        const db = new pg.Client({ connectionString: s.url });
        await db.connect();
        try {
          // An older relay sends events 1 and 2 and moves last_id only.
          await db.query(`UPDATE event_cursors SET last_xid = '0', last_id = $1 WHERE destination = 'd'`, [ids[1]]);
          const moved = (await s.outbox.claim('d', 'relay-a', 60_000, 10_100))!;
          assert.deepEqual((await s.outbox.read(moved.cursor, 10)).events.map((e) => e.event.at), [3]);
          // Events written before the upgrade (xid 0) and a cursor of then: the ones after it are sent, in id order.
          await db.query(`UPDATE events SET xid = '0'`);
          await db.query(`UPDATE event_cursors SET last_xid = '0', last_id = $1 WHERE destination = 'd'`, [ids[0]]);
          const old = (await s.outbox.claim('d', 'relay-a', 60_000, 10_200))!;
          assert.deepEqual((await s.outbox.read(old.cursor, 10)).events.map((e) => e.event.at), [2, 3]);
        } finally {
          await db.end();
        }
      });
    }

    test('prune drops old events and keeps at most maxRows', async () => {
      const s = await open();
      await s.outbox.append(Array.from({ length: 10 }, (_, i) => ({ kind: 'scanned' as const, at: i * 100, folder: `/f${i}` })));
      assert.equal(await s.outbox.prune(300, 100), 3);
      assert.equal(await s.outbox.prune(0, 4), 3);
      assert.deepEqual((await s.outbox.after(0, 100)).map((e) => e.folder), ['/f6', '/f7', '/f8', '/f9']);
    });

    test('a scan with after-steps is told as scanned only once they ended', async () => {
      const s = await open();
      let finish!: (v: string) => void;
      const afterEnded = new Promise<string>((r) => (finish = r));
      const target: Target = {
        name: 'plex',
        serial: true,
        deliver: async (): Promise<DeliveryResult> => ({ outcome: 'done', detail: 'sent', after: () => afterEnded }),
        available: async () => ({ ok: true }),
      };
      const scheduler = new Scheduler(s, [target], pino({ level: 'silent' }), { retryBaseMs: 10 });
      await scheduler.start();
      try {
        const [r] = await s.enqueueMany([req('/m/Dune (2021)')], { delayMs: 0, maxMs: 0 });
        scheduler.poke();
        await waitFor(async () => (await s.view.get(r!.id))?.status === 'done', 10_000, 'the delivery recorded');
        // The delivery's end is written (its scan's last one is known from it: autopulse's `processed`), marked as
        // still running its after-steps: no people's destination is sent it.
        const sent = await s.outbox.after(0, 10);
        assert.deepEqual(sent.map((e) => [e.kind, e.afterSteps, e.scanOpen]), [['scanned', 'running', 0]]);
        const people = notificationSchema.parse({ TYPE: 'discord', URL: 'http://127.0.0.1:9/x' });
        assert.deepEqual(sent.filter((e) => wants(people, e)), [], 'sent is not scanned');
        finish('completed in 3 s');
        await scheduler.afterStepsSettled();
        const [e] = await s.outbox.after(sent[0]!.id, 10);
        assert.equal(e?.afterSteps, 'ended');
        assert.ok(wants(people, e!));
        assert.equal(e?.kind, 'scanned');
        assert.equal(e?.folder, '/m/Dune (2021)');
        assert.equal(e?.trigger, 'Radarr');
        assert.equal(e?.detail, 'completed in 3 s');
        assert.ok(typeof e?.tookMs === 'number' && e.requestedAt !== undefined);
      } finally {
        await scheduler.stop();
      }
    });

    test('a serial target waiting for its server while it keeps its turn is told as waiting, then recovered', async () => {
      const s = await open();
      let down = true;
      const target: Target = {
        name: 'plex',
        serial: true,
        deliver: async (): Promise<DeliveryResult> => (down ? { outcome: 'retry', error: 'waiting for Plex to answer: ECONNREFUSED', retryAfterMs: 5, holdTurn: true } : { outcome: 'done' }),
        available: async () => ({ ok: !down }),
      };
      const scheduler = new Scheduler(s, [target], pino({ level: 'silent' }), { waitingAfterMs: 30 });
      await scheduler.start();
      try {
        await s.enqueueMany([req('/m/Y')], { delayMs: 0, maxMs: 0 });
        scheduler.poke();
        await waitFor(async () => (await s.outbox.after(0, 10)).some((e) => e.kind === 'waiting'), 10_000, 'waiting');
        const [waiting] = await s.outbox.after(0, 10);
        assert.equal(waiting?.target, 'plex');
        assert.equal(waiting?.hold, 'unreachable');
        assert.match(waiting?.reason ?? '', /ECONNREFUSED/);
        down = false;
        await waitFor(async () => (await s.outbox.after(0, 10)).some((e) => e.kind === 'recovered'), 10_000, 'recovered');
      } finally {
        await scheduler.stop();
      }
    });

    test('a target unreachable for longer than waitingAfterMs is told once as waiting, then once as recovered', async () => {
      const s = await open();
      let down = true;
      const target: Target = {
        name: 'jellyfin',
        deliver: async (): Promise<DeliveryResult> => (down ? { outcome: 'retry', error: 'ECONNREFUSED' } : { outcome: 'done' }),
        available: async () => ({ ok: !down }),
      };
      const scheduler = new Scheduler(s, [target], pino({ level: 'silent' }), { retryBaseMs: 5, retryMaxMs: 20, waitingAfterMs: 30 });
      await scheduler.start();
      try {
        await s.enqueueMany([req('/m/X')], { delayMs: 0, maxMs: 0 });
        scheduler.poke();
        // Each failed try is also a `retrying` (autopulse's); the hold is told once.
        const told = async () => (await s.outbox.after(0, 10_000)).filter((e) => e.kind !== 'retrying');
        await waitFor(async () => (await told()).some((e) => e.kind === 'waiting'), 10_000, 'waiting');
        down = false;
        await waitFor(async () => (await told()).some((e) => e.kind === 'recovered'), 10_000, 'recovered');
        await waitFor(async () => (await told()).length === 3, 10_000, 'the scan told');
        // ... for its first RETRYING_TOLD tries (autopulse gives up after 5: runner.rs:306-321), not for every try of an outage.
        const retrying = (await s.outbox.after(0, 10_000)).filter((e) => e.kind === 'retrying');
        assert.ok(retrying.length >= 1 && retrying.length <= RETRYING_TOLD, `${retrying.length} retrying events`);
        assert.equal(retrying[0]!.reason, 'ECONNREFUSED');
        // recovered and scanned are written side by side (on PostgreSQL either may come first)
        const kinds = (await told()).map((e) => e.kind);
        assert.equal(kinds[0], 'waiting');
        assert.deepEqual(kinds.slice(1).sort(), ['recovered', 'scanned']);
      } finally {
        await scheduler.stop();
      }
    });
  });
}
