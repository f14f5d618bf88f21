import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import pino from 'pino';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { ROOT, runCli, tempDir } from '../helpers/relay.ts';

// Issue 42 item 3 / issue 43 item 7: a queue written by a newer release (a schema_migrations row this release has
// no migration for) is refused with one line and exit 2, by the server and by `scanrelay queue`, and left as it was.
// The numbers are read from the migration folders, so a release that adds migrations keeps this test true.

/** The newest migration a store's folder holds. */
function knownSchema(dir: string): number {
  return Math.max(...readdirSync(join(ROOT, 'src', 'queue', dir)).filter((f) => /^\d+_.*\.sql$/.test(f)).map((f) => Number.parseInt(f, 10)));
}
const SQLITE_KNOWS = knownSchema('migrations');
const PG_KNOWS = knownSchema(join('pg', 'migrations'));

function writeConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ SERVER_IP: '127.0.0.1', SERVER_PORT: 0, SERVER_PASS: 'test-secret', PLEX_ENABLED: false, ...extra }));
  return file;
}

/** A logger whose lines the test reads. */
function capturingLogger(): { log: pino.Logger; lines: Array<{ msg: string; migration?: string; schema?: number }> } {
  const lines: Array<{ msg: string; migration?: string; schema?: number }> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

/** The CLI's answer is exactly one line on stderr, exit 2, naming the store and both schema numbers. */
function assertRefused(r: { code: number | null; stdout: string; stderr: string }, where: RegExp, found: number, knows: number): void {
  assert.equal(r.code, 2, r.stdout + r.stderr);
  const lines = r.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, where);
  assert.ok(lines[0]!.includes(`was written by a newer scanrelay (schema ${found}; this one knows ${knows})`), lines[0]);
  assert.doesNotMatch(r.stdout, /scan URL|Server listening/, 'the relay did not start');
}

describe('SQLite queue file', () => {
  test('a file with a schema newer than this release: server and `scanrelay queue` exit 2 with one line, and the file is left as it was', async () => {
    const dir = tempDir();
    const queuefile = join(dir, 'queue.db');
    new QueueStore(queuefile).close();
    const newer = SQLITE_KNOWS + 1;
    const db = new Database(queuefile);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(newer, Date.now());
    db.close();
    const config = writeConfig(dir);

    for (const command of [['server'], ['queue'], ['queue', '--json']]) {
      const r = await runCli(['--config', config, '--queuefile', queuefile, ...command]);
      assertRefused(r, new RegExp(`^scanrelay: ${queuefile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} was written`), newer, SQLITE_KNOWS);
      assert.match(r.stderr, /queue\.db was written by a newer scanrelay/);
    }
    const after = new Database(queuefile, { readonly: true });
    const versions = after.prepare<[], { version: number }>('SELECT version FROM schema_migrations ORDER BY version').all().map((r) => r.version);
    after.close();
    assert.equal(versions.at(-1), newer, 'the newer release\'s row is kept');
    assert.equal(versions.length, SQLITE_KNOWS + 1);
  });

  test('each migration is logged as it runs, in order, and a file that has them all logs none', () => {
    const queuefile = join(tempDir(), 'queue.db');
    const first = capturingLogger();
    new QueueStore(queuefile, first.log).close();
    const names = readdirSync(join(ROOT, 'src', 'queue', 'migrations')).filter((f) => /^\d+_.*\.sql$/.test(f)).sort();
    assert.deepEqual(first.lines.map((l) => l.migration), names);
    assert.deepEqual(first.lines.map((l) => l.schema), names.map((n) => Number.parseInt(n, 10)));
    assert.match(first.lines[0]!.msg, new RegExp(`^queue: migrating .*queue\\.db to schema 1 \\(${names[0]}\\)$`));
    const again = capturingLogger();
    new QueueStore(queuefile, again.log).close();
    assert.deepEqual(again.lines, []);
  });
});

describe('PostgreSQL queue', () => {
  let cluster: PgCluster;
  before(async () => {
    cluster = await startPgCluster();
  });
  after(() => cluster?.destroy());

  const PASSWORD = 'pw-never-shown';

  test('a database with a schema newer than this release: server and `scanrelay queue` exit 2 with one line naming the database, never its password', async () => {
    const plain = await cluster.createDatabase();
    const name = new URL(plain).pathname.slice(1);
    const { log, lines } = capturingLogger();
    const store = await PgQueueStore.open({ url: plain, relayId: 'old', log });
    await store.close();
    // The first open logged each migration as it ran.
    const names = readdirSync(join(ROOT, 'src', 'queue', 'pg', 'migrations')).filter((f) => /^\d+_.*\.sql$/.test(f)).sort();
    assert.deepEqual(lines.filter((l) => l.migration).map((l) => l.migration), names);
    assert.ok(lines.some((l) => l.msg === `queue: migrating database "${name}" to schema 1 (${names[0]})`), JSON.stringify(lines));

    const client = new pg.Client({ connectionString: plain });
    await client.connect();
    await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES (99, $1)', [Date.now()]);
    await client.end();

    // Each URL form that holds the password (the test cluster trusts any password).
    const urls = [plain.replace('postgres://scanrelay@', `postgres://scanrelay:${PASSWORD}@`), `${plain}?password=${PASSWORD}`];
    for (const url of urls) {
      const dir = tempDir();
      const config = writeConfig(dir, { SERVER_QUEUE_URL: url });
      for (const command of [['server'], ['queue']]) {
        const r = await runCli(['--config', config, '--queuefile', join(dir, 'queue.db'), ...command]);
        assertRefused(r, new RegExp(`^scanrelay: the queue database "${name}" \\(SERVER_QUEUE_URL\\) was written`), 99, PG_KNOWS);
        assert.ok(!(r.stdout + r.stderr).includes(PASSWORD), r.stdout + r.stderr);
      }
    }
    const check = new pg.Client({ connectionString: plain });
    await check.connect();
    const versions = (await check.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
    await check.end();
    assert.equal(versions.at(-1), 99);
    assert.equal(versions.length, PG_KNOWS + 1);
  });
});
