import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
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
