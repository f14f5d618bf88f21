import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { importAutopulse } from '../../../src/peers/autopulse/import.ts';
import { parseConfig } from '../../../src/config/load.ts';
import { QueueIntake } from '../../../src/queue/door.ts';
import { QueueStore } from '../../../src/queue/store.ts';
import { importAutopulseQueue } from '../../../src/peers/autopulse/queue-db.ts';
import { startPgCluster, type PgCluster } from '../../helpers/postgres.ts';
import { ROOT, tempDir } from '../../helpers/relay.ts';

let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

/** scan_events as autopulse's PostgreSQL migrations leave it (crates/database/migrations/postgres/*: create, add_timer). */
const SCHEMA = `CREATE TABLE scan_events (
  id TEXT PRIMARY KEY NOT NULL, event_source TEXT NOT NULL, event_timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL,
  file_path TEXT NOT NULL, file_hash TEXT, process_status TEXT NOT NULL DEFAULT 'pending', found_status TEXT NOT NULL DEFAULT 'not_found',
  failed_times INTEGER DEFAULT 0 NOT NULL, next_retry_at TIMESTAMP, targets_hit TEXT DEFAULT '' NOT NULL, found_at TIMESTAMP, processed_at TIMESTAMP,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL);
  ALTER TABLE scan_events ADD COLUMN can_process TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP;`;

test("autopulse's PostgreSQL scan_events: pending and retry rows in creation order, each to the targets it has not reached; the rest counted", async () => {
  const url = await cluster.createDatabase();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(SCHEMA);
    const rows: Array<[string, string, string, string, string, string]> = [
      ['z-first', 'sonarr', '/media/tv/First/Season 1/e.mkv', 'pending', '', '2026-01-01 10:00:00'],
      ['a-second', 'sonarr', '/media/tv/Second/Season 1/e.mkv', 'retry', 'plex', '2026-01-01 10:00:01'],
      ['m-done', 'sonarr', '/media/tv/Done/Season 1/e.mkv', 'complete', 'plex', '2026-01-01 10:00:02'],
    ];
    for (const [id, source, path, status, hit, created] of rows) {
      await client.query('INSERT INTO scan_events (id, event_source, file_path, process_status, targets_hit, created_at, can_process) VALUES ($1, $2, $3, $4, $5, $6, $6)', [id, source, path, status, hit, created]);
    }
  } finally {
    await client.end();
  }
  const { config: raw } = importAutopulse(readFileSync(join(ROOT, 'test', 'fixtures', 'autopulse', 'full.toml'), 'utf8'), 'full.toml', {});
  const { config } = parseConfig(raw, {});
  const store = new QueueStore(join(tempDir('autopulse-pg-'), 'queue.db'));
  try {
    const intake = new QueueIntake(store, [], () => ({ delayMs: 60_000, maxMs: 180_000 }));
    const r = await importAutopulseQueue({ database: url, config, targetNames: Object.keys(raw.TARGETS as object), intake });
    assert.equal(r.rows, 2);
    assert.equal(r.queued, 2);
    assert.equal(r.processed, 1);
    assert.deepEqual(store.view.listOpen().sort((a, b) => a.id - b.id).map((e) => e.folder), ['/media/tv/First/Season 1', '/media/tv/Second/Season 1']);
    const again = await importAutopulseQueue({ database: url, config, targetNames: [], intake });
    assert.ok(again.already);
  } finally {
    store.close();
  }
});
