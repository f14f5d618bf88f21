import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FakePlex } from '../fakes/plex.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { spawnRelay } from '../helpers/relay.ts';

// A relay on a shared queue whose database restarts, then stopped with SIGTERM (issue 43, item 13). Its own
// cluster: the test stops it.

let cluster: PgCluster;
let plex: FakePlex;
before(async () => {
  cluster = await startPgCluster();
  plex = await new FakePlex().start();
});
after(async () => {
  await plex?.stop();
  cluster?.destroy();
});

test('a database restart is one clear warning and a "reconnected" line; a SIGTERM stop names the shared queue and logs no error', async () => {
  const url = await cluster.createDatabase();
  const relay = await spawnRelay({ config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_QUEUE_URL: url, SERVER_RELAY_ID: 'relay-a', SERVER_QUEUE_LEASE: 3 } });
  try {
    const from = relay.events().length;
    cluster.stopNow();
    const down = await relay.waitForLog((e) => e.msg?.startsWith('the queue database cannot be reached'), 30_000);
    assert.equal(down.level, 40);
    // What the relay saw depends on when its look ran: the connection cut, refused, or (a new connection during
    // the fast shutdown) PostgreSQL's own 57P03 refusal; on a busy machine each happens.
    assert.match(down.err, /Connection terminated|ECONNREFUSED|ECONNRESET|the database system is shutting down/);
    cluster.start();
    const back = await relay.waitForLog((e) => e.msg?.startsWith('reconnected to the queue database'), 60_000);
    assert.equal(back.level, 30);
    assert.match(back.queue, /^postgres:\/\/scanrelay@127\.0\.0\.1:\d+\/\w+$/);
    const errors = relay.events().slice(from).filter((e) => e.level >= 50);
    assert.deepEqual(errors.map((e) => e.msg), [], 'no error-level line (with a stack) while the database was away');
  } finally {
    // Stopped while its scheduler looks every few seconds (lease 3 s): the look under way must not fail on the ended pool.
    const code = await relay.kill('SIGTERM');
    assert.equal(code, 0);
  }
  const stop = relay.events().find((e) => e.signal === 'SIGTERM');
  assert.ok(stop, 'the stop is logged');
  assert.doesNotMatch(stop.msg, /queue file/);
  assert.match(stop.msg, /shared queue \(postgres:\/\/scanrelay@127\.0\.0\.1:\d+\/\w+\)/);
  const errors = relay.events().filter((e) => e.level >= 50);
  assert.deepEqual(errors.map((e) => `${e.msg}: ${e.err?.message ?? e.err}`), []);
  assert.ok(!relay.logs.some((l) => l.includes('Cannot use a pool after calling end on the pool')));
});
