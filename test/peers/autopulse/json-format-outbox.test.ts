import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { importAutopulse } from '../../../src/peers/autopulse/import.ts';
import { notificationSchema } from '../../../src/config/notifications.ts';
import type { DeliveryResult, Target } from '../../../src/core/scan.ts';
import { wants } from '../../../src/notify/message.ts';
import { jsonMessages } from '../../../src/notify/services/json.ts';
import type { QueueBackend } from '../../../src/queue/backend.ts';
import { Scheduler } from '../../../src/queue/scheduler.ts';
import { buildTestApp } from '../../helpers/app.ts';
import { bothStores } from '../../helpers/both-stores.ts';
import { waitFor } from '../../helpers/relay.ts';

// FORMAT "autopulse" from the queue's outbox on both stores, and from an imported config: the document's rules
// themselves are in json-format.test.ts (the unit set).
/*
 * FORMAT "autopulse": the document autopulse's json webhook posts (dan-online/autopulse 55124fd):
 * crates/service/src/settings/webhooks/json.rs:27-42 builds {events: [{event, action, trigger, files, file_count,
 * timestamp}]}, one entry per (event, trigger) of the batch (manager.rs:82-102). runner.rs:173-239 adds each file
 * once to the event it ended in: `processed` once every target took it (process_events, runner.rs:246-326: a retry
 * goes only to the targets not yet hit, runner.rs:257, and the file is `processed` only when none failed this round),
 * `retrying` each round a target failed it, `failed` once retries ran out. `trigger` is the event's event_source:
 * the name of the trigger under `triggers:` (runner.rs:192), e.g. "radarr4k".
 */

const NOW = Date.parse('2026-11-26T10:00:00Z');

/** A target that answers with what `answers` says for each try, in order (the last one from then on). */
function target(name: string, answers: Array<DeliveryResult | (() => DeliveryResult)>): Target & { tries: number } {
  const t = {
    name,
    tries: 0,
    deliver: async (): Promise<DeliveryResult> => {
      const a = answers[Math.min(t.tries++, answers.length - 1)]!;
      return typeof a === 'function' ? a() : a;
    },
    available: async () => ({ ok: true as const }),
  };
  return t;
}

/** What an autopulse-format destination posts for the outbox's events, a batch per event (the worst case) or one for all. */
async function posted(store: Pick<QueueBackend, 'outbox'>, apart: boolean) {
  const dest = notificationSchema.parse({ TYPE: 'json', URL: 'http://127.0.0.1:9/hook', FORMAT: 'autopulse', EVENTS: ['scanned', 'removed', 'failed', 'retrying', 'waiting', 'recovered'] });
  const events = (await store.outbox.after(0, 1000)).filter((e) => wants(dest, e));
  const batches = apart ? events.map((e) => [e]) : [events];
  return batches.flatMap((b) => JSON.parse(jsonMessages(dest, b, NOW)[0]!.body).events as Array<{ event: string; trigger: string; files: string[] }>);
}

const { stores } = bothStores();
for (const [name, open] of stores) {
  describe(`autopulse's processed, retrying and failed from the outbox on ${name}`, () => {
    // The request as the route of autopulse's trigger "radarr4k" queues it (autopulse-routes.ts intentOf).
    const request = { folder: '/movies/Heat (1995)', files: ['/movies/Heat (1995)/Heat.mkv'], source: 'Radarr' as const, event: 'Download', title: 'autopulse trigger radarr4k', updateType: 'Modified' as const, priority: 0 };

    test('two targets, one refuses once: the file is retrying once, then processed once, under radarr4k', async () => {
      const s = await open();
      const plex = target('plex', [{ outcome: 'done', detail: 'sent' }]);
      const jellyfin = target('jellyfin', [{ outcome: 'retry', error: 'Jellyfin answered 503' }, { outcome: 'done', detail: 'refreshed' }]);
      const scheduler = new Scheduler(s, [plex, jellyfin], pino({ level: 'silent' }), { retryBaseMs: 10, retryMaxMs: 20 });
      await scheduler.start();
      try {
        const [r] = await s.enqueueMany([request], { delayMs: 0, maxMs: 0 });
        scheduler.poke();
        await waitFor(async () => (await s.view.get(r!.id))?.status === 'done', 20_000, 'both targets took it');
      } finally {
        await scheduler.stop();
      }
      assert.equal(jellyfin.tries, 2);
      for (const apart of [true, false]) {
        assert.deepEqual(
          (await posted(s, apart)).map((e) => [e.event, e.trigger, e.files]),
          [
            ['retrying', 'radarr4k', ['/movies/Heat (1995)/Heat.mkv']],
            ['processed', 'radarr4k', ['/movies/Heat (1995)/Heat.mkv']],
          ],
          apart ? 'a batch per event' : 'one batch',
        );
      }
    });

    test("Plex's after-steps ending after Jellyfin took it: processed once, not again when Plex's scan is told", async () => {
      const s = await open();
      let finish!: (v: string) => void;
      const ended = new Promise<string>((r) => (finish = r));
      const plex = { ...target('plex', [{ outcome: 'done', detail: 'sent', after: () => ended }]), serial: true };
      const jellyfin = target('jellyfin', [{ outcome: 'done', detail: 'refreshed' }]);
      const scheduler = new Scheduler(s, [plex, jellyfin], pino({ level: 'silent' }), { retryBaseMs: 10 });
      await scheduler.start();
      try {
        const [r] = await s.enqueueMany([request], { delayMs: 0, maxMs: 0 });
        scheduler.poke();
        await waitFor(async () => (await s.view.get(r!.id))?.status === 'done', 20_000, 'both deliveries recorded');
        finish('completed in 2 s');
        await scheduler.afterStepsSettled();
      } finally {
        await scheduler.stop();
      }
      for (const apart of [true, false]) assert.deepEqual((await posted(s, apart)).map((e) => [e.event, e.trigger]), [['processed', 'radarr4k']]);
    });

    test('a target that gives up: failed once, never processed', async () => {
      const s = await open();
      const plex = target('plex', [{ outcome: 'done', detail: 'sent' }]);
      const emby = target('emby', [{ outcome: 'failed', error: 'no library holds this folder' }]);
      const scheduler = new Scheduler(s, [plex, emby], pino({ level: 'silent' }), { retryBaseMs: 10 });
      await scheduler.start();
      try {
        const [r] = await s.enqueueMany([request], { delayMs: 0, maxMs: 0 });
        scheduler.poke();
        await waitFor(async () => (await s.view.get(r!.id))?.status === 'failed', 20_000, 'the scan failed');
      } finally {
        await scheduler.stop();
      }
      assert.deepEqual((await posted(s, true)).map((e) => [e.event, e.trigger]), [['failed', 'radarr4k']]);
    });
  });
}

describe('from an imported autopulse config to its json receiver', () => {
  test("a Radarr webhook on trigger radarr4k: the receiver reads radarr4k, each file once, processed once", async () => {
    const yaml = `
auth: { username: admin, password: password }
triggers:
  radarr4k: { type: radarr }
targets:
  plex: { type: plex, url: "http://127.0.0.1:9", token: t }
  jellyfin: { type: jellyfin, url: "http://127.0.0.1:9", token: t }
webhooks:
  receiver: { type: json, url: "http://127.0.0.1:9/hook" }
`;
    const { config } = importAutopulse(yaml, 'config.yaml', {});
    const a = await buildTestApp({ ...config, SERVER_PASS: 'test-secret', SERVER_QUEUE_URL: undefined, SERVER_SCAN_DELAY: 0 });
    try {
      const res = await a.app.inject({
        method: 'POST',
        url: '/triggers/radarr4k',
        headers: { authorization: `Basic ${Buffer.from('admin:password').toString('base64')}`, 'content-type': 'application/json' },
        payload: { eventType: 'Download', movie: { folderPath: '/movies/Heat (1995)' }, movieFile: { relativePath: 'Heat.mkv' } },
      });
      assert.equal(res.statusCode, 200, res.body);
      const plex = target('plex', [{ outcome: 'done', detail: 'sent' }]);
      const jellyfin = target('jellyfin', [{ outcome: 'retry', error: 'Jellyfin answered 503' }, { outcome: 'done', detail: 'refreshed' }]);
      const scheduler = new Scheduler(a.store, [plex, jellyfin], pino({ level: 'silent' }), { retryBaseMs: 10, retryMaxMs: 20 });
      await scheduler.start();
      try {
        scheduler.poke();
        await waitFor(() => a.store.view.listOpen().length === 0 && jellyfin.tries === 2, 20_000, 'both targets took it');
      } finally {
        await scheduler.stop();
      }
      const dest = notificationSchema.parse((config.NOTIFICATIONS as Record<string, unknown>).receiver);
      const events = a.store.outbox.after(0, 100).filter((e) => wants(dest, e));
      const docs = events.map((e) => JSON.parse(jsonMessages(dest, [e], NOW)[0]!.body).events as Array<{ event: string; trigger: string; files: string[] }>);
      assert.deepEqual(docs.flat().map((e) => [e.event, e.trigger, e.files]), [
        ['retrying', 'radarr4k', ['/movies/Heat (1995)/Heat.mkv']],
        ['processed', 'radarr4k', ['/movies/Heat (1995)/Heat.mkv']],
      ]);
    } finally {
      await a.close();
    }
  });
});
