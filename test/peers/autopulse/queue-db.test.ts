import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { importAutopulse } from '../../../src/peers/autopulse/import.ts';
import { parseConfig } from '../../../src/config/load.ts';
import { QueueIntake } from '../../../src/queue/door.ts';
import { QueueStore } from '../../../src/queue/store.ts';
import { autopulseTitle } from '../../../src/peers/autopulse/names.ts';
import { importAutopulseQueue, naiveUtcMs, requestsFromAutopulseQueue } from '../../../src/peers/autopulse/queue-db.ts';
import { ROOT, runCli, tempDir } from '../../helpers/relay.ts';
import { autopulseDb } from '../../helpers/autopulse-db.ts';

const FIX = join(ROOT, 'test', 'fixtures', 'autopulse');

const ROWS = [
  { id: 'b-later', file_path: '/media/tv/Late/Season 1/e1.mkv' },
  { id: 'a-retry', file_path: '/media/tv/Retry/Season 2/e2.mkv', process_status: 'retry', targets_hit: 'plex,emby' },
  { id: 'c-done', file_path: '/media/tv/Done/Season 1/e.mkv', process_status: 'complete', targets_hit: 'plex' },
  { id: 'd-failed', file_path: '/media/tv/Failed/Season 1/e.mkv', process_status: 'failed' },
  { id: 'e-all-hit', file_path: '/media/tv/AllHit/Season 1/e.mkv', process_status: 'retry', event_source: 'radarr', targets_hit: 'plex,emby,tdarr,sonarr,radarr,flows,abs,script,peer' },
  { id: 'f-manual', file_path: '/media/movies/Film (2020)/film.mkv', event_source: 'manual', can_process: '2999-01-01 00:00:00' },
];

describe("import-autopulse takes over autopulse's pending scans (scan_events)", () => {
  const { config: raw } = importAutopulse(readFileSync(join(FIX, 'full.toml'), 'utf8'), 'full.toml', {});
  const { config } = parseConfig(raw, {});
  const names = Object.keys(raw.TARGETS as object);

  test("a retried row goes only to the targets it has not reached, less its trigger's excludes (runner.rs:254-263)", () => {
    const rows = ROWS.filter((r) => r.id === 'a-retry' || r.id === 'b-later').map((r) => ({ event_source: 'sonarr', process_status: 'pending', targets_hit: '', can_process: '2024-10-14 12:00:00', ...r }));
    const { requests } = requestsFromAutopulseQueue(rows, config, names, Date.parse('2026-11-26T00:00:00Z'));
    // sonarr excludes "abs" (full.toml); a-retry has reached plex and emby already.
    assert.deepEqual(requests.map((r) => [r.folder, r.targets, r.delay]), [
      ['/media/tv/Late/Season 1', ['plex', 'emby', 'tdarr', 'sonarr', 'radarr', 'flows', 'script', 'peer'], 0],
      ['/media/tv/Retry/Season 2', ['tdarr', 'sonarr', 'radarr', 'flows', 'script', 'peer'], 0],
    ]);
  });

  test("a row keeps its trigger's name in its title (autopulseTitle), so /list and the webhook's trigger say it, not `api` (issue 48 item 3)", () => {
    // models.rs:77-119: event_source is the trigger's name as configured (my_sonarr), not its type.
    const rows = [{ id: 'u-1', event_source: 'my_sonarr', file_path: '/m/F/f.mkv', process_status: 'pending', targets_hit: '', can_process: '2024-10-14 12:00:00' }];
    const { requests } = requestsFromAutopulseQueue(rows, config, names, Date.parse('2026-11-26T00:00:00Z'));
    assert.deepEqual(requests.map((r) => r.title), [autopulseTitle('my_sonarr')]);
    assert.equal(autopulseTitle('my_sonarr'), 'autopulse trigger my_sonarr', "the form /list's event_source reads back (peers/autopulse/routes.ts)");
  });

  test('a row not due yet keeps its wait (can_process)', () => {
    const now = Date.parse('2026-11-26T10:00:00Z');
    const rows = [{ id: 'x', event_source: 'manual', file_path: '/m/F/f.mkv', process_status: 'pending', targets_hit: '', can_process: '2026-11-26 10:01:30.250000' }];
    assert.equal(requestsFromAutopulseQueue(rows, config, names, now).requests[0]!.delay, 91);
    assert.equal(naiveUtcMs('2026-11-26T10:01:30'), Date.parse('2026-11-26T10:01:30Z'));
  });

  test('the CLI: pending and retry rows queued once in autopulse order, a row every target had is skipped, complete/failed counted', async () => {
    const dir = tempDir('autopulse-takeover-');
    const dbFile = join(dir, 'autopulse.db');
    autopulseDb(dbFile, ROWS);
    const queuefile = join(dir, 'queue.db');
    const args = ['--config', join(dir, 'config.json'), '--queuefile', queuefile, 'import-autopulse', join(FIX, 'full.toml'), '--database', `sqlite://${dbFile}`];
    const out = await runCli(args);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /4 pending or retrying row\(s\), 3 queued in autopulse's order, each to the targets it had not reached; 2 row\(s\) already complete or failed were left alone; skipped: \/media\/tv\/AllHit\/Season 1\/e\.mkv \(every target it goes to has it already/);
    const store = new QueueStore(queuefile);
    try {
      assert.deepEqual(store.view.listOpen().sort((a, b) => a.id - b.id).map((e) => e.folder), ['/media/tv/Late/Season 1', '/media/tv/Retry/Season 2', '/media/movies/Film (2020)']);
    } finally {
      store.close();
    }
    const again = await runCli([...args, '--force']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /were already taken over .*not queued again/);
  });

  test('two relays taking over the same rows at once: queued once', async () => {
    const dir = tempDir('autopulse-race-');
    const dbFile = join(dir, 'autopulse.db');
    autopulseDb(dbFile, ROWS);
    const store = new QueueStore(join(dir, 'queue.db'));
    try {
      const intake = new QueueIntake(store, [], () => ({ delayMs: 60_000, maxMs: 180_000 }));
      const [a, b] = await Promise.all([0, 1].map(() => importAutopulseQueue({ database: dbFile, config, targetNames: names, intake })));
      assert.deepEqual([a!.queued, b!.queued].sort(), [0, 3]);
      assert.ok(a!.already || b!.already);
      assert.equal(store.view.listOpen().length, 3);
    } finally {
      store.close();
    }
  });

  test('not an autopulse database, or one in memory: a clear error', async () => {
    const dir = tempDir('autopulse-bad-');
    const other = join(dir, 'other.db');
    new Database(other).exec('CREATE TABLE x (a)');
    const out = await runCli(['--config', join(dir, 'c.json'), '--queuefile', join(dir, 'q.db'), 'import-autopulse', join(FIX, 'full.toml'), '--database', other]);
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /has no scan_events table: it is not autopulse's database/);
    const mem = await runCli(['--config', join(dir, 'c2.json'), '--queuefile', join(dir, 'q.db'), 'import-autopulse', join(FIX, 'full.toml'), '--database', 'sqlite://:memory:']);
    assert.notEqual(mem.code, 0);
    assert.match(mem.stderr, /in memory/);
  });
});
