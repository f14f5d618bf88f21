import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { ScanItem, Target } from '../../src/core/scan.ts';
import { scanRequestSchema, type ScanRequest } from '../../src/core/scan.ts';
import { parseConfig } from '../../src/config/load.ts';
import { QueueIntake } from '../../src/queue/door.ts';
import { relayRoutes } from '../../src/queue/route.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { RelayRegistry } from '../../src/queue/pg/relays.ts';
import type { DeliveryRow, QueueEntry } from '../../src/queue/types.ts';
import { Scheduler } from '../../src/queue/scheduler.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { recordingLogger } from '../helpers/plex-target.ts';
import { waitFor } from '../helpers/relay.ts';

// Which targets a scan goes to when the relays sharing one PostgreSQL queue have different targets. Relays run
// in process here (a store and a scheduler each, on one real PostgreSQL); each media server is a recording target
// that says who it is as a real server does (its own id, the same whichever relay asks).

let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

/** A media server: every scan it received, by folder. */
class Server {
  readonly scans: string[] = [];
  up = true;
  constructor(
    readonly id: string,
    readonly title: string,
  ) {}
}

/** A relay's view of a server: a target named as scanrelay names it ('plex'), answering with the server's id. */
function targetFor(server: Server, name = 'plex'): Target {
  return {
    name,
    serial: name === 'plex',
    async deliver(item: ScanItem) {
      server.scans.push(item.folder);
      return { outcome: 'done' };
    },
    async available() {
      return { ok: server.up };
    },
    async identity() {
      if (!server.up) throw new Error(`${server.title} (GET /identity) unreachable: connect ECONNREFUSED`);
      // A server that answers but cannot say who it is (a stand-in without /identity).
      if (!server.id) return undefined;
      return { id: server.id, name: server.title };
    },
  };
}

interface InRelay {
  store: PgQueueStore;
  scheduler: Scheduler;
  held: { on: boolean };
  /** Stops as `scanrelay` does on SIGTERM: deliveries end, the relay leaves the registry. */
  stop(): Promise<void>;
}

const running: InRelay[] = [];
after(async () => {
  for (const r of running) await r.stop().catch(() => undefined);
});

async function startRelay(url: string, relayId: string, targets: Target[], opts: { held?: boolean; log?: ReturnType<typeof silentLogger> } = {}): Promise<InRelay> {
  const log = opts.log ?? silentLogger();
  const store = await PgQueueStore.open({ url, relayId, leaseMs: 3000, pollMs: 200, log });
  const held = { on: opts.held ?? false };
  const scheduler = new Scheduler(store, targets, log, { retryBaseMs: 50, retryMaxMs: 200, held: () => held.on, heldRecheckMs: 100 });
  await scheduler.start();
  let stopped = false;
  const relay: InRelay = {
    store,
    scheduler,
    held,
    async stop() {
      if (stopped) return;
      stopped = true;
      await scheduler.stop();
      await store.close();
    },
  };
  running.push(relay);
  return relay;
}

const req = (folder: string, extra: Partial<ScanRequest> = {}) => scanRequestSchema.parse({ folder, source: 'Manual', ...extra });
const NOW = { delayMs: 0, maxMs: 0 };

/** Requests due at once, taken by each relay in turn (as webhooks spread over relays). */
async function sendAlternately(relays: InRelay[], folders: string[]): Promise<void> {
  for (const [i, f] of folders.entries()) {
    const via = relays[i % relays.length]!;
    await via.store.enqueueMany([req(f)], NOW);
    via.scheduler.poke();
  }
}

async function statusOf(store: PgQueueStore, folder: string): Promise<string | undefined> {
  const open = await store.view.listOpen();
  if (open.some((e) => e.folder === folder)) return open.find((e) => e.folder === folder)!.status;
  return (await store.view.listHistory({ text: folder })).find((e) => e.folder === folder)?.status;
}

describe('relays with different targets on one PostgreSQL queue', () => {
  test('a feeder relay with no target finds a scan due: the media relay beside Plex delivers it, once', async () => {
    const url = await cluster.createDatabase();
    const plex = new Server('plex-media-box', 'Media Box');
    // The media relay runs first but holds its deliveries, so the feeder is the one that finds the scan due.
    const media = await startRelay(url, 'media-box', [targetFor(plex)], { held: true });
    const feeder = await startRelay(url, 'feeder-box', []);
    await feeder.store.enqueueMany([req('/data/TV/Feeder Show')], NOW);
    feeder.scheduler.poke();
    await waitFor(async () => (await statusOf(feeder.store, '/data/TV/Feeder Show')) !== 'pending', 10_000, 'the feeder to take the scan out of pending');
    media.held.on = false;
    media.scheduler.poke();
    await waitFor(() => plex.scans.length > 0, 10_000, "the media relay to deliver the feeder's scan");
    await waitFor(async () => (await statusOf(media.store, '/data/TV/Feeder Show')) === 'done', 10_000, 'the scan to finish');
    assert.deepEqual(plex.scans, ['/data/TV/Feeder Show']);
    await feeder.stop();
    await media.stop();
  });

  test('no relay with a target is running: a due scan stays pending (one log line), and goes out once a relay with a target starts', async () => {
    const url = await cluster.createDatabase();
    const { log, lines } = recordingLogger();
    const feeder = await startRelay(url, 'feeder-box', [], { log });
    await feeder.store.enqueueMany([req('/data/TV/Early One'), req('/data/TV/Early Two')], NOW);
    feeder.scheduler.poke();
    const waiting = await waitFor(() => lines.find((l) => /no relay with a target is running/.test(l.msg)), 10_000, 'the waiting line');
    assert.equal(waiting!.msg, 'no relay with a target is running; 2 scans wait');
    const open = await feeder.store.view.listOpen();
    assert.deepEqual(open.map((e) => [e.folder, e.status, e.waiting]).sort(), [
      ['/data/TV/Early One', 'pending', 'no relay with a target is running'],
      ['/data/TV/Early Two', 'pending', 'no relay with a target is running'],
    ]);
    // More looks say nothing new.
    const before = lines.filter((l) => /no relay with a target/.test(l.msg)).length;
    for (let i = 0; i < 3; i++) await feeder.store.activateDue([], Date.now());
    assert.equal(lines.filter((l) => /no relay with a target/.test(l.msg)).length, before);

    const plex = new Server('plex-late', 'Late Plex');
    const media = await startRelay(url, 'media-box', [targetFor(plex)]);
    await waitFor(() => plex.scans.length === 2, 10_000, 'both scans delivered');
    assert.deepEqual(plex.scans.sort(), ['/data/TV/Early One', '/data/TV/Early Two']);
    await feeder.stop();
    await media.stop();
  });

  test('two relays each beside its own Plex: every scan reaches both servers once; the history names each server', async () => {
    const url = await cluster.createDatabase();
    const north = new Server('plex-north', 'North');
    const south = new Server('plex-south', 'South');
    const a = await startRelay(url, 'relay-north', [targetFor(north)]);
    const b = await startRelay(url, 'relay-south', [targetFor(south)]);
    const folders = Array.from({ length: 6 }, (_, i) => `/data/TV/Both ${i}`);
    await sendAlternately([a, b], folders);
    await waitFor(() => north.scans.length >= 6 && south.scans.length >= 6, 15_000, 'both servers to get the 6');
    await waitFor(async () => (await a.store.countOpen()) === 0, 10_000, 'every scan to finish');
    assert.deepEqual([...north.scans].sort(), folders);
    assert.deepEqual([...south.scans].sort(), folders);
    const [item] = await a.store.view.listHistory({ text: '/data/TV/Both 0' });
    assert.deepEqual(item!.deliveries.map((d) => [d.label, d.status, d.relay]).sort(), [
      ['plex (North)', 'done', 'relay-north'],
      ['plex (South)', 'done', 'relay-south'],
    ]);
    await a.stop();
    await b.stop();
  });

  test('two relays with the same Plex: each scan reaches it once', async () => {
    const url = await cluster.createDatabase();
    const plex = new Server('plex-shared', 'Shared');
    const a = await startRelay(url, 'relay-a', [targetFor(plex)]);
    const b = await startRelay(url, 'relay-b', [targetFor(plex)]);
    const folders = Array.from({ length: 6 }, (_, i) => `/data/TV/Same ${i}`);
    await sendAlternately([a, b], folders);
    await waitFor(async () => plex.scans.length >= 6 && (await a.store.countOpen()) === 0, 15_000, 'the 6 delivered');
    assert.deepEqual([...plex.scans].sort(), folders);
    const [item] = await a.store.view.listHistory({ text: '/data/TV/Same 0' });
    assert.deepEqual(item!.deliveries.map((d) => d.label), ['plex (Shared)']);
    await a.stop();
    await b.stop();
  });

  test('two relays beside a Plex that cannot say its id: known by its kind alone, each scan reaches it once, and the log says why', async () => {
    const url = await cluster.createDatabase();
    const plex = new Server('', 'No Id');
    const { log, lines } = recordingLogger();
    const a = await startRelay(url, 'relay-a', [targetFor(plex)], { log });
    const b = await startRelay(url, 'relay-b', [targetFor(plex)]);
    const folders = Array.from({ length: 6 }, (_, i) => `/data/TV/No Id ${i}`);
    await sendAlternately([a, b], folders);
    await waitFor(async () => plex.scans.length >= 6 && (await a.store.countOpen()) === 0, 15_000, 'the 6 delivered');
    assert.deepEqual([...plex.scans].sort(), folders);
    const [item] = await a.store.view.listHistory({ text: '/data/TV/No Id 0' });
    assert.deepEqual(item!.deliveries.map((d) => d.target), ['plex']);
    assert.ok(lines.some((l) => /does not say its id.*known as 'plex'/.test(l.msg)));
    await a.stop();
    await b.stop();
  });

  test('a relay that goes away with a target only it had: its deliveries, and those of scans due meanwhile, wait (shown so, not failed) and go out when it is back', async () => {
    const url = await cluster.createDatabase();
    const north = new Server('plex-north', 'North');
    const south = new Server('plex-south', 'South');
    const a = await startRelay(url, 'relay-north', [targetFor(north)]);
    // South's relay holds its deliveries, then stops cleanly before sending them.
    let b = await startRelay(url, 'relay-south', [targetFor(south)], { held: true });
    await a.store.enqueueMany([req('/data/TV/While Away')], NOW);
    a.scheduler.poke();
    await waitFor(() => north.scans.length === 1, 10_000, 'North to get it');
    await b.stop();
    const [entry] = await a.store.view.listOpen();
    assert.equal(entry!.status, 'active');
    const southDelivery = entry!.deliveries.find((d) => d.label === 'plex (South)');
    assert.equal(southDelivery?.status, 'waiting');
    assert.equal(southDelivery?.unserved, true, 'shown as waiting for a relay with that server');
    assert.equal(entry!.deliveries.find((d) => d.label === 'plex (North)')?.unserved, false);
    assert.deepEqual(south.scans, []);
    // A scan that becomes due while South's relay is away (a restart, an update) is South's too: it waits for it.
    await a.store.enqueueMany([req('/data/TV/Due While Away')], NOW);
    a.scheduler.poke();
    await waitFor(() => north.scans.length === 2, 10_000, 'North to get the second');
    const [later] = (await a.store.view.listOpen()).filter((e) => e.folder === '/data/TV/Due While Away');
    assert.equal(later!.deliveries.find((d) => d.label === 'plex (South)')?.unserved, true, 'a delivery for South, waiting');

    b = await startRelay(url, 'relay-south', [targetFor(south)]);
    const both = ['/data/TV/Due While Away', '/data/TV/While Away'];
    await waitFor(
      async () => south.scans.length === 2 && (await statusOf(a.store, both[0]!)) === 'done' && (await statusOf(a.store, both[1]!)) === 'done',
      10_000,
      'South to get both once back',
    );
    assert.deepEqual([...north.scans].sort(), both);
    assert.deepEqual([...south.scans].sort(), both);
    await a.stop();
    await b.stop();
  });

  test('a relay that restarts while its Plex is down: scans due meanwhile still reach that Plex once it answers', async () => {
    const url = await cluster.createDatabase();
    const north = new Server('plex-north', 'North');
    const south = new Server('plex-south', 'South');
    const a = await startRelay(url, 'relay-north', [targetFor(north)]);
    let b = await startRelay(url, 'relay-south', [targetFor(south)]);
    await b.stop();
    south.up = false;
    b = await startRelay(url, 'relay-south', [targetFor(south)]);
    await a.store.enqueueMany([req('/data/TV/South Down')], NOW);
    a.scheduler.poke();
    await waitFor(() => north.scans.length === 1, 10_000, 'North to get it');
    assert.deepEqual(south.scans, []);
    south.up = true;
    await waitFor(async () => south.scans.length === 1 && (await statusOf(a.store, '/data/TV/South Down')) === 'done', 15_000, 'South to get it once up');
    assert.deepEqual(south.scans, ['/data/TV/South Down']);
    await a.stop();
    await b.stop();
  });

  test("a Plex that is down when its relay starts: the relay takes none of its deliveries until Plex tells its id; then they go", async () => {
    const url = await cluster.createDatabase();
    const plex = new Server('plex-slow', 'Slow');
    plex.up = false;
    const { log, lines } = recordingLogger();
    const media = await startRelay(url, 'media-box', [targetFor(plex)], { log });
    await media.store.enqueueMany([req('/data/TV/Before Plex')], NOW);
    media.scheduler.poke();
    const line = await waitFor(() => lines.find((l) => l.target === 'plex' && /server id/.test(l.msg)), 10_000, 'the line about the unknown server id');
    assert.match(line!.msg, /waiting for the server id/);
    assert.equal((await media.store.view.listOpen())[0]?.status, 'pending');
    plex.up = true;
    await waitFor(() => plex.scans.length === 1, 15_000, 'the scan once Plex is up');
    assert.deepEqual(plex.scans, ['/data/TV/Before Plex']);
    await media.stop();
  });

  test('after an upgrade: deliveries created under the old name "plex" are still delivered, once', async () => {
    const url = await cluster.createDatabase();
    // A queue written before relays had ids: the scan was activated with a delivery named after the target.
    const old = await PgQueueStore.open({ url, relayId: 'old-relay' });
    await old.enqueueMany([req('/data/TV/Old Name')], NOW);
    assert.equal(await old.activateDue(['plex'], Date.now()), 1);
    assert.deepEqual((await old.view.listOpen())[0]!.deliveries.map((d) => d.target), ['plex']);
    await old.close();
    const plex = new Server('plex-upgraded', 'Upgraded');
    const media = await startRelay(url, 'media-box', [targetFor(plex)]);
    await waitFor(async () => (await statusOf(media.store, '/data/TV/Old Name')) === 'done', 10_000, 'the old delivery to go');
    assert.deepEqual(plex.scans, ['/data/TV/Old Name']);
    await media.stop();
  });
});

describe('where a relay routes a request when the relays sharing its queue have other targets', () => {
  /** The intake `scanrelay server` builds for a relay with these targets and config (server/run.ts). */
  const intakeOf = (relay: InRelay, targets: Target[], config: Record<string, unknown> = {}) =>
    new QueueIntake(relay.store, relayRoutes(parseConfig({ SERVER_PASS: 'a-long-enough-secret-for-tests', ...config }).config, targets), () => NOW, () => relay.scheduler.poke());
  const deliveredTo = async (store: PgQueueStore, folder: string) =>
    (await store.view.listHistory({ text: folder })).find((e) => e.folder === folder)?.deliveries.map((d) => `${d.label} ${d.status}`).sort();

  test("relay A with Plex only, relay B with Jellyfin only: a request to A reaches A's Plex and B's Jellyfin; A's Plex EXCLUDE leaves Plex out, not Jellyfin; no other name is made up", async () => {
    const url = await cluster.createDatabase();
    const plex = new Server('plex-a', 'A Plex');
    const jellyfin = new Server('jellyfin-b', 'B Jellyfin');
    const b = await startRelay(url, 'relay-b', [targetFor(jellyfin, 'jellyfin')]);
    const aTargets = [targetFor(plex, 'plex')];
    const a = await startRelay(url, 'relay-a', aTargets);
    const intake = intakeOf(a, aTargets, { PLEX_ENABLED: false, TARGETS: { plex: { TYPE: 'plex', URL: 'http://127.0.0.1:32400', EXCLUDE: ['/Music/'] } } });
    const [tv, music, emby] = await intake.enqueue([req('/data/TV/Both Servers'), req('/data/Music/Only Jellyfin'), req('/data/TV/Emby Asked', { targets: ['emby'] })]);
    assert.equal(tv!.status, 'queued');
    // Plex excludes it, Jellyfin (whose filters A cannot know) takes it: queued, not answered unrouted.
    assert.equal(music!.status, 'queued');
    // A trigger that asks for a target no relay of the queue has: nothing to route to.
    assert.equal(emby!.status, 'unrouted');
    await waitFor(
      async () => (await statusOf(a.store, '/data/TV/Both Servers')) === 'done' && (await statusOf(a.store, '/data/Music/Only Jellyfin')) === 'done',
      15_000,
      'both scans to finish',
    );
    assert.deepEqual(plex.scans, ['/data/TV/Both Servers']);
    assert.deepEqual([...jellyfin.scans].sort(), ['/data/Music/Only Jellyfin', '/data/TV/Both Servers']);
    // Exactly these deliveries: none for a name neither relay has.
    assert.deepEqual(await deliveredTo(a.store, '/data/TV/Both Servers'), ['jellyfin (B Jellyfin) done', 'plex (A Plex) done']);
    assert.deepEqual(await deliveredTo(a.store, '/data/Music/Only Jellyfin'), ['jellyfin (B Jellyfin) done']);
    assert.equal((await a.store.view.listHistory({ text: '/data/TV/Emby Asked' })).length, 0);
    await a.stop();
    await b.stop();
  });

  test("a relay that joins the queue after A started: A's requests reach its target from A's next renewal, and stay A's alone before", async () => {
    const url = await cluster.createDatabase();
    const plex = new Server('plex-a', 'A Plex');
    const jellyfin = new Server('jellyfin-b', 'B Jellyfin');
    const aTargets = [targetFor(plex, 'plex')];
    const a = await startRelay(url, 'relay-a', aTargets);
    const intake = intakeOf(a, aTargets);
    await intake.enqueue([req('/data/TV/Alone')]);
    await waitFor(async () => (await statusOf(a.store, '/data/TV/Alone')) === 'done', 10_000, 'the first scan to finish');
    const b = await startRelay(url, 'relay-b', [targetFor(jellyfin, 'jellyfin')]);
    await waitFor(() => a.store.shared.peerTargets().includes('jellyfin'), 10_000, "A to learn B's Jellyfin at a renewal");
    await intake.enqueue([req('/data/TV/Together')]);
    await waitFor(async () => (await statusOf(a.store, '/data/TV/Together')) === 'done', 15_000, 'the second scan to finish');
    assert.deepEqual(plex.scans, ['/data/TV/Alone', '/data/TV/Together']);
    assert.deepEqual(jellyfin.scans, ['/data/TV/Together']);
    assert.deepEqual(await deliveredTo(a.store, '/data/TV/Alone'), ['plex (A Plex) done']);
    await a.stop();
    await b.stop();
  });
});

describe('how the queue view marks deliveries no running relay can send', () => {
  test('waiting, or claimed by a relay whose lease ran out (it died), for a server no running relay has: unserved; otherwise not', async () => {
    const url = await cluster.createDatabase();
    // The queue's tables, then a registry of its own: a relay with no target that looks at the queue.
    await (await PgQueueStore.open({ url, relayId: 'viewer' })).close();
    const pool = new pg.Pool({ connectionString: url });
    const registry = new RelayRegistry(pool, 'viewer', 3000);
    await registry.join([]);
    const now = 1_000_000;
    const delivery = (target: string, status: DeliveryRow['status'], lease: number | null): DeliveryRow => ({
      scan_id: 1, target, status, attempts: 1, next_at: 0, last_error: null, detail: null, finished_at: null, file_checks: 0, priority: 0, relay: 'relay-south', lease_until: lease,
    });
    const entry = (deliveries: DeliveryRow[], status = 'active') => ({ ...ENTRY, status, deliveries });
    const seen = { label: (k: string) => (k === 'plex@south' ? 'plex (South)' : undefined), served: (k: string) => k === 'plex@north', any: true, used: true };
    const [e] = registry.describe(
      [entry([delivery('plex@south', 'waiting', null), delivery('plex@south', 'sending', now - 1), delivery('plex@south', 'sending', now + 5000), delivery('plex@north', 'waiting', null), delivery('plex@south', 'done', null)])],
      seen,
      now,
    );
    assert.deepEqual(e!.deliveries.map((d) => [d.status, d.unserved]), [['waiting', true], ['sending', true], ['sending', false], ['waiting', false], ['done', false]]);
    assert.equal(e!.deliveries[0]!.label, 'plex (South)');
    // A due scan waits for a relay with a target only while none runs.
    const pending = { ...ENTRY, status: 'pending', dueAt: now - 1, deliveries: [] };
    assert.equal(registry.describe([{ ...pending }], { ...seen, any: false }, now)[0]!.waiting, 'no relay with a target is running');
    assert.equal(registry.describe([{ ...pending }], seen, now)[0]!.waiting, undefined);
    assert.equal(registry.describe([{ ...pending, dueAt: now + 1 }], { ...seen, any: false }, now)[0]!.waiting, undefined, 'not due yet: the delay');
    await registry.leave();
    await pool.end();
  });
});

const ENTRY: QueueEntry = {
  id: 1, folder: '/data/TV/X', status: 'active', priority: 0, source: 'Manual', event: 'Manual', title: null, requests: 1, ids: {}, updateType: 'Modified',
  upgrade: false, removal: false, firstAt: 0, lastAt: 0, dueAt: 0, finishedAt: null, files: [], fileCount: 0, deliveries: [],
};
