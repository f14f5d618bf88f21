import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { after, before, describe, test } from 'node:test';
import { scanRequestSchema } from '../../src/core/scan.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { QueueIntake } from '../../src/queue/door.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { DriveCache } from '../../src/triggers/drive/cache.ts';
import { importQueueAtStart, QUEUE_IMPORT_KEY } from '../../src/peers/plex-autoscan/takeover.ts';
import { configSchema, type Config, type FileConfig } from '../../src/config/schema.ts';
import { relayConfig } from '../../src/config/named-targets.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { autoscanDb } from '../helpers/autoscan-db.ts';
import { ROOT, runCli, spawnRelay, tempDir, waitFor, type RelayProcess } from '../helpers/relay.ts';

// The module's client, for a look at tables no store reads (some tests name their store `pg`).
const PgClient = pg.Client;

// The commands a user runs against the queue, on the SQLite file and on a queue shared in PostgreSQL
// (SERVER_QUEUE_URL): the same answers, the same shapes, and a database that cannot be reached is one line.

const PLEX_AUTOSCAN = join(ROOT, 'test', 'fixtures', 'plex-autoscan');
const AUTOSCAN_YML = join(ROOT, 'test', 'fixtures', 'autoscan', 'config.yml');
const PASSWORD = 'pw-not-to-print';

let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

/** A fresh database, its URL with a password in it (the test cluster trusts any: the point is that none is printed). */
async function sharedUrl(): Promise<string> {
  return (await cluster.createDatabase()).replace('postgres://scanrelay@', `postgres://scanrelay:${PASSWORD}@`);
}
const shown = (url: string) => url.replace(`:${PASSWORD}@`, ':***@');

function writeConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ SERVER_PASS: 'test-secret', SERVER_SCAN_DELAY: 60, ...extra }));
  return file;
}

const req = (folder: string) => scanRequestSchema.parse({ folder, source: 'Sonarr' });
const totalRequests = async (store: QueueBackend) => (await store.view.listOpen(1000)).reduce((n, e) => n + e.requests, 0);

/** One scan delivered and one being sent to plex by `relay-a` (on SQLite nobody is named), one waiting. */
async function seed(store: QueueBackend): Promise<void> {
  await store.enqueueMany([req('/data/Movies/Done (2019)')], { delayMs: 0, maxMs: 0 }, Date.now() - 5000);
  await store.activateDue(['plex']);
  const [done] = await store.claimDeliveries(1, Date.now(), 'plex');
  await store.completeDelivery(done!.item.id, 'plex', { status: 'done' });
  await store.enqueueMany([req('/data/TV/Later/Season 1')], { delayMs: 600_000, maxMs: 0 });
  await store.enqueueMany([req('/data/Movies/Now (2020)')], { delayMs: 0, maxMs: 0 }, Date.now() - 1000);
  await store.activateDue(['plex']);
  assert.equal((await store.claimDeliveries(1, Date.now(), 'plex')).length, 1);
}

describe('scanrelay queue', () => {
  test('reads the shared queue with SERVER_QUEUE_URL and the file without it: the same lines, the relay named, no password', async () => {
    const url = await sharedUrl();
    const pg = await PgQueueStore.open({ url, relayId: 'relay-a' });
    await seed(pg);
    await pg.close();
    const pgDir = tempDir();
    const pgArgs = ['--config', writeConfig(pgDir, { SERVER_QUEUE_URL: url }), '--queuefile', join(pgDir, 'queue.db'), 'queue'];
    const sqDir = tempDir();
    const sqlite = new QueueStore(join(sqDir, 'queue.db'));
    await seed(sqlite);
    sqlite.close();
    const sqArgs = ['--config', writeConfig(sqDir), '--queuefile', join(sqDir, 'queue.db'), 'queue'];

    const text = await runCli(pgArgs);
    assert.equal(text.code, 0, text.stderr);
    assert.ok(text.stdout.startsWith(`${shown(url)}: 1 pending, 1 active (being sent or waiting to retry), 1 done, 0 failed\n`), text.stdout);
    assert.match(text.stdout, /\n {2}\/data\/Movies\/Now \(2020\)\n {4}being sent now, 1 attempt\(s\)\n {4}plex being sent by relay relay-a\n/);
    assert.match(text.stdout, /\n {2}\/data\/TV\/Later\/Season 1\n {4}due \S+ \(in \d+ (s|min)\), 0 attempt\(s\)\n$/);
    assert.ok(!text.stdout.includes(PASSWORD) && !text.stderr.includes(PASSWORD));
    assert.equal(existsSync(join(pgDir, 'queue.db')), false, 'no SQLite file is made beside a shared queue');

    const file = await runCli(sqArgs);
    assert.equal(file.code, 0, file.stderr);
    // The same lines, less the relay: one process owns a queue file.
    assert.equal(file.stdout.replace(/^\S+: /, '').replace(/due \S+/, 'due'), text.stdout.replace(/^\S+: /, '').replace('    plex being sent by relay relay-a\n', '').replace(/due \S+/, 'due'));

    // Who delivered what: the history, newest first.
    const history = await runCli([...pgArgs, '--history']);
    assert.equal(history.code, 0, history.stderr);
    assert.match(history.stdout, /^\S+: 1 pending, 1 active \(being sent or waiting to retry\), 1 done, 0 failed\n {2}\/data\/Movies\/Done \(2019\)\n {4}done \S+ \(\d+ s ago\), 1 attempt\(s\)\n {4}plex delivered by relay relay-a\n$/);
    const fileHistory = await runCli([...sqArgs, '--history']);
    assert.equal(fileHistory.stdout.replace(/^\S+: /, '').replace(/done \S+ \(\d+ s ago\)/, 'done'), history.stdout.replace(/^\S+: /, '').replace('    plex delivered by relay relay-a\n', '').replace(/done \S+ \(\d+ s ago\)/, 'done'));
    const [pgHistory, sqHistory] = await Promise.all([runCli([...pgArgs, '--history', '--json']), runCli([...sqArgs, '--history', '--json'])]).then((r) => r.map((x) => JSON.parse(x.stdout)));
    assert.deepEqual(pgHistory.scans[0].deliveries, [{ target: 'plex', name: 'plex', status: 'done', attempts: 1, relay: 'relay-a', unserved: false }]);
    assert.deepEqual(sqHistory.scans[0].deliveries, [{ target: 'plex', name: 'plex', status: 'done', attempts: 1, relay: null, unserved: false }]);
    assert.deepEqual(Object.keys(pgHistory.scans[0]), Object.keys(sqHistory.scans[0]));
    assert.ok(Date.parse(pgHistory.scans[0].finished) > 0);

    const [pgJson, sqJson] = await Promise.all([runCli([...pgArgs, '--json']), runCli([...sqArgs, '--json'])]).then((r) => r.map((x) => JSON.parse(x.stdout)));
    assert.deepEqual(Object.keys(pgJson), Object.keys(sqJson));
    assert.deepEqual([pgJson.queue, pgJson.queuefile], [shown(url), null]);
    assert.deepEqual([sqJson.queue, sqJson.queuefile], [join(sqDir, 'queue.db'), join(sqDir, 'queue.db')]);
    assert.deepEqual(pgJson.counts, sqJson.counts);
    const shape = (j: { scans: Array<Record<string, unknown>> }): Array<Record<string, unknown>> => j.scans.map((s) => ({ ...s, due: typeof s.due }));
    assert.deepEqual(shape(pgJson)[0]!.deliveries, [{ target: 'plex', name: 'plex', status: 'sending', attempts: 1, relay: 'relay-a', unserved: false }]);
    assert.deepEqual(shape(sqJson)[0]!.deliveries, [{ target: 'plex', name: 'plex', status: 'sending', attempts: 1, relay: null, unserved: false }]);
    assert.deepEqual(
      shape(pgJson).map((s) => ({ ...s, deliveries: undefined })),
      shape(sqJson).map((s) => ({ ...s, deliveries: undefined })),
    );
  });

  test('SERVER_QUEUE_URL from the environment alone (no config file) reads the shared queue', async () => {
    const url = await sharedUrl();
    const pg = await PgQueueStore.open({ url, relayId: 'relay-b' });
    await pg.enqueueMany([req('/data/TV/Env/Season 1')], { delayMs: 60_000, maxMs: 0 });
    await pg.close();
    const dir = tempDir();
    const out = await runCli(['--config', join(dir, 'none.json'), '--queuefile', join(dir, 'queue.db'), 'queue', '--json'], { env: { SERVER_QUEUE_URL: url } });
    assert.equal(out.code, 0, out.stderr);
    const json = JSON.parse(out.stdout);
    assert.equal(json.queue, shown(url));
    assert.deepEqual(json.scans.map((s: { folder: string }) => s.folder), ['/data/TV/Env/Season 1']);
    assert.equal(existsSync(join(dir, 'none.json')), false, 'a read command writes no config');
  });
});

describe('a shared queue that cannot be reached: one line naming the URL without its password, exit status 2', () => {
  const down = () => `postgres://scanrelay:${PASSWORD}@127.0.0.1:${cluster.port + 1}/q`;
  const expectOneLine = (r: { code: number | null; stdout: string; stderr: string }) => {
    assert.equal(r.code, 2, r.stderr + r.stdout);
    assert.match(r.stderr, new RegExp(`^scanrelay: cannot reach the queue database at postgres://scanrelay:\\*\\*\\*@127\\.0\\.0\\.1:${cluster.port + 1}/q \\(SERVER_QUEUE_URL\\): .+\\n$`));
    assert.ok(!(r.stdout + r.stderr).includes(PASSWORD));
  };

  test('scanrelay queue (config key and environment)', async () => {
    const dir = tempDir();
    expectOneLine(await runCli(['--config', writeConfig(dir, { SERVER_QUEUE_URL: down() }), 'queue']));
    expectOneLine(await runCli(['--config', join(dir, 'none.json'), 'queue'], { env: { SERVER_QUEUE_URL: down() } }));
  });

  test('import-plex-autoscan and import-autoscan', async () => {
    const dir = tempDir();
    const config = writeConfig(dir, { SERVER_QUEUE_URL: down() });
    expectOneLine(await runCli(['--config', config, 'import-plex-autoscan', '--from-queue', join(PLEX_AUTOSCAN, 'queue.db')]));
    const db = join(dir, 'autoscan.db');
    autoscanDb(db, [['/mnt/unionfs/Media/Movies/Heat (1995)', 0, '2026-11-25 10:00:00+00:00']]);
    expectOneLine(await runCli(['--config', join(dir, 'new.json'), 'import-autoscan', AUTOSCAN_YML, '--database', db], { env: { SERVER_QUEUE_URL: down() } }));
  });

  test('a database lost while the command reads it: one line naming the URL without its password, not a stack trace', async () => {
    const url = await sharedUrl();
    await (await PgQueueStore.open({ url, relayId: 'setup' })).close();
    // Hold the scans table, so the command waits on it; then end its connection as a restarting server would.
    const [holder, watcher] = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
    await Promise.all([holder.connect(), watcher.connect()]);
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE scans IN ACCESS EXCLUSIVE MODE');
      const dir = tempDir();
      const run = runCli(['--config', writeConfig(dir, { SERVER_QUEUE_URL: url }), 'queue']);
      await waitFor(
        // From another connection: a transaction sees one snapshot of pg_stat_activity.
        async () => (await watcher.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE '%:queue' AND wait_event_type = 'Lock'`)).rowCount,
        20_000,
        'the command waiting on the table',
      );
      const r = await run;
      assert.equal(r.code, 2, r.stderr + r.stdout);
      assert.match(r.stderr, /^scanrelay: the queue database postgres:\/\/scanrelay:\*\*\*@127\.0\.0\.1:\d+\/\w+ cannot be reached: terminating connection .*\n$/);
      assert.ok(!r.stderr.includes(PASSWORD));
    } finally {
      await Promise.all([holder.end(), watcher.end()]);
    }
  });

  test('a SERVER_QUEUE_URL that is not a postgres:// URL is named as the config mistake it is', async () => {
    const dir = tempDir();
    const r = await runCli(['--config', writeConfig(dir, { SERVER_QUEUE_URL: 'mysql://u:pw@host/db' }), 'queue']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /SERVER_QUEUE_URL.*postgres:\/\//);
  });
});

describe('the takeovers into a shared queue', () => {
  // plex_autoscan's queue.db: peewee's queueitemmodel (db.py:24-28), its rows restored at start (scan.py:91-105).
  test("import-plex-autoscan queues plex_autoscan's rows into PostgreSQL as into the file, once", async () => {
    const folders = async (store: QueueBackend) => (await store.view.listOpen()).map((e) => [e.folder, e.source, e.event]).sort();
    const url = await sharedUrl();
    const pgDir = tempDir();
    const args = (dir: string, extra: Record<string, unknown>) => ['--config', writeConfig(dir, extra), '--queuefile', join(dir, 'queue.db'), 'import-plex-autoscan', '--from-queue', join(PLEX_AUTOSCAN, 'queue.db'), '--from-cache', join(PLEX_AUTOSCAN, 'cache.db')];
    const onPg = await runCli(args(pgDir, { SERVER_QUEUE_URL: url }));
    assert.equal(onPg.code, 0, onPg.stderr);
    assert.match(onPg.stdout, new RegExp(`took over plex_autoscan's queue .*queue\\.db: 4 pending scan\\(s\\), 3 queued; skipped: relative/not/a/path .*\\(into the shared queue ${shown(url).replace(/[*.]/g, '\\$&')}\\)`));
    // The drive state goes into the shared database too (page tokens in meta, the cache in drive_items), not a file.
    assert.doesNotMatch(onPg.stdout, /not taken over/);
    assert.equal(existsSync(join(pgDir, 'cache.db')), false, 'no drive cache file beside a shared queue');
    assert.ok(!onPg.stdout.includes(PASSWORD));
    assert.equal(existsSync(join(pgDir, 'queue.db')), false);

    const sqDir = tempDir();
    const onFile = await runCli(args(sqDir, {}));
    assert.equal(onFile.code, 0, onFile.stderr);
    const pg = await PgQueueStore.open({ url, relayId: 'check' });
    const sqlite = new QueueStore(join(sqDir, 'queue.db'));
    try {
      assert.deepEqual(await folders(pg), await folders(sqlite));
      // The same drive state as the file import took: its page tokens, and the cache's items in PostgreSQL.
      assert.deepEqual(await pg.meta.list('drive.page_token.'), sqlite.meta.list('drive.page_token.'));
      const cached = new DriveCache(join(sqDir, 'cache.db'));
      const client = new PgClient({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM drive_items');
        assert.ok(cached.count() > 0);
        assert.equal(rows[0]!.n, cached.count());
      } finally {
        cached.close();
        await client.end();
      }
      const before = await totalRequests(pg);
      const again = await runCli(args(pgDir, { SERVER_QUEUE_URL: url }));
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /plex_autoscan's queue .*queue\.db was already taken over .*not queued again/);
      assert.equal(await totalRequests(pg), before, 'nothing queued twice');
    } finally {
      await pg.close();
      sqlite.close();
    }
  });

  test("import-autoscan queues autoscan.db's rows into the shared queue named by SERVER_QUEUE_URL in the environment", async () => {
    const url = await sharedUrl();
    const dir = tempDir();
    const db = join(dir, 'autoscan.db');
    autoscanDb(db, [
      ['/mnt/unionfs/Media/Movies/Zero (2000)', 0, '2026-11-25 10:00:00.5+00:00'],
      ['/mnt/unionfs/Media/TV/Early/Season 1', 5, '2026-11-25 09:00:00+00:00'],
    ]);
    const out = await runCli(['--config', join(dir, 'config.json'), '--queuefile', join(dir, 'queue.db'), 'import-autoscan', AUTOSCAN_YML, '--database', db], { env: { SERVER_QUEUE_URL: url } });
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /took over autoscan's pending scans from .*autoscan\.db: 2 row\(s\), 2 queued in autoscan's priority order \(into the shared queue postgres:\/\/scanrelay:\*\*\*@/);
    assert.equal(existsSync(join(dir, 'queue.db')), false);
    const pg = await PgQueueStore.open({ url, relayId: 'check' });
    try {
      // autoscan sends higher priority first (processor/datastore.go:84-89); scanrelay's lowest number first.
      const open = (await pg.view.listOpen()).sort((a, b) => a.id - b.id).map((e) => [e.folder, e.priority]);
      assert.deepEqual(open, [
        ['/mnt/unionfs/Media/TV/Early/Season 1', -5],
        ['/mnt/unionfs/Media/Movies/Zero (2000)', 0],
      ]);
    } finally {
      await pg.close();
    }
    assert.match(out.stdout, /SERVER_QUEUE_URL comes from the environment, not the written file/);
    const again = await runCli(['--config', join(dir, 'config.json'), '--queuefile', join(dir, 'queue.db'), 'import-autoscan', AUTOSCAN_YML, '--database', db, '--force'], { env: { SERVER_QUEUE_URL: url } });
    assert.match(again.stdout, /were already taken over .*not queued again/);
  });

  test('import-autoscan --force over a config with SERVER_QUEUE_URL keeps the relay on its shared queue', async () => {
    const url = await sharedUrl();
    const dir = tempDir();
    const config = writeConfig(dir, { SERVER_QUEUE_URL: url, SERVER_RELAY_ID: 'relay-a' });
    const db = join(dir, 'autoscan.db');
    autoscanDb(db, [['/mnt/unionfs/Media/Movies/Kept (2001)', 0, '2026-11-25 10:00:00+00:00']]);
    const out = await runCli(['--config', config, '--queuefile', join(dir, 'queue.db'), 'import-autoscan', AUTOSCAN_YML, '--database', db, '--force']);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^wrote .*config\.json from .*config\.yml \(kept SERVER_QUEUE_URL, SERVER_RELAY_ID from the file it replaces\)\n/);
    assert.match(out.stdout, /1 queued in autoscan's priority order \(into the shared queue/);
    assert.ok(!out.stdout.includes(PASSWORD));
    const written = JSON.parse(readFileSync(config, 'utf8'));
    assert.deepEqual([written.SERVER_QUEUE_URL, written.SERVER_RELAY_ID], [url, 'relay-a']);
    assert.equal(existsSync(join(dir, 'queue.db')), false);
  });

  test('two relays taking over the same plex_autoscan queue.db at once queue it once in all', async () => {
    const url = await sharedUrl();
    const config = relayConfig(configSchema.parse({ SERVER_PASS: 'test-secret' }) as FileConfig);
    const file = join(tempDir(), 'queue.db');
    copyFileSync(join(PLEX_AUTOSCAN, 'queue.db'), file);
    const relays = await Promise.all(['relay-a', 'relay-b'].map((relayId) => PgQueueStore.open({ url, relayId })));
    try {
      const said: string[] = [];
      const log = { ...silentLogger(), info: (_: unknown, msg: string) => void said.push(msg), debug: (_: unknown, msg: string) => void said.push(msg) } as unknown as ReturnType<typeof silentLogger>;
      // Both start together: each reads the file and finds no marker, so only the enqueue's own check keeps it to one.
      await Promise.all(relays.map((store) => importQueueAtStart({ queuefile: file, config, intake: new QueueIntake(store, [], () => ({ delayMs: 0, maxMs: 0 })), log })));
      assert.equal(said.filter((m) => /took over plex_autoscan's queue .*3 queued/.test(m)).length, 1, said.join('\n'));
      assert.equal(said.filter((m) => /was already taken over/.test(m)).length, 1, said.join('\n'));
      assert.equal(await totalRequests(relays[0]!), 3, 'each of the 3 rows queued once');
      assert.deepEqual(JSON.parse((await relays[1]!.meta.get(QUEUE_IMPORT_KEY))!).map((t: { file: string; rows: number }) => [t.file, t.rows]), [[file, 4]]);
    } finally {
      await Promise.all(relays.map((r) => r.close()));
    }
  });

  test("another machine's plex_autoscan queue.db at the same path is taken over too; the same rows again are not", async () => {
    const url = await sharedUrl();
    const config = relayConfig(configSchema.parse({ SERVER_PASS: 'test-secret' }) as FileConfig);
    const file = join(tempDir(), 'queue.db');
    copyFileSync(join(PLEX_AUTOSCAN, 'queue.db'), file);
    const store = await PgQueueStore.open({ url, relayId: 'relay-a' });
    const said: string[] = [];
    const log = { ...silentLogger(), info: (_: unknown, msg: string) => void said.push(msg), debug: () => {} } as unknown as ReturnType<typeof silentLogger>;
    const start = () => importQueueAtStart({ queuefile: file, config, intake: new QueueIntake(store, [], () => ({ delayMs: 600_000, maxMs: 0 })), log });
    try {
      await start();
      await start();
      assert.equal(said.length, 1, `the same rows once, and silence at the next start: ${said.join('\n')}`);
      // Relay B's machine: its own plex_autoscan left other rows in a queue.db at the same path.
      const other = new Database(file);
      other.prepare(`UPDATE queueitemmodel SET scan_path = '/data/TV/Other/Season 2' WHERE id = 1`).run();
      other.close();
      await start();
      assert.match(said[1] ?? '', /took over plex_autoscan's queue .*3 queued/);
      const folders = (await store.view.listOpen()).map((e) => e.folder);
      assert.ok(folders.includes('/data/TV/Other/Season 2') && folders.includes('/data/TV/Show/Season 1'), folders.join(', '));
      // A marker from before digests were kept (one object, no digest) still matches its file by path.
      await store.meta.set(QUEUE_IMPORT_KEY, JSON.stringify({ file, at: '2026-11-01T00:00:00.000Z', rows: 4 }));
      const before = await totalRequests(store);
      await start();
      assert.equal(await totalRequests(store), before);
    } finally {
      await store.close();
    }
  });

  // The race itself is the test above (in one process, where both checks surely come before either commit); two
  // real relays started together may or may not overlap, and either way the rows are queued once.
  test('two relay processes started together on one shared queue and one plex_autoscan queue.db take it over once', async () => {
    const url = await sharedUrl();
    const file = join(tempDir(), 'queue.db');
    copyFileSync(join(PLEX_AUTOSCAN, 'queue.db'), file);
    // No target: the scans stay queued, so what was queued can be counted.
    const start = (id: string) =>
      spawnRelay({ config: { SERVER_QUEUE_URL: url, SERVER_RELAY_ID: id, PLEX_ENABLED: false, SERVER_SCAN_DELAY: 600 }, expectQueuefile: file, args: ['--queuefile', file] });
    const relays: RelayProcess[] = await Promise.all([start('relay-a'), start('relay-b')]);
    try {
      const took = (r: RelayProcess) => r.events().filter((e) => /plex_autoscan's queue/.test(e.msg ?? '')).map((e) => e.msg as string);
      const all = relays.flatMap(took);
      assert.equal(all.filter((m) => /took over .*3 queued/.test(m)).length, 1, all.join('\n'));
      const pg = await PgQueueStore.open({ url, relayId: 'check' });
      try {
        assert.equal(await totalRequests(pg), 3);
      } finally {
        await pg.close();
      }
    } finally {
      await Promise.all(relays.map((r) => r.kill()));
    }
  });
});
