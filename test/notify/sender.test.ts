import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { notificationSchema, type NotificationConfig } from '../../src/config/notifications.ts';
import type { NotifyEvent } from '../../src/core/events.ts';
import { createServer } from 'node:http';
import type { Target } from '../../src/core/scan.ts';
import { NotifySender } from '../../src/notify/sender.ts';
import { Scheduler } from '../../src/queue/scheduler.ts';
import { waitFor } from '../helpers/relay.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { DiscordFake } from '../fakes/discord.ts';
import { AppriseFake, GotifyFake, HookshotFake, JsonReceiverFake, NtfyFake, fakesStoppedAfter } from '../fakes/notify-services.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';

const dest = (d: Record<string, unknown>): NotificationConfig => notificationSchema.parse({ BATCH_SECONDS: 0.05, ...d });
const scanned = (i: number, extra: Partial<NotifyEvent> = {}): NotifyEvent => ({
  kind: 'scanned',
  at: Date.now(),
  target: 'plex',
  folder: `/data/Movies/A very long movie title that goes on and on, number ${i} (${1990 + (i % 30)})`,
  files: [`/data/Movies/Movie ${i}/Movie ${i}.mkv`],
  trigger: 'Radarr',
  requestedAt: Date.now() - 3000,
  tookMs: 3000,
  ...extra,
});

/** A logger whose lines the test reads. */
function capture(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: pino({ level: 'trace' }, { write: (s: string) => void lines.push(s) }), lines };
}

const fake = fakesStoppedAfter();

/** A sender over a fresh SQLite queue, stopped after the test. */
function sending(destinations: Record<string, NotificationConfig>, opts: { log?: pino.Logger; store?: QueueStore } = {}) {
  const store = opts.store ?? new QueueStore(':memory:');
  const sender = new NotifySender(store.outbox, destinations, opts.log ?? pino({ level: 'silent' }), { relayId: 'local', pollMs: 20, retryBaseMs: 20, maxRetryMs: 200 });
  return { store, sender, start: () => sender.start() };
}

describe('the Discord fake refuses what Discord refuses', () => {
  test('more than 10 embeds, long titles and descriptions, too much text, bad JSON, an empty message: 400; a wrong token 401', async () => {
    const d = await fake(new DiscordFake());
    const post = (body: string, url = d.webhookUrl) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.status);
    const embed = (title = 't', description = 'd') => ({ title, description });
    assert.equal(await post(JSON.stringify({ embeds: Array.from({ length: 11 }, () => embed()) })), 400);
    assert.equal(await post(JSON.stringify({ embeds: [embed('x'.repeat(257))] })), 400);
    assert.equal(await post(JSON.stringify({ embeds: [embed('t', 'x'.repeat(4097))] })), 400);
    assert.equal(await post(JSON.stringify({ embeds: [embed('t', 'x'.repeat(4000)), embed('t', 'x'.repeat(2100))] })), 400);
    assert.equal(await post(JSON.stringify({ content: 'x'.repeat(2001) })), 400);
    assert.equal(await post('{"embeds": ['), 400);
    assert.equal(await post('{}'), 400);
    assert.equal(await post(JSON.stringify({ content: 'hi' }), d.webhookUrl.replace(d.token, 'wrong')), 401);
    assert.equal(await post(JSON.stringify({ embeds: [embed('x'.repeat(256), 'x'.repeat(4096))] })), 204);
  });
});

describe('notification sender', () => {
  test('200 scans become one json document and one Discord message, each within its limits', async () => {
    const d = await fake(new DiscordFake());
    const j = await fake(new JsonReceiverFake('json-token-123'));
    const { store, sender, start } = sending({
      discord: dest({ TYPE: 'discord', URL: d.webhookUrl }),
      hook: dest({ TYPE: 'json', URL: `${j.url}/hook`, TOKEN: 'json-token-123' }),
    });
    start();
    try {
      await sender.ready(); // both destinations have their cursor
      store.outbox.append(Array.from({ length: 200 }, (_, i) => scanned(i)));
      await j.until((c) => c.filter((x) => x.status === 200).flatMap((x) => x.json.events).length >= 200);
      await d.until((c) => c.some((x) => x.status === 204));
      assert.equal(j.taken.length, 1, 'one document for the batch');
      const doc = j.taken[0]!.json;
      assert.equal(doc.version, 1);
      assert.equal(doc.events[0].kind, 'scanned');
      assert.equal(doc.events[0].trigger, 'Radarr');
      assert.ok(d.calls.every((c) => c.status === 204), 'Discord took every message');
      assert.equal(d.calls.length, 1);
      const embed = d.calls[0]!.json.embeds[0];
      assert.match(embed.title, /^Scanned \(200\)$/, 'one embed per kind, not per target');
      assert.match(embed.description, /… and \d+ more$/);
      assert.deepEqual(d.calls[0]!.json.allowed_mentions, { parse: [] }, 'a folder name never pings anyone');
    } finally {
      await sender.stop();
    }
  });

  test('a failure mentions who MENTIONS names (autopulse: discord.rs:228-287); a batch without one does not', async () => {
    const d = await fake(new DiscordFake());
    const { store, sender, start } = sending({ discord: dest({ TYPE: 'discord', URL: d.webhookUrl, MENTIONS: { ROLES: ['123456789'], HERE: true } }) });
    start();
    try {
      await sender.ready();
      store.outbox.append([scanned(1)]);
      await d.until((c) => c.length >= 1);
      store.outbox.append([{ kind: 'failed', at: Date.now(), target: 'plex', folder: '/data/Movies/X', trigger: 'Radarr', reason: 'no library holds /data/Movies/X' }]);
      await d.until((c) => c.length >= 2);
      assert.equal(d.calls[0]!.json.content, undefined);
      assert.equal(d.calls[1]!.json.content, '<@&123456789> @here');
      assert.deepEqual(d.calls[1]!.json.allowed_mentions, { parse: ['everyone'], users: [], roles: ['123456789'] });
      assert.match(d.calls[1]!.json.embeds[0].description, /no library holds/);
    } finally {
      await sender.stop();
    }
  });

  test('a role named twice in MENTIONS is mentioned once: Discord refuses an id twice in allowed_mentions with 400', async () => {
    const d = await fake(new DiscordFake());
    const { store, sender, start } = sending({ discord: dest({ TYPE: 'discord', URL: d.webhookUrl, MENTIONS: { ROLES: ['42', '42'], USERS: ['7', '7'] } }) });
    start();
    try {
      await sender.ready();
      store.outbox.append([{ kind: 'failed', at: Date.now(), target: 'plex', folder: '/data/Movies/X', reason: 'refused' }]);
      await d.until((c) => c.length >= 1);
      assert.equal(d.calls[0]!.status, 204, d.calls[0]!.raw);
      assert.equal(d.calls[0]!.json.content, '<@7> <@&42>');
      assert.deepEqual(d.calls[0]!.json.allowed_mentions, { parse: [], users: ['7'], roles: ['42'] });
    } finally {
      await sender.stop();
    }
  });

  test('a 429 in the middle of a batch of two messages: the second goes again after Retry-After, the first is not sent twice', async () => {
    // A Discord batch is one embed per kind now (one line per scan), so two messages are a json backlog: 600 events
    // are two documents, of 500 and 100.
    const j = await fake(new JsonReceiverFake());
    j.failAfter(1, 1, { status: 429, body: 'slow down', headers: { 'retry-after': '0.2' } });
    const { store, sender, start } = sending({ hook: dest({ TYPE: 'json', URL: j.url }) });
    start();
    try {
      await sender.ready();
      store.outbox.append(Array.from({ length: 600 }, (_, i) => scanned(i)));
      await j.until((c) => c.filter((x) => x.status === 200).length >= 2);
      // What came while it waited goes in the next batch.
      store.outbox.append([scanned(999)]);
      await j.until((c) => c.filter((x) => x.status === 200).length >= 3);
      await sender.looked();
      assert.deepEqual(j.calls.map((c) => [c.status, c.json.events.length]), [[200, 500], [429, 100], [200, 100], [200, 1]]);
      const ids = j.taken.flatMap((c) => c.json.events.map((e: { id: number }) => e.id));
      assert.equal(new Set(ids).size, ids.length, 'each told once');
      assert.equal(ids.length, 601);
    } finally {
      await sender.stop();
    }
  });

  test("a 429 is obeyed: the message goes again only after Discord's Retry-After", async () => {
    const d = await fake(new DiscordFake());
    d.rateLimitNext(1, 1);
    const { store, sender, start } = sending({ discord: dest({ TYPE: 'discord', URL: d.webhookUrl }) });
    start();
    try {
      await sender.ready();
      store.outbox.append([scanned(1)]);
      await d.until((c) => c.some((x) => x.status === 204));
      assert.deepEqual(d.calls.map((c) => c.status), [429, 204]);
      assert.ok(d.calls[1]!.at - d.calls[0]!.at >= 1000, 'not before Retry-After (1 s)');
    } finally {
      await sender.stop();
    }
  });

  test('a destination answering 500 for a while gets every event afterwards, once; the secret is in no log line', async () => {
    const j = await fake(new JsonReceiverFake());
    j.failNext(4, { status: 500, body: 'oops' });
    const { log, lines } = capture();
    const url = `${j.url}/hooks/s3cr3t-path-token`;
    const { store, sender, start } = sending({ hook: dest({ TYPE: 'json', URL: url }) }, { log });
    start();
    try {
      await sender.ready();
      store.outbox.append([scanned(1), scanned(2)]);
      await j.until((c) => c.some((x) => x.status === 200));
      store.outbox.append([scanned(3)]);
      await j.until((c) => c.filter((x) => x.status === 200).length >= 2);
      const folders = j.taken.flatMap((c) => c.json.events.map((e: NotifyEvent) => e.folder));
      assert.deepEqual(folders, [scanned(1).folder, scanned(2).folder, scanned(3).folder]);
      assert.ok(lines.some((l) => l.includes('not taken')), 'the retries are logged');
      assert.ok(!lines.some((l) => l.includes('s3cr3t-path-token')), 'the URL is masked in every line');
    } finally {
      await sender.stop();
    }
  });

  test('EVENTS, TARGETS and TRIGGERS choose what a destination gets', async () => {
    const j = await fake(new JsonReceiverFake());
    const { store, sender, start } = sending({ hook: dest({ TYPE: 'json', URL: j.url, EVENTS: ['scanned', 'failed'], TARGETS: ['plex'], TRIGGERS: ['sonarr'] }) });
    start();
    try {
      await sender.ready();
      store.outbox.append([
        scanned(1, { trigger: 'Radarr' }),
        scanned(2, { trigger: 'Sonarr', target: 'jellyfin' }),
        { kind: 'waiting', at: Date.now(), reason: 'mount down' },
        scanned(3, { trigger: 'Sonarr' }),
      ]);
      await j.until((c) => c.length >= 1);
      assert.deepEqual(j.calls[0]!.json.events.map((e: NotifyEvent) => e.folder), [scanned(3).folder]);
    } finally {
      await sender.stop();
    }
  });

  test('events older than GIVE_UP_AFTER that were never tried are sent: the give-up counts from the first refusal', async () => {
    const j = await fake(new JsonReceiverFake());
    const { log, lines } = capture();
    const { store, sender, start } = sending({ hook: dest({ TYPE: 'json', URL: j.url, GIVE_UP_AFTER: 60 }) }, { log });
    start();
    try {
      await sender.ready();
      store.outbox.append([scanned(1, { at: Date.now() - 120_000 }), scanned(2, { at: Date.now() - 90_000 }), scanned(3)]);
      await j.until((c) => c.length >= 1);
      assert.deepEqual(j.calls[0]!.json.events.map((e: NotifyEvent) => e.folder), [scanned(1).folder, scanned(2).folder, scanned(3).folder]);
      assert.equal(lines.filter((l) => l.includes('given up')).length, 0);
    } finally {
      await sender.stop();
    }
  });

  test('hookshot, apprise, ntfy and gotify each take the batch through their own API', async () => {
    const h = await fake(new HookshotFake());
    const a = await fake(new AppriseFake());
    const n = await fake(new NtfyFake('scans', 'tk_abc123'));
    const g = await fake(new GotifyFake('AppTokenXYZ'));
    const { store, sender, start } = sending({
      matrix: dest({ TYPE: 'hookshot', URL: `${h.url}/webhook/${h.hookId}` }),
      apprise: dest({ TYPE: 'apprise', URL: `${a.url}/notify/${a.key}` }),
      phone: dest({ TYPE: 'ntfy', URL: `${n.url}/scans`, TOKEN: 'tk_abc123' }),
      gotify: dest({ TYPE: 'gotify', URL: g.url, TOKEN: 'AppTokenXYZ' }),
    });
    start();
    try {
      await sender.ready();
      // 200 long lines: more than ntfy's 4,096 bytes, so its message is cut to fit.
      store.outbox.append([...Array.from({ length: 200 }, (_, i) => scanned(i)), { kind: 'failed', at: Date.now(), target: 'plex', folder: '/x', reason: 'boom' }]);
      for (const f of [h, a, n, g]) await f.until((c) => c.length >= 1);
      for (const f of [h, a, n, g]) assert.deepEqual(f.calls.map((c) => c.status), [200], f.constructor.name);
      assert.match(h.calls[0]!.json.text, /200 scanned, 1 failed/);
      assert.equal(a.calls[0]!.json.type, 'failure');
      assert.equal(n.calls[0]!.headers.priority, 'high');
      assert.ok(Buffer.byteLength(n.calls[0]!.raw) <= 4096);
      assert.equal(g.calls[0]!.json.priority, 8);
    } finally {
      await sender.stop();
    }
  });
});

test('a destination that never answers holds back no delivery', async () => {
  // A service that takes the request and never answers (the sender's own timeout is 15 s).
  const held: import('node:http').ServerResponse[] = [];
  const hang = createServer((_req, res) => void held.push(res));
  await new Promise<void>((r) => hang.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(hang.address() as import('node:net').AddressInfo).port}/hook`;
  const store = new QueueStore(':memory:');
  const target: Target = { name: 'plex', serial: true, deliver: async () => ({ outcome: 'done' }), available: async () => ({ ok: true }) };
  const scheduler = new Scheduler(store, [target], pino({ level: 'silent' }));
  const sender = new NotifySender(store.outbox, { hook: dest({ TYPE: 'json', URL: url, BATCH_SECONDS: 0 }) }, pino({ level: 'silent' }), { relayId: 'local', pollMs: 10 });
  sender.start();
  await sender.ready();
  await scheduler.start();
  try {
    store.enqueueMany([{ folder: '/m/first', files: [], source: 'Manual', event: 'Manual', updateType: 'Modified', priority: 0 }], { delayMs: 0, maxMs: 0 });
    scheduler.poke();
    await waitFor(() => held.length === 1, 10_000, 'the first notification to hang');
    const folders = Array.from({ length: 30 }, (_, i) => `/m/${i}`);
    store.enqueueMany(folders.map((folder) => ({ folder, files: [], source: 'Manual' as const, event: 'Manual', updateType: 'Modified' as const, priority: 0 })), { delayMs: 0, maxMs: 0 });
    scheduler.poke();
    await waitFor(() => store.countOpen() === 0, 10_000, 'every scan delivered');
    assert.equal(held.length, 1, 'the notification is still waiting for its answer');
    assert.equal(store.outbox.latestId(), 31, 'every delivery wrote its event');
  } finally {
    await scheduler.stop();
    for (const r of held) r.destroy();
    await sender.stop();
    hang.closeAllConnections();
    await new Promise((r) => hang.close(r));
  }
});

describe('notifications from a shared queue', () => {
  let cluster: PgCluster;
  before(async () => {
    cluster = await startPgCluster();
  });
  after(() => cluster?.destroy());

  test('two relays on one PostgreSQL queue send each event once', async () => {
    const j = await fake(new JsonReceiverFake());
    const url = await cluster.createDatabase();
    const a = await PgQueueStore.open({ url, relayId: 'relay-a' });
    const b = await PgQueueStore.open({ url, relayId: 'relay-b' });
    const destinations = { hook: dest({ TYPE: 'json', URL: j.url }) };
    const senders = [a, b].map((s) => new NotifySender(s.outbox, destinations, pino({ level: 'silent' }), { relayId: s.shared.relayId, pollMs: 20 }));
    senders.forEach((s) => s.start());
    try {
      await Promise.all(senders.map((s) => s.ready()));
      for (let i = 0; i < 20; i++) await (i % 2 ? a : b).outbox.append([scanned(i)]);
      await j.until((c) => c.flatMap((x) => x.json.events).length >= 20);
      // Both relays look again after the last event was taken: nothing more is sent.
      for (const s of senders) await s.looked();
      const ids = j.calls.flatMap((c) => c.json.events.map((e: { id: number }) => e.id));
      assert.equal(ids.length, 20);
      assert.equal(new Set(ids).size, 20);
    } finally {
      for (const s of senders) await s.stop();
      await a.close();
      await b.close();
    }
  });
});
