import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { after, before, describe, test } from 'node:test';
import { scanRequestSchema } from '../../src/core/scan.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { runCli, tempDir } from '../helpers/relay.ts';

// What an operator runs against a shared queue (issue 43, items 5, 6 and 9): the password in none of its forms
// printed, a read that creates nothing, and a missing right told in one line with exit status 2.

const PW = 'pw-not-to-print';
let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

function configWith(url: string, extra: Record<string, unknown> = {}): { args: string[]; dir: string } {
  const dir = tempDir();
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ SERVER_PASS: 'test-secret', SERVER_PORT: 0, SERVER_IP: '127.0.0.1', SERVER_QUEUE_URL: url, ...extra }));
  return { args: ['--config', file, '--queuefile', join(dir, 'queue.db')], dir };
}

describe('scanrelay queue prints no password, whichever way the URL carries it', () => {
  // The test cluster trusts any password: each URL connects, and the point is what is printed.
  const forms: Array<[string, (url: string) => string]> = [
    ['the password parameter', (url) => `${url}?password=${PW}`],
    ['an unencoded @ in the password', (url) => url.replace('postgres://scanrelay@', `postgres://scanrelay:${PW}@tail@`)],
    ['the userinfo password', (url) => url.replace('postgres://scanrelay@', `postgres://scanrelay:${PW}@`)],
  ];
  for (const [form, withPassword] of forms) {
    test(form, async () => {
      const url = withPassword(await cluster.createDatabase());
      const store = await PgQueueStore.open({ url, relayId: 'relay-a' });
      await store.enqueueMany([scanRequestSchema.parse({ folder: '/data/TV/Shown', source: 'Sonarr' })], { delayMs: 0, maxMs: 0 }, Date.now() - 1000);
      await store.activateDue(['plex']);
      const [claimed] = await store.claimDeliveries(1, Date.now(), 'plex');
      await store.completeDelivery(claimed!.item.id, 'plex', { status: 'done' });
      await store.close();
      const { args } = configWith(url);
      for (const extra of [[], ['--json'], ['--history'], ['--history', '--json']]) {
        const run = await runCli([...args, 'queue', ...extra]);
        assert.equal(run.code, 0, run.stderr);
        assert.ok(!run.stdout.includes(PW) && !run.stdout.includes('tail'), `queue ${extra.join(' ')}: ${run.stdout}`);
        assert.match(run.stdout, /127\.0\.0\.1:\d+\/\w+/, 'the queue is still named');
      }
      // A start error names the URL without it too.
      const down = configWith(withPassword(`postgres://scanrelay@127.0.0.1:${cluster.port + 1}/q`));
      const failed = await runCli([...down.args, 'queue']);
      assert.equal(failed.code, 2);
      assert.match(failed.stderr, /cannot reach the queue database at postgres:\/\/scanrelay/);
      assert.ok(!failed.stderr.includes(PW) && !failed.stderr.includes('tail'), failed.stderr);
    });
  }
});

test('a password with an unencoded @ and / (a URL node-postgres cannot read) is not shown, nor its tail', async () => {
  const url = (await cluster.createDatabase()).replace('postgres://scanrelay@', `postgres://scanrelay:${PW}/x@tail@`);
  const { args } = configWith(url);
  const run = await runCli([...args, 'queue']);
  assert.equal(run.code, 2, run.stdout);
  assert.match(run.stderr, /^scanrelay: SERVER_QUEUE_URL postgres:\/\/scanrelay:\*\*\*@127\.0\.0\.1:\d+\/\w+ is not a URL node-postgres can read .*: percent-encode the password's special characters/);
  assert.ok(!run.stderr.includes(PW) && !run.stderr.includes('tail'), run.stderr);
});

test('scanrelay queue only reads: on a database no relay has used it says so (exit 2) and creates no table', async () => {
  const url = await cluster.createDatabase();
  const { args } = configWith(url);
  const run = await runCli([...args, 'queue']);
  assert.equal(run.code, 2, run.stdout);
  assert.match(run.stderr, /^scanrelay: the queue database postgres:\/\/scanrelay@127\.0\.0\.1:\d+\/\w+ has no scanrelay queue yet: start a relay with this SERVER_QUEUE_URL first \(this command only reads, it creates no tables\)\n$/);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`);
    assert.equal(rows[0]!.n, 0);
  } finally {
    await client.end();
  }
});

test('a relay whose user may not create tables stops with one line naming the grant, exit status 2', async () => {
  const url = await cluster.createDatabase();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'relay') THEN CREATE ROLE relay LOGIN; END IF; END $$`);
    await admin.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
  } finally {
    await admin.end();
  }
  const { args } = configWith(url.replace('postgres://scanrelay@', `postgres://relay:${PW}@`));
  const run = await runCli([...args, 'server']);
  assert.equal(run.code, 2, run.stdout);
  const lines = run.stderr.trim().split('\n');
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0]!, /refused user relay: permission denied for schema public\. As the database's owner or a superuser, run: GRANT USAGE, CREATE ON SCHEMA public TO relay$/);
  assert.ok(!run.stderr.includes(PW) && !run.stdout.includes(PW));
});
