import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import type { DeliveryResult, ScanItem, Target } from '../../src/core/scan.ts';
import { notificationSchema } from '../../src/config/notifications.ts';
import { wants } from '../../src/notify/message.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { Scheduler } from '../../src/queue/scheduler.ts';
import { bothStores } from '../helpers/both-stores.ts';
import { waitFor } from '../helpers/relay.ts';

// Issue 52 item 2: a scan Plex was sent is told (`scanned`) only once Plex confirmed it ended. A relay killed or
// stopped before that tells it at its next start: once Plex's activities show no scan (the same question the
// takeover of a dead relay's turn asks), or as "completion unknown" when the server cannot say.

/** Plex's shape: serial; a scan's after-steps (the completion watch) end only when the test says, or on abort. */
function plexLike(opts: { scanning?: () => string[] } = {}) {
  let confirm: (() => void) | undefined;
  let asks = 0;
  const sent: string[] = [];
  const target: Target = {
    name: 'plex',
    serial: true,
    async deliver(item: ScanItem): Promise<DeliveryResult> {
      sent.push(item.folder);
      return {
        outcome: 'done',
        detail: 'sent to section 1',
        after: (signal) =>
          new Promise((resolve, reject) => {
            confirm = () => resolve('completed (Plex scan ended)');
            signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          }),
      };
    },
    available: async () => ({ ok: true }),
    ...(opts.scanning ? { scanning: async () => (asks++, opts.scanning!()) } : {}),
  };
  return { target, sent, confirm: () => confirm?.(), asks: () => asks };
}

function capture() {
  const lines: Array<Record<string, any>> = [];
  return { lines, log: pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) }) };
}

/** What people's destinations are told: the delivery's end written while its after-steps run is not (message.ts wants). */
const people = notificationSchema.parse({ TYPE: 'discord', URL: 'http://127.0.0.1:9/x' });
const told = async (store: QueueBackend, scan: number) => (await store.outbox.after(0, 1000)).filter((e) => e.scan === scan && e.kind === 'scanned' && wants(people, e));

async function enqueue(store: QueueBackend, scheduler: Scheduler, folder: string): Promise<number> {
  const [r] = await store.enqueueMany([{ folder, files: [], source: 'Radarr', event: 'Download', updateType: 'Modified', priority: 0 }], { delayMs: 0, maxMs: 0 });
  scheduler.poke();
  return r!.id;
}

const { stores } = bothStores();

for (const [name, open] of stores) {
  describe(`a scan sent before scanrelay stopped (${name})`, () => {
    test('killed while Plex scans: not told then; told at the next start once Plex no longer scans, once', async () => {
      const store = await open('relay-crash');
      const first = plexLike();
      const a = new Scheduler(store, [first.target], pino({ level: 'silent' }), { retryBaseMs: 50 });
      await a.start();
      const id = await enqueue(store, a, '/data/Movies/Dune (2021)');
      await waitFor(async () => (await store.view.get(id))?.status === 'done' || undefined, 20_000, 'recorded as sent');
      // The relay dies here: its after-steps never end and stop() never runs.
      assert.deepEqual(await told(store, id), []);
      let plexScans = ['Scanning Movies'];
      const second = plexLike({ scanning: () => plexScans });
      const { lines, log } = capture();
      const b = new Scheduler(store, [second.target], log, { retryBaseMs: 50, settleRecheckMs: 20 });
      await b.start();
      try {
        await waitFor(() => lines.find((l) => /not confirmed yet/.test(l.msg)), 20_000, 'the untold scan found at start');
        // Nothing new goes to Plex while it still scans the scan sent before.
        const next = await enqueue(store, b, '/data/Movies/Heat (1995)');
        const asked = second.asks();
        await waitFor(() => second.asks() >= asked + 2 || undefined, 20_000, 'Plex asked again after the new scan was due');
        assert.deepEqual(await told(store, id), [], 'not told while Plex still scans');
        assert.deepEqual(second.sent, []);
        plexScans = [];
        const events = await waitFor(async () => ((await told(store, id)).length ? told(store, id) : undefined), 20_000, 'told once Plex no longer scans');
        const event = events?.[0];
        assert.match(event!.detail ?? '', /^sent to section 1; scanrelay stopped before the server confirmed the scan; at the next start the server no longer scanned/);
        assert.equal(event!.target, 'plex');
        assert.equal(event!.folder, '/data/Movies/Dune (2021)');
        await waitFor(() => second.sent.length === 1 || undefined, 20_000, 'the next scan sent after');
        second.confirm();
        await waitFor(async () => (await told(store, next)).length === 1 || undefined, 20_000, 'the next scan told');
        await b.stop();
        // A third start tells nothing again.
        const c = new Scheduler(store, [plexLike({ scanning: () => [] }).target], pino({ level: 'silent' }));
        await c.start();
        await c.stop();
        assert.equal((await told(store, id)).length, 1);
      } finally {
        await b.stop();
      }
    });

    test('a target that cannot say what its server scans tells it at the next start as "completion unknown"', async () => {
      const store = await open('relay-unknown');
      const first = plexLike();
      const a = new Scheduler(store, [first.target], pino({ level: 'silent' }));
      await a.start();
      const id = await enqueue(store, a, '/data/Movies/Alien (1979)');
      await waitFor(async () => (await store.view.get(id))?.status === 'done' || undefined, 20_000, 'recorded as sent');
      const b = new Scheduler(store, [plexLike().target], pino({ level: 'silent' }));
      await b.start();
      try {
        const [event] = await told(store, id);
        assert.match(event?.detail ?? '', /completion unknown/);
      } finally {
        await b.stop();
      }
    });

    test('SIGTERM while Plex scans: stop waits its grace period, then tells nothing early; the next start tells it', async () => {
      const store = await open('relay-stop');
      const first = plexLike();
      const a = new Scheduler(store, [first.target], pino({ level: 'silent' }), { stopGraceMs: 200 });
      await a.start();
      const id = await enqueue(store, a, '/data/Movies/Brazil (1985)');
      await waitFor(async () => (await store.view.get(id))?.status === 'done' || undefined, 20_000, 'recorded as sent');
      await a.stop();
      assert.deepEqual(await told(store, id), [], '`scanned` is not told before Plex confirmed it');
      assert.match((await store.view.get(id))!.deliveries[0]!.detail ?? '', /scanrelay stopped before the after-scan steps ended/);
      const b = new Scheduler(store, [plexLike({ scanning: () => [] }).target], pino({ level: 'silent' }), { settleRecheckMs: 20 });
      await b.start();
      try {
        await waitFor(async () => (await told(store, id)).length === 1 || undefined, 20_000, 'told at the next start');
      } finally {
        await b.stop();
      }
    });

    test('a stop within the grace period waits for the confirmation: `scanned` is told after Plex confirmed, not before', async () => {
      const store = await open('relay-grace');
      const first = plexLike();
      const a = new Scheduler(store, [first.target], pino({ level: 'silent' }), { stopGraceMs: 60_000 });
      await a.start();
      const id = await enqueue(store, a, '/data/Movies/Ran (1985)');
      await waitFor(async () => (await store.view.get(id))?.status === 'done' || undefined, 20_000, 'recorded as sent');
      let stopped = false;
      const stopping = a.stop().then(() => (stopped = true));
      // The stop waits for Plex: nothing is told yet, and the stop has not ended.
      assert.deepEqual(await told(store, id), []);
      assert.equal(stopped, false);
      first.confirm();
      await stopping;
      const [event] = await told(store, id);
      assert.equal(event?.detail, 'completed (Plex scan ended)');
    });
  });
}
