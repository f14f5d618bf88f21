import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { scanRequestSchema } from '../../src/core/scan.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';

// What a commit costs on PostgreSQL, counted by PostgreSQL itself (pg_stat_statements): every statement is a round
// trip on the network, so the intake's group commit only pays off if a batch costs the same few statements
// whatever its size. Counts, not times: these bounds are structural (BEGIN and the lock, one read, one write, COMMIT).

let cluster: PgCluster;
let admin: pg.Client;

before(async () => {
  cluster = await startPgCluster({ statementStats: true });
  admin = new pg.Client({ connectionString: cluster.url() });
  await admin.connect();
});
after(async () => {
  await admin?.end();
  cluster?.destroy();
});

/** The statements the store sent to its database while `body` ran. */
async function statementsOf(url: string, body: () => Promise<unknown>): Promise<Array<{ calls: number; query: string }>> {
  await admin.query('SELECT pg_stat_statements_reset()');
  await body();
  const { rows } = await admin.query<{ calls: number; query: string }>(
    `SELECT s.calls::int AS calls, s.query FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1`,
    [new URL(url).pathname.slice(1)],
  );
  return rows;
}
const total = (rows: Array<{ calls: number }>) => rows.reduce((n, r) => n + r.calls, 0);

const timing = { delayMs: 60_000, maxMs: 0 };
const req = (folder: string) => scanRequestSchema.parse({ folder, source: 'Manual', files: [`${folder}/f.mkv`] });

test('a batch of 50 requests costs the same five statements as a batch of one, whether it queues or merges', async () => {
  const url = await cluster.createDatabase();
  // No lease renewal during the test: it would be a statement of its own.
  const store = await PgQueueStore.open({ url, relayId: 'a', leaseMs: 3_600_000 });
  try {
    const folders = Array.from({ length: 50 }, (_, i) => `/data/Movies/Film ${i} (2000)`);
    let results: Awaited<ReturnType<PgQueueStore['enqueueMany']>> = [];
    const queued = await statementsOf(url, async () => (results = await store.enqueueMany(folders.map(req), timing, 1000)));
    assert.deepEqual(results.map((r) => r.status), folders.map(() => 'queued'));
    assert.equal(new Set(results.map((r) => r.id)).size, 50, 'each new scan has its own id');
    // BEGIN and the queue's lock (one round trip), the read of the pending scans, the write, COMMIT.
    assert.ok(total(queued) <= 5, `50 new folders took ${total(queued)} statements: ${JSON.stringify(queued)}`);

    const merged = await statementsOf(url, async () => (results = await store.enqueueMany(folders.map(req), timing, 2000)));
    assert.deepEqual(results.map((r) => r.status), folders.map(() => 'merged'));
    assert.ok(total(merged) <= 5, `50 merges took ${total(merged)} statements: ${JSON.stringify(merged)}`);

    const one = await statementsOf(url, () => store.enqueueMany([req('/data/Movies/Heat (1995)')], timing, 3000));
    assert.equal(total(queued), total(one), 'a batch costs what one request costs');
    assert.equal((await store.view.listOpen(100)).reduce((n, e) => n + e.requests, 0), 101, 'every request was kept');
  } finally {
    await store.close();
  }
});

test('a delivery done costs four statements, and takes no lock on the whole queue', async () => {
  const url = await cluster.createDatabase();
  const store = await PgQueueStore.open({ url, relayId: 'a', leaseMs: 3_600_000 });
  try {
    await store.enqueueMany([req('/data/Movies/Heat (1995)')], { delayMs: 0, maxMs: 0 }, 1000);
    await store.activateDue(['jellyfin'], 1000);
    const [claimed] = await store.claimDeliveries(1, 1000, 'jellyfin');
    let finished: string | undefined;
    const done = await statementsOf(url, async () => (finished = (await store.completeDelivery(claimed!.item.id, 'jellyfin', { status: 'done' }, 2000)).scanFinished));
    assert.equal(finished, 'done');
    // BEGIN and the scan's row lock (one round trip), the outcome, COMMIT; no NOTIFY (it leaves other relays nothing to do).
    assert.ok(total(done) <= 4, `a finish took ${total(done)} statements: ${JSON.stringify(done)}`);
    assert.ok(!done.some((r) => /pg_advisory_xact_lock|pg_notify/.test(r.query)), 'neither the queue lock nor a wake-up');
    assert.deepEqual(await store.view.counts(), { pending: 0, active: 0, done: 1, failed: 0 });
  } finally {
    await store.close();
  }
});
