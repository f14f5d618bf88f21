import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { ScanItem, Target } from '../../src/core/scan.ts';
import { scanRequestSchema } from '../../src/core/scan.ts';
import { silentLogger, type Logger } from '../../src/core/logger.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { Scheduler } from '../../src/queue/scheduler.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { recordingLogger } from '../helpers/plex-target.ts';
import { waitFor } from '../helpers/relay.ts';

// Faults of the shared queue found by a fault run, each on the real PostgreSQL: an idle relay that keeps waking
// itself, Plex's turn lost on a connection blip or a restart while Plex still scans, a relay taking the turn over
// from a dead one without asking Plex, and a relay whose clock is off comparing its own times with another's.
// Relays run in process (a store and a scheduler each); this file owns its cluster, since one test restarts it.

let cluster: PgCluster;
let admin: pg.Client;
before(async () => {
  cluster = await startPgCluster({ statementStats: true });
  admin = new pg.Client({ connectionString: cluster.url() });
  await admin.connect();
});
after(async () => {
  await admin?.end().catch(() => undefined);
  cluster?.destroy();
});

/**
 * One media server seen by every relay: it scans one folder at a time, and a scan runs until the test ends it
 * (finish), as Plex's does until its library scan is over. A scan sent while another runs is an overlap.
 */
class Server {
  readonly received: string[] = [];
  readonly overlaps: Array<[string, string]> = [];
  current: string | undefined;
  private readonly ends = new Map<string, () => void>();

  constructor(readonly id = 'server-1') {}

  /** A relay's target for this server; `serial` as Plex (one scan at a time, held until the scan ends). */
  target(name = 'plex', serial = true): Target {
    return {
      name,
      kind: 'plex',
      serial,
      deliver: async (item: ScanItem) => {
        this.received.push(item.folder);
        if (!serial) return { outcome: 'done' };
        if (this.current !== undefined) this.overlaps.push([this.current, item.folder]);
        this.current = item.folder;
        // Completion: the relay's after-step waits for the scan to end, holding the turn (as PlexTarget's watch).
        return {
          outcome: 'done',
          after: (signal) =>
            new Promise<string>((resolve, reject) => {
              this.ends.set(item.folder, () => resolve('completed'));
              signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
            }),
        };
      },
      available: async () => ({ ok: true }),
      identity: async () => ({ id: this.id, name: 'Media Box' }),
      scanning: async () => (this.current === undefined ? [] : [this.current]),
    };
  }

  /** A scan of the test's own that runs on the server (Plex's own library scan), until finish(). */
  runOwnScan(name: string): void {
    this.current = name;
    this.own = name;
  }

  /** The scan runOwnScan started, if it runs. */
  private own: string | undefined;

  async finish(folder: string): Promise<void> {
    // A relay's scan is ended through its after-step, which may not be waiting yet: only the server's own scan ends here.
    if (this.own === folder && this.current === folder) {
      this.current = undefined;
      this.own = undefined;
      return;
    }
    await waitFor(() => this.ends.has(folder), 15_000, `the after-step of ${folder}`);
    this.current = undefined;
    this.ends.get(folder)!();
    this.ends.delete(folder);
  }
}

interface InRelay {
  id: string;
  store: PgQueueStore;
  scheduler: Scheduler;
  /** Every answer of takeTurn this relay got, in order. */
  turns: Array<boolean | string>;
  /** Each look at the queue (activateDue) this relay made. */
  looks: number;
  stop(): Promise<void>;
}

const running: InRelay[] = [];
after(async () => {
  for (const r of running) await r.stop().catch(() => undefined);
});

const LEASE_MS = 1500;

async function startRelay(
  url: string,
  id: string,
  targets: Target[],
  opts: { clock?: () => number; log?: Logger; pollMs?: number; leaseMs?: number; instance?: string } = {},
): Promise<InRelay> {
  const log = opts.log ?? silentLogger();
  const instance = opts.instance === undefined ? {} : { instance: { id: opts.instance, release: () => undefined } };
  const store = await PgQueueStore.open({ url, relayId: id, leaseMs: opts.leaseMs ?? LEASE_MS, pollMs: opts.pollMs ?? 200, log, clock: opts.clock, ...instance });
  const relay: InRelay = { id, store, scheduler: undefined as unknown as Scheduler, turns: [], looks: 0, stop: async () => undefined };
  // Counted where the scheduler calls them: the events the tests wait for instead of sleeping.
  const take = store.shared.takeTurn;
  (store.shared as { takeTurn: typeof take }).takeTurn = async (t) => {
    const got = await take(t);
    relay.turns.push(got);
    return got;
  };
  const activate = store.activateDue.bind(store);
  store.activateDue = async (...args) => {
    relay.looks++;
    return activate(...args);
  };
  const scheduler = new Scheduler(store, targets, log, { retryBaseMs: 50, retryMaxMs: 200, settleRecheckMs: 100, clock: opts.clock });
  relay.scheduler = scheduler;
  await scheduler.start();
  let stopped = false;
  relay.stop = async () => {
    if (stopped) return;
    stopped = true;
    await scheduler.stop();
    await store.close();
  };
  running.push(relay);
  return relay;
}

const req = (folder: string) => scanRequestSchema.parse({ folder, source: 'Manual' });
const NOW = { delayMs: 0, maxMs: 0 };

async function send(relay: InRelay, folder: string, timing = NOW, now?: number): Promise<void> {
  await relay.store.enqueueMany([req(folder)], timing, now);
  relay.scheduler.poke();
}

/** Waits until `relay` has made `n` more looks at the queue than it had made when called. */
async function looksMore(relay: InRelay, n: number, what: string): Promise<void> {
  const from = relay.looks;
  await waitFor(() => relay.looks >= from + n, 30_000, `${n} more looks of ${relay.id} (${what})`);
}

/** The relay's connections as PostgreSQL sees them (the pool and the listening session). */
async function backendsOf(relayId: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name LIKE $1`, [`scanrelay ${relayId}%`]);
  return rows.map((r) => r.pid);
}

describe('an idle relay rests', () => {
  // queue/pg/session.ts sent pg_notify on release from the connection that LISTENs, and PostgreSQL delivers a
  // session's own notifications to it: each empty look woke the relay for the next, about 4,000 a second.
  test('a relay with nothing to do costs its renewals and its safety poll, not thousands of statements a second', async (t) => {
    const url = await cluster.createDatabase();
    const server = new Server();
    const relay = await startRelay(url, 'idle-relay', [server.target()], { pollMs: 500 });
    // The relay's renewal of its registry row: LEASE_MS / 3 apart, on a timer; counted by PostgreSQL.
    const renewals = async () =>
      Number(
        (
          await admin.query<{ n: string }>(
            `SELECT coalesce(sum(s.calls), 0) AS n FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 AND s.query LIKE 'INSERT INTO relays%'`,
            [new URL(url).pathname.slice(1)],
          )
        ).rows[0]!.n,
      );
    await admin.query('SELECT pg_stat_statements_reset()');
    await waitFor(async () => (await renewals()) >= 4, 60_000, 'four renewals of the relay');
    const { rows } = await admin.query<{ n: string }>(
      `SELECT coalesce(sum(s.calls), 0) AS n FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1`,
      [new URL(url).pathname.slice(1)],
    );
    const perRenewal = Number(rows[0]!.n) / (await renewals());
    t.diagnostic(`statements per renewal period (0.5 s): ${perRenewal.toFixed(1)}`);
    // A renewal period (0.5 s here) holds one registry renewal (5 statements), one claim renewal and one look
    // (5 statements): about a dozen. The self-waking relay made several hundred in the same time.
    assert.ok(perRenewal <= 25, `an idle relay made ${perRenewal.toFixed(0)} statements per renewal period`);
    assert.deepEqual(server.received, []);
    await relay.stop();
  });
});

describe("Plex's turn while Plex scans", () => {
  /** Relay A sends `folder`, whose scan then runs on the server; relay B has `next` due meanwhile. */
  async function scanRunningOnA(url: string, server: Server, folder: string, next: string) {
    const a = await startRelay(url, 'relay-a', [server.target()]);
    await send(a, folder);
    await waitFor(() => server.current === folder, 15_000, `relay-a to send ${folder}`);
    const b = await startRelay(url, 'relay-b', [server.target()]);
    await send(b, next);
    await waitFor(() => b.turns.includes(false), 15_000, 'relay-b to find the turn taken');
    return { a, b };
  }

  test('a connection blip of the holder: its turn is not freed, and no other relay sends while its scan runs', async () => {
    const url = await cluster.createDatabase();
    const server = new Server();
    const { a, b } = await scanRunningOnA(url, server, '/tv/Blip One', '/tv/Blip Two');
    // Every connection of relay-a ends, as a network blip or an operator's pg_terminate_backend does.
    const pids = await backendsOf('relay-a');
    assert.ok(pids.length >= 2, 'relay-a has its pool and its listening session open');
    await admin.query(`SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid`, [pids]);
    await waitFor(async () => (await backendsOf('relay-a')).length > 0 && !(await backendsOf('relay-a')).some((p) => pids.includes(p)), 15_000, 'relay-a to reconnect');
    // Relay-b looks again and again (its safety poll) while relay-a's scan still runs.
    await looksMore(b, 5, 'after the blip');
    assert.deepEqual(server.overlaps, [], 'nothing was sent while the scan of relay-a ran');
    assert.deepEqual(server.received, ['/tv/Blip One']);
    await server.finish('/tv/Blip One');
    await waitFor(() => server.received.includes('/tv/Blip Two'), 15_000, 'the next scan once the first ended');
    await server.finish('/tv/Blip Two');
    assert.deepEqual(server.overlaps, []);
    await b.stop();
    await a.stop();
  });

  test('a PostgreSQL restart while the holder\'s scan runs: still one scan at a time', async () => {
    const url = await cluster.createDatabase();
    const server = new Server();
    const { a, b } = await scanRunningOnA(url, server, '/tv/Restart One', '/tv/Restart Two');
    cluster.stopNow();
    cluster.start();
    await admin.end().catch(() => undefined);
    admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    await waitFor(async () => (await backendsOf('relay-a')).length > 0 && (await backendsOf('relay-b')).length > 0, 30_000, 'both relays to reconnect');
    await looksMore(b, 5, 'after the restart');
    assert.deepEqual(server.overlaps, [], 'nothing was sent while the scan of relay-a ran');
    await server.finish('/tv/Restart One');
    await waitFor(() => server.received.includes('/tv/Restart Two'), 30_000, 'the next scan once the first ended');
    await server.finish('/tv/Restart Two');
    assert.deepEqual(server.overlaps, []);
    await b.stop();
    await a.stop();
  });

  test('the holder dies while its scan runs: another relay takes the turn over only after its lease, and asks the server before it sends', async () => {
    const url = await cluster.createDatabase();
    const server = new Server();
    const { log, lines } = recordingLogger();
    const a = await startRelay(url, 'relay-a', [server.target()]);
    await send(a, '/tv/Dead One');
    await waitFor(() => server.current === '/tv/Dead One', 15_000, 'relay-a to send');
    const b = await startRelay(url, 'relay-b', [server.target()], { log });
    await send(b, '/tv/Dead Two');
    await waitFor(() => b.turns.includes(false), 15_000, 'relay-b to find the turn taken');
    // relay-a dies as with kill -9: its timers stop, its connections end, it releases nothing.
    const before = b.turns.length;
    await crash(a);
    await waitFor(() => b.turns.slice(before).some(Boolean), 30_000, 'relay-b to take the turn once the dead relay\'s lease ran out');
    await looksMore(b, 3, 'while the dead relay\'s scan runs');
    assert.deepEqual(server.received, ['/tv/Dead One'], 'nothing sent while the server still scans');
    assert.ok(b.turns.slice(before).includes('taken over'), 'relay-b knows it took the turn over from a dead relay');
    assert.ok(lines.some((l) => /took the one-at-a-time turn over/.test(l.msg)), 'and says why it waits');
    // The dead relay's scan ends on the server; nobody is left to see it.
    server.current = undefined;
    await waitFor(() => server.received.includes('/tv/Dead Two'), 15_000, 'relay-b to send once the server is idle');
    assert.deepEqual(server.overlaps, []);
    await server.finish('/tv/Dead Two');
    await b.stop();
  });
});

describe('one Plex under two names on a shared queue', () => {
  test('a relay with two names for one server (its PLEX_* keys and a TARGETS entry) sends it one scan at a time', async () => {
    const url = await cluster.createDatabase();
    const server = new Server();
    const a = await startRelay(url, 'relay-a', [server.target('plex'), server.target('movies')]);
    await send(a, '/tv/Named Twice');
    await waitFor(() => server.current !== undefined, 15_000, 'a first scan');
    await looksMore(a, 3, 'while the server scans');
    assert.deepEqual(server.received, ['/tv/Named Twice'], 'the other name waits for the same turn');
    await server.finish('/tv/Named Twice');
    await waitFor(() => server.received.length === 2, 15_000, 'the second name\'s scan');
    await server.finish('/tv/Named Twice');
    assert.deepEqual(server.overlaps, []);
    await a.stop();
  });
});

describe('a relay restarted after kill -9 knows its own dead turn', () => {
  // Before, a restarted relay was another owner of the `turn:<server>` row its dead process left, and waited out the
  // whole lease (SERVER_QUEUE_LEASE) before sending. The row now carries the relay's install id (queue/instance.ts).
  const LONG_LEASE = 10 * 60_000;

  test('the same install takes its dead process\'s turn at once, asks the server first, and sends once it is idle', async () => {
    const url = await cluster.createDatabase();
    const server = new Server();
    const { log, lines } = recordingLogger();
    const a = await startRelay(url, 'relay-a', [server.target()], { leaseMs: LONG_LEASE, instance: 'install-a' });
    await send(a, '/tv/Before Kill');
    await recorded(a, '/tv/Before Kill');
    await crash(a);
    // The same install comes back (a new process, the same folder): its lease of 10 minutes is not waited out. It
    // has a second name for the server now: neither name sends while the dead process's scan runs.
    const again = await startRelay(url, 'relay-a', [server.target(), server.target('movies')], { leaseMs: LONG_LEASE, instance: 'install-a', log });
    await send(again, '/tv/After Restart');
    await waitFor(() => again.turns.includes('taken over'), 15_000, 'the restarted relay to take its own dead turn');
    await looksMore(again, 3, 'while the dead process\'s scan runs');
    assert.deepEqual(server.received, ['/tv/Before Kill'], 'nothing sent while the server still scans');
    assert.ok(lines.some((l) => /took the one-at-a-time turn over/.test(l.msg)), 'it says why it waits');
    server.current = undefined;
    await waitFor(() => server.received.includes('/tv/After Restart'), 15_000, 'the restarted relay to send once the server is idle');
    await server.finish('/tv/After Restart');
    await waitFor(() => server.received.length === 3, 15_000, 'the second name\'s scan');
    await server.finish('/tv/After Restart');
    assert.deepEqual(server.overlaps, []);
    assert.deepEqual(server.received, ['/tv/Before Kill', '/tv/After Restart', '/tv/After Restart']);
    await again.stop();
  });

  test('another install under the same name (the same config on a second host) still waits out the lease', async () => {
    const url = await cluster.createDatabase();
    const server = new Server();
    const a = await startRelay(url, 'relay-a', [server.target()], { leaseMs: LONG_LEASE, instance: 'host-one' });
    await send(a, '/tv/Host One');
    await recorded(a, '/tv/Host One');
    await crash(a);
    const other = await startRelay(url, 'relay-a', [server.target()], { leaseMs: LONG_LEASE, instance: 'host-two' });
    await send(other, '/tv/Host Two');
    await looksMore(other, 3, 'with the turn row of another install');
    assert.ok(other.turns.length > 0 && other.turns.every((t) => t === false), `never taken: ${other.turns.join(', ')}`);
    // Once host one is back (its install), it takes its own turn and the server's scan ending lets the scan go.
    await other.stop();
    server.current = undefined;
    const back = await startRelay(url, 'relay-a', [server.target()], { leaseMs: LONG_LEASE, instance: 'host-one' });
    back.scheduler.poke();
    await waitFor(() => server.received.includes('/tv/Host Two'), 15_000, 'host one back, sending the waiting scan');
    assert.deepEqual(server.overlaps, []);
    await server.finish('/tv/Host Two');
    await back.stop();
  });
});

/**
 * Waits until `relay` sent `folder` and recorded it, its after-step (the server's scan) still running: a kill then
 * leaves the turn held and nothing to send again (a kill before the record sends it again: at least once).
 */
async function recorded(relay: InRelay, folder: string): Promise<void> {
  await waitFor(async () => (await relay.store.view.listOpen()).length === 0 && (await relay.store.view.listHistory({ text: folder })).length === 1, 15_000, `${relay.id} to send ${folder}`);
}

/** A relay that stops as with kill -9: nothing is released or renewed again, its connections end. */
async function crash(relay: InRelay): Promise<void> {
  const store = relay.store as unknown as { renewTimer: NodeJS.Timeout; relays: { timer?: NodeJS.Timeout }; session: { close(): Promise<void> }; pool: pg.Pool };
  const scheduler = relay.scheduler as unknown as { running: boolean; timer?: NodeJS.Timeout };
  scheduler.running = false;
  if (scheduler.timer) clearTimeout(scheduler.timer);
  clearInterval(store.renewTimer);
  if (store.relays.timer) clearInterval(store.relays.timer);
  await admin.query(`SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid`, [await backendsOf(relay.id)]);
  await store.session.close();
  await store.pool.end().catch(() => undefined);
  relay.stop = async () => undefined;
}

describe('one clock', () => {
  const FIVE_MINUTES = 5 * 60_000;
  const ahead = () => Date.now() + FIVE_MINUTES;

  test("a relay whose clock is 5 minutes ahead does not cut another relay's 20 s debounce short", async () => {
    const url = await cluster.createDatabase();
    const server = new Server();
    const a = await startRelay(url, 'relay-a', [server.target('jellyfin', false)]);
    const skewed = await startRelay(url, 'relay-fast', [server.target('jellyfin', false)], { clock: ahead });
    await send(a, '/tv/Debounced', { delayMs: 20_000, maxMs: 0 });
    await looksMore(skewed, 5, 'with the scan queued');
    // What its scheduler does on each look, with the time its clock gives.
    assert.equal(await skewed.store.activateDue(['jellyfin'], ahead()), 0, 'nothing is due for the fast relay either');
    assert.deepEqual(server.received, [], 'not sent before its 20 s were over');
    assert.equal((await a.store.view.listOpen())[0]?.status, 'pending');
    // Its own requests are due as its clock says, on the database's: 20 s from now, not 5 minutes ago.
    await send(skewed, '/tv/From The Fast One', { delayMs: 20_000, maxMs: 0 }, ahead());
    await looksMore(a, 5, 'with the second scan queued');
    assert.deepEqual(server.received, []);
    await skewed.stop();
    await a.stop();
  });

  test('a relay whose clock is 5 minutes ahead does not claim a delivery another relay is still sending', async () => {
    const url = await cluster.createDatabase();
    const server = new Server();
    let release!: () => void;
    const slow: Target = {
      ...server.target('jellyfin', false),
      deliver: async (item) => {
        server.received.push(item.folder);
        await new Promise<void>((r) => (release = r));
        return { outcome: 'done' };
      },
    };
    const a = await startRelay(url, 'relay-a', [slow]);
    await send(a, '/tv/Long Delivery');
    await waitFor(() => server.received.length === 1, 15_000, 'relay-a to send');
    const skewed = await startRelay(url, 'relay-fast', [server.target('jellyfin', false)], { clock: ahead });
    skewed.scheduler.poke();
    await looksMore(skewed, 5, 'while relay-a sends');
    // What its scheduler does on each look, with the time its clock gives.
    assert.deepEqual(await skewed.store.claimDeliveries(5, ahead(), 'jellyfin@server-1'), [], 'the claim of relay-a has not run out');
    assert.deepEqual(server.received, ['/tv/Long Delivery'], 'sent once: the live claim of relay-a was left alone');
    release();
    await waitFor(async () => (await a.store.view.counts()).done === 1, 15_000, 'the delivery to finish');
    await skewed.stop();
    await a.stop();
  });
});

describe('health', () => {
  test('/healthz (writable) also checks the listening connection, not only the pool', async () => {
    const url = await cluster.createDatabase();
    const relay = await startRelay(url, 'relay-h', [new Server().target()]);
    assert.equal(await relay.store.writable(), true);
    const { rows } = await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'scanrelay relay-h (session)'`);
    assert.equal(rows.length, 1);
    await admin.query(`SELECT pg_terminate_backend($1)`, [rows[0]!.pid]);
    await waitFor(async () => !(await relay.store.writable()), 15_000, 'writable() to say the listening connection is gone');
    await waitFor(() => relay.store.writable(), 15_000, 'writable() once it is back');
    await relay.stop();
  });
});
