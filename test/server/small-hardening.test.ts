import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { MAX_DURATION_S } from '../../src/config/durations.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { DriveCache } from '../../src/triggers/drive/cache.ts';
import { FakePlex } from '../fakes/plex.ts';
import { runCli, tempDir } from '../helpers/relay.ts';
import { startRelayAgainst } from '../helpers/suite.ts';

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe('small hardening (issue 35, item 14)', () => {
  test('cache.db and its -wal and -shm files are created 0600, like queue.db', () => {
    const dir = tempDir();
    const file = join(dir, 'cache.db');
    const cache = new DriveCache(file);
    try {
      cache.db.exec(`INSERT INTO drives (id, name) VALUES ('d', 'My Drive')`);
      for (const f of [file, `${file}-wal`, `${file}-shm`]) {
        assert.ok(existsSync(f), f);
        assert.equal(modeOf(f), 0o600, f);
      }
    } finally {
      cache.db.close();
    }
    // An older cache left readable by others is made private when opened.
    const old = join(dir, 'old-cache.db');
    execFileSync('sqlite3', [old, 'CREATE TABLE t (x);']);
    execFileSync('chmod', ['0644', old]);
    new DriveCache(old).db.close();
    assert.equal(modeOf(old), 0o600);
  });

  test('SERVER_SCAN_DELAY 1e308: the relay starts, queues and shows the dashboard (it answered 500)', async () => {
    const plex = await new FakePlex().start();
    const relay = await startRelayAgainst(plex, { SERVER_PASS: 'small-secret', SERVER_ALLOW_MANUAL_SCAN: true, SERVER_SCAN_DELAY: 1e308 });
    try {
      const post = await fetch(relay.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ eventType: 'Manual', filepath: '/movies/Heat (1995)/Heat.mkv' }),
      });
      assert.equal(post.status, 200);
      const page = await fetch(relay.url, { headers: { accept: 'text/html' } });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /Heat \(1995\)/);
      const queue = await fetch(`${new URL(relay.url).origin}/api/small-secret/queue`, { headers: { accept: 'application/json' } });
      assert.equal(queue.status, 200);
      const body = (await queue.json()) as { count: number };
      assert.equal(body.count, 1);
      // The scan is due when the bound says, not never.
      const row = (relay.store as QueueStore).db.prepare<[], { due_at: number; first_at: number }>(`SELECT due_at, first_at FROM scans`).get()!;
      assert.equal(row.due_at - row.first_at, MAX_DURATION_S * 1000);
    } finally {
      await relay.close();
      await plex.stop();
    }
  });

  test('SERVER_IP "not-an-ip" is one line naming the key and exit status 2, no stack trace', async () => {
    const dir = tempDir();
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ SERVER_IP: 'not-an-ip', SERVER_PORT: 0, SERVER_PASS: 'p', PLEX_ENABLED: false }));
    const res = await runCli(['--config', config, '--queuefile', join(dir, 'queue.db'), 'server'], { cwd: dir });
    assert.equal(res.code, 2);
    assert.match(res.stderr, /^scanrelay: SERVER_IP "not-an-ip" is not an IP address or a host name this machine can resolve: use "0\.0\.0\.0"/);
    assert.equal(res.stderr.trim().split('\n').length, 1);
    assert.doesNotMatch(res.stdout + res.stderr, /\n\s+at /, 'no stack trace');
  });

  test('queue.db gives the space of pruned history back (incremental auto-vacuum), an older file included', () => {
    const dir = tempDir();
    // A queue file from before: no auto-vacuum.
    const file = join(dir, 'queue.db');
    execFileSync('sqlite3', [file, 'PRAGMA journal_mode=WAL; CREATE TABLE other_program (x); INSERT INTO other_program VALUES (1);']);
    assert.equal(execFileSync('sqlite3', [file, 'PRAGMA auto_vacuum;'], { encoding: 'utf8' }).trim(), '0');
    const store = new QueueStore(file);
    try {
      assert.equal(store.db.pragma('auto_vacuum', { simple: true }), 2, 'incremental');
      const now = Date.now();
      const insert = store.db.prepare(`INSERT INTO scans (folder, status, source, event, first_at, last_at, due_at, finished_at) VALUES (?, 'done', 'manual', 'Manual', ?, ?, ?, ?)`);
      const file1 = store.db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
         INSERT INTO scan_files (scan_id, path) SELECT ?, '/data/Movies/Film ' || ? || '/' || i || '-' || hex(randomblob(40)) || '.mkv' FROM n`,
      );
      store.db.transaction(() => {
        for (let i = 0; i < 20; i++) {
          const id = Number(insert.run(`/data/Movies/Film ${i}`, now, now, now, now).lastInsertRowid);
          file1.run(id, i);
        }
      })();
      const pages = () => store.db.pragma('page_count', { simple: true }) as number;
      const full = pages();
      assert.equal(store.pruneHistory(0), 20);
      assert.equal(store.db.pragma('freelist_count', { simple: true }), 0, 'no free page kept in the file');
      assert.ok(pages() < full / 10, `pages ${full} -> ${pages()}`);
      store.db.pragma('wal_checkpoint(TRUNCATE)');
      assert.ok(statSync(file).size < 100 * 1024, `file size ${statSync(file).size}`);
    } finally {
      store.close();
    }
  });
});
