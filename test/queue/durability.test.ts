import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { scanRequestSchema } from '../../src/core/scan.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { tempDir } from '../helpers/relay.ts';

// "Nothing lost on a crash or a power cut" rests on two settings of the queue's own connection: WAL (a commit
// is one append, readers never block the writer) and synchronous=FULL (the WAL is fsync'd at every commit;
// NORMAL would lose the last commits on power loss). better-sqlite3's own build defaults to FULL; the queue sets
// it anyway so another build or an experiment's override cannot weaken it unseen. Losing either fails here.
test('the queue file is opened in WAL mode with synchronous=FULL, and the file itself says WAL to another program', () => {
  const file = join(tempDir(), 'queue.db');
  const store = new QueueStore(file);
  try {
    assert.equal(store.db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(store.db.pragma('synchronous', { simple: true }), 2, 'synchronous is FULL (2), not NORMAL (1) or OFF (0)');
    // WAL is recorded in the database header, so real sqlite3 opening the file sees it too.
    assert.equal(execFileSync('sqlite3', [file, 'PRAGMA journal_mode;'], { encoding: 'utf8' }).trim(), 'wal');
  } finally {
    store.close();
  }
});

// A claim is the one commit written without its own fsync (synchronous=NORMAL for that commit only, issue 39's
// bench): lost to a power cut, its deliveries are waiting again, which is what recoverInFlight makes of a claim at
// start anyway. It must not weaken the commits after it, and a crash of the process (not the machine) keeps it.
test('a claim leaves the connection at synchronous=FULL for every commit after it, also when it fails', () => {
  const store = new QueueStore(join(tempDir(), 'queue.db'));
  try {
    const folders = ['/data/Movies/A', '/data/Movies/B'];
    store.enqueueMany(folders.map((folder) => scanRequestSchema.parse({ folder, source: 'Manual' })), { delayMs: 0, maxMs: 0 }, 1000);
    store.activateDue(['jf'], 2000);
    assert.equal(store.claimDeliveries(1, 2000, 'jf').length, 1);
    assert.equal(store.db.pragma('synchronous', { simple: true }), 2);
    store.db.exec(`CREATE TRIGGER refuse BEFORE UPDATE ON deliveries BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    assert.throws(() => store.claimDeliveries(8, 3000, 'jf'), /refused/);
    assert.equal(store.db.pragma('synchronous', { simple: true }), 2);
  } finally {
    store.close();
  }
});

test('a claim survives a kill -9 of the relay that made it (the WAL holds it): the restart sends it again', () => {
  const file = join(tempDir(), 'queue.db');
  const script = `
    const { QueueStore } = await import(${JSON.stringify(new URL('../../src/queue/store.ts', import.meta.url).href)});
    const { scanRequestSchema } = await import(${JSON.stringify(new URL('../../src/core/scan.ts', import.meta.url).href)});
    const store = new QueueStore(${JSON.stringify(file)});
    store.enqueueMany([scanRequestSchema.parse({ folder: '/data/Movies/A', source: 'Manual' })], { delayMs: 0, maxMs: 0 }, 1000);
    store.activateDue(['jf'], 2000);
    store.claimDeliveries(8, 2000, 'jf');
    process.kill(process.pid, 'SIGKILL');`;
  assert.throws(() => execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'pipe' }), (err: { signal?: string; stderr?: Buffer }) => {
    assert.equal(err.signal, 'SIGKILL', String(err.stderr));
    return true;
  });
  const store = new QueueStore(file);
  try {
    const [entry] = store.view.listOpen();
    assert.deepEqual(entry!.deliveries.map((d) => [d.target, d.status, d.attempts]), [['jf', 'sending', 1]]);
    assert.equal(store.recoverInFlight(), 1);
    assert.equal(store.claimDeliveries(8, 3000, 'jf').length, 1);
  } finally {
    store.close();
  }
});
