import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { scanRequestSchema } from '../../src/core/scan.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { moveQueue } from '../../src/queue/move.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { postForm, runCli, spawnRelay, tempDir } from '../helpers/relay.ts';

let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

const req = (folder: string, extra: Record<string, unknown> = {}) => scanRequestSchema.parse({ folder, source: 'Sonarr', ...extra });

test('move-queue takes the SQLite queue\'s open scans and page tokens into PostgreSQL, once', async () => {
  const dir = tempDir();
  const queuefile = join(dir, 'queue.db');
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ SERVER_PASS: 'test-secret' }));
  const sqlite = new QueueStore(queuefile);
  const timing = { delayMs: 60_000, maxMs: 0 };
  sqlite.enqueueMany([req('/data/TV/Dark/Season 01', { files: ['/data/TV/Dark/Season 01/e1.mkv'], priority: 2, title: 'Dark' }), req('/data/Movies/Heat', { event: 'Upgrade' })], timing, 1000, {
    'drive.page_token.root': '1234',
  });
  const [done] = sqlite.enqueueMany([req('/data/Movies/Old')], { delayMs: 0, maxMs: 0 }, 1000);
  sqlite.activateDue(['plex'], 2000);
  const [claimed] = sqlite.claimDeliveries(1, 2000, 'plex');
  sqlite.completeDelivery(claimed!.item.id, 'plex', { status: 'done' }, 3000);
  assert.equal(claimed!.item.id, done!.id);
  sqlite.close();

  const url = await cluster.createDatabase();
  const run = await runCli(['--config', config, '--queuefile', queuefile, 'move-queue', '--to', url]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /moved 2 open scan\(s\) \(1 file\(s\)\) and 1 saved value\(s\)/);

  const pg = await PgQueueStore.open({ url, relayId: 'check' });
  try {
    const open = await pg.view.listOpen();
    assert.deepEqual(
      open.map((e) => [e.folder, e.priority, e.files, e.title, e.source, e.upgrade]).sort(),
      [
        ['/data/Movies/Heat', 0, [], null, 'Sonarr', true],
        ['/data/TV/Dark/Season 01', 2, ['/data/TV/Dark/Season 01/e1.mkv'], 'Dark', 'Sonarr', false],
      ],
    );
    assert.equal(await pg.meta.get('drive.page_token.root'), '1234');
  } finally {
    await pg.close();
  }
  const left = new QueueStore(queuefile);
  assert.equal(left.countOpen(), 0, 'the moved scans are gone from the file, so no queue sends them twice');
  assert.equal(left.view.counts().done, 1, 'history stays in the file');
  left.close();

  // A second run on the emptied file moves nothing (not its old page tokens either), and says so.
  const again = await runCli(['--config', config, '--queuefile', queuefile, 'move-queue', '--to', url]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^nothing left to move: .*queue\.db has no open scans \(its scans went to postgres:\/\/scanrelay@127\.0\.0\.1:\d+\/\w+ on \d{4}-/);

  // Another file with scans, into the same database: refused unless --force.
  const other = join(dir, 'other.db');
  const second = new QueueStore(other);
  second.enqueueMany([req('/data/Movies/Other')], timing, 1000);
  second.close();
  const refused = await runCli(['--config', config, '--queuefile', other, 'move-queue', '--to', url]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr + refused.stdout, /was moved into this queue on .*--force/);
});

test('move-queue refuses while a relay runs on the queue file (unless --force), and moves once it stopped', async () => {
  const relay = await spawnRelay({ config: { SERVER_SCAN_DELAY: 3600 } });
  const url = await cluster.createDatabase();
  try {
    const queued = await postForm(relay.url, { eventType: 'Manual', filepath: '/data/Movies/Running (2024)/film.mkv' });
    assert.equal(queued.status, 200, queued.body);
    const refused = await runCli(['--config', relay.configPath, '--queuefile', relay.queuefile, 'move-queue', '--to', url]);
    assert.equal(refused.code, 2, refused.stdout);
    assert.match(refused.stderr, /queue\.db is in use by a running relay \(it holds .*queue\.db-relay\): stop it first, or pass --force/);
    const check = await PgQueueStore.open({ url, relayId: 'check' });
    assert.equal((await check.view.counts()).pending, 0, 'nothing moved');
    await check.close();
  } finally {
    await relay.kill('SIGTERM');
  }
  const moved = await runCli(['--config', relay.configPath, '--queuefile', relay.queuefile, 'move-queue', '--to', url]);
  assert.equal(moved.code, 0, moved.stderr);
  assert.match(moved.stdout, /^moved 1 open scan/);
});

test('a moved scan keeps every file of its sample (not just the few a list shows); one whose list was cut goes as its folder', async () => {
  const sqlite = new QueueStore(join(tempDir(), 'queue.db'));
  const names = (folder: string, n: number) => Array.from({ length: n }, (_, i) => `${folder}/e${String(i).padStart(4, '0')}.mkv`);
  sqlite.enqueueMany([req('/data/TV/A/S1', { files: names('/data/TV/A/S1', 25) }), req('/data/TV/B/S1', { files: names('/data/TV/B/S1', 1500) })], { delayMs: 60_000, maxMs: 0 }, 1000);
  const pg = await PgQueueStore.open({ url: await cluster.createDatabase(), relayId: 'check' });
  try {
    const moved = await moveQueue(sqlite, pg, { file: 'queue.db', now: 2000 });
    assert.deepEqual([moved.scans, moved.files], [2, 25]);
    const open = await Promise.all((await pg.view.listOpen()).map((e) => pg.view.get(e.id)));
    assert.deepEqual(open.map((e) => [e!.folder, e!.files.length, e!.fileCount]).sort(), [
      ['/data/TV/A/S1', 25, 25],
      ['/data/TV/B/S1', 0, 0],
    ]);
  } finally {
    await pg.close();
    sqlite.close();
  }
});

test('move-queue without a URL, or with a database that cannot be reached, says so', async () => {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ SERVER_PASS: 'test-secret' }));
  new QueueStore(join(dir, 'queue.db')).close();
  const none = await runCli(['--config', config, '--queuefile', join(dir, 'queue.db'), 'move-queue']);
  assert.equal(none.code, 2);
  assert.match(none.stderr + none.stdout, /no PostgreSQL URL: pass --to/);
  const down = await runCli(['--config', config, '--queuefile', join(dir, 'queue.db'), 'move-queue', '--to', `postgres://u:pw@127.0.0.1:${cluster.port + 1}/q`]);
  assert.equal(down.code, 2);
  assert.match(down.stderr + down.stdout, /cannot reach the queue database at postgres:\/\/u:\*\*\*@/);
});
