import assert from 'node:assert/strict';
import pg from 'pg';
import { after, before, describe, test } from 'node:test';
import { UserError } from '../../src/core/errors.ts';
import { scanRequestSchema, type NormalizedScanRequest } from '../../src/core/scan.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { QueueIntake } from '../../src/queue/door.ts';
import { openQueue } from '../../src/queue/open.ts';
import { clientConfig } from '../../src/db/pg/connection.ts';
import { redactUrl } from '../../src/db/pg/redact.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';

// The operator's side of a shared queue (issue 43, items 5, 6, 9, 10, 13): passwords never shown, a missing
// right named in one line, the pool a setting, TLS without node-postgres' warning, a clean stop.

let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

const PW = 'S3cret';

describe('redactUrl: every form of password node-postgres accepts is hidden', () => {
  const cases: Array<[string, string, string]> = [
    ['userinfo', `postgres://relay:${PW}@db.lan:5432/queue`, 'postgres://relay:***@db.lan:5432/queue'],
    ['the password parameter', `postgres://relay@db.lan/queue?password=${PW}`, 'postgres://relay@db.lan/queue?password=***'],
    ['the parameter beside others', `postgresql://relay@db.lan/queue?sslmode=verify-full&password=${PW}&application_name=x`, 'postgresql://relay@db.lan/queue?sslmode=verify-full&password=***&application_name=x'],
    ['the parameter with an @ in it', `postgres://relay@db.lan/queue?password=${PW}@tail`, 'postgres://relay@db.lan/queue?password=***'],
    ['an unencoded @ in the userinfo password', `postgres://relay:${PW}@tail@db.lan:5432/queue`, 'postgres://relay:***@db.lan:5432/queue'],
    ['an unencoded @ and / in the password', `postgres://relay:${PW}/x@tail@db.lan/queue`, 'postgres://relay:***@db.lan/queue'],
    ['both at once', `postgres://relay:${PW}@db.lan/queue?PASSWORD=${PW}`, 'postgres://relay:***@db.lan/queue?PASSWORD=***'],
  ];
  for (const [form, url, shown] of cases) {
    test(form, () => {
      assert.equal(redactUrl(url), shown);
      assert.ok(!redactUrl(url).includes(PW) && !redactUrl(url).includes('tail'));
    });
  }

  // Issue 47 item 10: node-postgres reads "relay:p@hunter2#rest@db" as host "hunter2", and its connection error
  // ("getaddrinfo ENOTFOUND hunter2") showed that piece of the password. Refused before any connection.
  for (const c of ['#', '/', '?']) {
    test(`a start error for an unencoded ${c} after an @ in the password shows no piece of it`, async () => {
      const url = `postgres://relay:pw@hunter2${c}rest-of-it@127.0.0.1:${cluster.port}/queue`;
      await assert.rejects(PgQueueStore.open({ url, relayId: 'relay-a' }), (err: Error) => {
        assert.ok(err instanceof UserError, String(err));
        assert.ok(!/hunter2|rest-of-it/.test(err.message), err.message);
        assert.match(err.message, new RegExp(`its password holds an unencoded "\\${c}"[^]*percent-encode`));
        return true;
      });
    });
  }
  test('a URL without a password is shown as it is', () => {
    assert.equal(redactUrl('postgres://relay@db.lan:5432/queue'), 'postgres://relay@db.lan:5432/queue');
    assert.equal(redactUrl('postgres://db.lan/queue?sslmode=require'), 'postgres://db.lan/queue?sslmode=require');
  });
});

test("sslmode=require is read as node-postgres reads it (verify-full), without its multi-line SECURITY WARNING", async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  try {
    const client = new pg.Client(clientConfig('postgres://relay@127.0.0.1:1/queue?sslmode=require', 'test'));
    // The certificate is checked (no rejectUnauthorized: false), as node-postgres does for require today.
    assert.deepEqual((client as unknown as { connectionParameters: { ssl: unknown } }).connectionParameters.ssl, {});
    const libpq = new pg.Client(clientConfig('postgres://relay@127.0.0.1:1/queue?uselibpqcompat=true&sslmode=require', 'test'));
    assert.deepEqual((libpq as unknown as { connectionParameters: { ssl: unknown } }).connectionParameters.ssl, { rejectUnauthorized: false });
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(warnings, []);
});

test('SERVER_QUEUE_POOL bounds the pooled connections a relay opens', async () => {
  const url = await cluster.createDatabase();
  const store = await openQueue({ SERVER_QUEUE_URL: url, SERVER_QUEUE_LEASE: 30, SERVER_QUEUE_POOL: 2 }, '', { relayId: 'pool-check' });
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    // Ten reads at once, each held 200 ms by the server: with two connections they queue in the pool.
    const stmts = Array.from({ length: 10 }, () => store.view.counts());
    const seen = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'scanrelay pool-check'`);
    await Promise.all(stmts);
    const after = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'scanrelay pool-check'`);
    assert.ok(seen.rows[0]!.n <= 2 && after.rows[0]!.n <= 2, `${seen.rows[0]!.n}, ${after.rows[0]!.n} pooled connections`);
  } finally {
    await admin.end();
    await store.close();
  }
});

test('a look under way when the relay stops finds nothing, instead of "Cannot use a pool after calling end on the pool"', async () => {
  const store = await PgQueueStore.open({ url: await cluster.createDatabase(), relayId: 'stopping' });
  const looking = store.nextWakeAt(['plex']);
  await store.close();
  await looking;
  // The scheduler's next steps of that look, after the pool ended.
  assert.equal(await store.activateDue(['plex']), 0);
  assert.deepEqual(await store.claimDeliveries(1, Date.now(), 'plex'), []);
  assert.equal(await store.nextWakeAt(['plex']), undefined);
});

describe('rights', () => {
  /** A database owned by scanrelay, and a login `relay` that may connect and nothing else (PostgreSQL 15's default on public). */
  async function databaseWithoutCreate(): Promise<{ url: string; admin: pg.Client }> {
    const url = await cluster.createDatabase();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'relay') THEN CREATE ROLE relay LOGIN; END IF; END $$`);
    await admin.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
    return { url: url.replace('postgres://scanrelay@', 'postgres://relay@'), admin };
  }

  test('no CREATE on schema public: one line naming the grant, exit status 2 (a UserError), not a stack', async () => {
    const { url, admin } = await databaseWithoutCreate();
    try {
      const err = await PgQueueStore.open({ url, relayId: 'no-create' }).then(
        () => assert.fail('opened'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof UserError, String(err));
      assert.equal(err.exitCode, 2);
      assert.match(err.message, /refused user relay: permission denied for schema public\. As the database's owner or a superuser, run: GRANT USAGE, CREATE ON SCHEMA public TO relay$/);
      assert.ok(!err.message.includes('\n'));
      // The grant it names is the one that was missing.
      await admin.query('GRANT USAGE, CREATE ON SCHEMA public TO relay');
      const store = await PgQueueStore.open({ url, relayId: 'granted' });
      await store.close();
    } finally {
      await admin.end();
    }
  });

  test("tables made by their owner: a relay whose user lacks the grants on them is told which, and starts once granted", async () => {
    const { url, admin } = await databaseWithoutCreate();
    try {
      // The owner started a relay first (it made the tables); the relay's own user may use the schema, no more.
      const owner = await PgQueueStore.open({ url: url.replace('postgres://relay@', 'postgres://scanrelay@'), relayId: 'owner' });
      await owner.close();
      await admin.query('GRANT USAGE ON SCHEMA public TO relay');
      const err = await PgQueueStore.open({ url, relayId: 'reader' }).then(
        () => assert.fail('opened'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof UserError, String(err));
      assert.match(
        err.message,
        /permission denied for table schema_migrations\. As the database's owner or a superuser, run: GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO relay; GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO relay$/,
      );
      await admin.query('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO relay; GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO relay');
      const store = await PgQueueStore.open({ url, relayId: 'reader' });
      try {
        await store.enqueueMany([scanRequestSchema.parse({ folder: '/data/TV/Granted', source: 'Sonarr' })], { delayMs: 0, maxMs: 0 });
        assert.equal((await store.view.counts()).pending, 1);
      } finally {
        await store.close();
      }
    } finally {
      await admin.end();
    }
  });
});

test('one request the store refuses fails alone: its batch is committed again without it', async () => {
  const store = await PgQueueStore.open({ url: await cluster.createDatabase(), relayId: 'batch' });
  // A store error for one request only (a constraint, a value PostgreSQL refuses), the others valid.
  const poisoned: QueueBackend = Object.assign(Object.create(store) as QueueBackend, {
    enqueueMany: (requests: readonly NormalizedScanRequest[], ...rest: [never, never?, never?, never?]) => {
      if (requests.some((r) => r.folder === '/data/TV/Poison')) return Promise.reject(Object.assign(new Error('invalid byte sequence for encoding "UTF8"'), { code: '22021' }));
      return store.enqueueMany(requests, ...rest);
    },
  });
  const intake = new QueueIntake(poisoned, [], () => ({ delayMs: 60_000, maxMs: 0 }));
  try {
    const folders = ['/data/TV/A', '/data/TV/Poison', '/data/TV/B', '/data/TV/C'];
    const answers = await Promise.allSettled(folders.map((folder) => intake.enqueue([scanRequestSchema.parse({ folder, source: 'Sonarr' })])));
    assert.deepEqual(answers.map((a) => a.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    assert.deepEqual((await store.view.listOpen()).map((e) => e.folder).sort(), ['/data/TV/A', '/data/TV/B', '/data/TV/C']);
  } finally {
    await store.close();
  }
});
