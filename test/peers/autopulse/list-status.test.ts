import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { importAutopulse } from '../../../src/peers/autopulse/import.ts';
import { configSchema, scanDelayMax, type FileConfig } from '../../../src/config/schema.ts';
import { relayConfig } from '../../../src/config/named-targets.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import type { QueueBackend } from '../../../src/queue/backend.ts';
import { QueueIntake } from '../../../src/queue/door.ts';
import { PgQueueStore } from '../../../src/queue/pg/store.ts';
import { QueueStore } from '../../../src/queue/store.ts';
import { HOLD_PREFIX, MAX_HOLDS, recordTakenOver } from '../../../src/peers/autopulse/holds.ts';
import { configIntake } from '../../../src/queue/door.ts';
import { importAutopulseQueue } from '../../../src/peers/autopulse/queue-db.ts';
import { autopulseDb } from '../../helpers/autopulse-db.ts';
import { buildApp } from '../../../src/server/app.ts';
import { DEFAULT_RECOGNIZERS } from '../../../src/server/run.ts';
import { startPgCluster, type PgCluster } from '../../helpers/postgres.ts';
import { tempDir, waitFor } from '../../helpers/relay.ts';

/*
 * autopulse's /list and /status/<id> (crates/server/src/routes/list.rs, status.rs, mod.rs:20-59 at
 * dan-online/autopulse 55124fd; the query is manager.rs:195-284) and its hash holds (service/src/runner.rs:37-144,
 * cleanup runner.rs:332-347), on both queue stores. The first tests replay autopulse's own
 * crates/server/src/tests/routes/public_endpoints.rs:76-115.
 */

const AUTH = { authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` };

let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

interface Relay {
  app: FastifyInstance;
  store: QueueBackend;
  close(): Promise<void>;
}

/** The relay's app as startRelay wires it, over a given store, from an imported autopulse config. */
async function relayOn(store: QueueBackend, yaml: string, extra: Record<string, unknown> = {}): Promise<Relay> {
  const { config } = importAutopulse(yaml, 'config.yaml', {});
  const parsed = relayConfig(configSchema.parse({ ...config, SERVER_PASS: 'test-secret', SERVER_QUEUE_URL: undefined, ...extra }) as FileConfig);
  const timing = { delayMs: parsed.SERVER_SCAN_DELAY * 1000, maxMs: scanDelayMax(parsed) * 1000 };
  const intake = new QueueIntake(store, [], () => timing);
  const app = await buildApp({ config: parsed, log: silentLogger(), intake, store, recognizers: DEFAULT_RECOGNIZERS });
  await app.ready();
  return { app, store, close: () => app.close() };
}

type Open = () => Promise<{ store: QueueBackend; reopen: () => Promise<QueueBackend> }>;
const STORES: Array<[string, Open]> = [
  [
    'SQLite',
    async () => {
      const file = join(tempDir('autopulse-list-'), 'queue.db');
      const store = new QueueStore(file);
      return { store, reopen: async () => new QueueStore(file) };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const url = await cluster.createDatabase();
      const store = await PgQueueStore.open({ url, relayId: 'relay-a' });
      return { store, reopen: () => PgQueueStore.open({ url, relayId: 'relay-a' }) };
    },
  ],
];

/** The scan a trigger's answer queued its file in: a file's event id is "<scan>-<path tag>" (peers/autopulse/events.ts fileEventId). */
const scanOf = (id: string) => Number.parseInt(id, 10);

const manual = (r: Relay, path: string, hash?: string) =>
  r.app.inject({ method: 'GET', url: `/triggers/manual?path=${encodeURIComponent(path)}${hash ? `&hash=${hash}` : ''}`, headers: AUTH });

for (const [name, open] of STORES) {
  describe(`autopulse's /status/<id> and /list on ${name}`, () => {
    test("a row taken over from autopulse's queue keeps its uuid: /status/<uuid> answers with the scan it became, named by its trigger", async () => {
      const { store } = await open();
      const r = await relayOn(store, '');
      try {
        const { config: imported } = importAutopulse('', 'config.yaml', {});
        const config = relayConfig(configSchema.parse({ ...imported, SERVER_PASS: 'test-secret', SERVER_QUEUE_URL: undefined }) as FileConfig);
        const database = join(tempDir('autopulse-takeover-'), 'autopulse.db');
        const uuid = '6f1c2a9e-54b7-4c39-9d2e-0c8a1b7e4f21';
        autopulseDb(database, [{ id: uuid, event_source: 'my_sonarr', file_path: '/tv/Show/Season 01/e1.mkv' }]);
        const result = await importAutopulseQueue({ database, config, targetNames: [...config.targets.keys()], intake: configIntake(store, config) });
        await recordTakenOver(store.meta, result.taken);
        const status = await r.app.inject({ method: 'GET', url: `/status/${uuid}`, headers: AUTH });
        assert.equal(status.statusCode, 200, status.body);
        const event = status.json() as { id: string; event_source: string; file_path: string };
        assert.equal(event.id, uuid);
        assert.equal(event.event_source, 'my_sonarr');
        assert.equal(event.file_path, '/tv/Show/Season 01/e1.mkv');
        const list = await r.app.inject({ method: 'GET', url: '/list', headers: AUTH });
        assert.deepEqual((list.json() as Array<{ event_source: string }>).map((e) => e.event_source), ['my_sonarr']);
      } finally {
        await r.close();
        await store.close();
      }
    });

    test('status_endpoint_still_requires_auth and _accepts_valid_basic_auth (public_endpoints.rs:76-115): the manual answer\'s id works', async () => {
      const { store } = await open();
      const r = await relayOn(store, '');
      try {
        const noAuth = await r.app.inject({ method: 'GET', url: '/status/test-id' });
        assert.equal(noAuth.statusCode, 401);
        assert.equal(noAuth.json(), 'Authentication required');
        const queued = await manual(r, '/media/tv/Show/Season 1/e1.mkv');
        assert.equal(queued.statusCode, 200, queued.body);
        const id = queued.json().id as string;
        const res = await r.app.inject({ method: 'GET', url: `/status/${id}`, headers: AUTH });
        assert.equal(res.statusCode, 200, res.body);
        const ev = res.json();
        assert.equal(ev.id, id);
        assert.equal(ev.event_source, 'manual');
        assert.equal(ev.file_path, '/media/tv/Show/Season 1/e1.mkv');
        assert.equal(ev.process_status, 'pending');
        assert.equal(ev.targets_hit, '');
        assert.deepEqual(Object.keys(ev).sort(), Object.keys(queued.json()).sort(), 'the same fields as the trigger\'s answer (models.rs:77-119)');
      } finally {
        await r.close();
        await store.close();
      }
    });

    test('an unknown id: 404 "Event not found" (status.rs:18), a number or a uuid alike', async () => {
      const { store } = await open();
      const r = await relayOn(store, '');
      try {
        for (const id of ['999999', 'test-id', '0b9a3a8e-5b8e-4a43-9d7e-1f2a3b4c5d6e', '0']) {
          const res = await r.app.inject({ method: 'GET', url: `/status/${id}`, headers: AUTH });
          assert.equal(res.statusCode, 404, id);
          assert.equal(res.body, 'Event not found');
        }
      } finally {
        await r.close();
        await store.close();
      }
    });

    test('/list: newest first, limit and page, "-field" ascending, status and search filters, autopulse\'s errors', async () => {
      const { store } = await open();
      const r = await relayOn(store, 'triggers:\n  my_manual:\n    type: manual\n');
      try {
        const noAuth = await r.app.inject({ method: 'GET', url: '/list' });
        assert.equal(noAuth.statusCode, 401);
        const ids: string[] = [];
        for (const show of ['Alpha', 'Bravo', 'Charlie_100%', 'Delta']) {
          const res = await manual(r, `/media/tv/${show}/e1.mkv`);
          assert.equal(res.statusCode, 200, res.body);
          ids.push(res.json().id);
        }
        const mine = await r.app.inject({ method: 'GET', url: `/triggers/my_manual?path=${encodeURIComponent('/media/tv/Echo/e1.mkv')}`, headers: AUTH });
        ids.push(mine.json().id);
        // Plex (a target name) takes them all: Bravo is scanned, Charlie's Plex refused it and it waits for a retry.
        const now = Date.now();
        await store.activateDue(['plex'], now + 120_000);
        const claimed = await store.claimDeliveries(10, now + 120_000, 'plex');
        assert.equal(claimed.length, 5);
        await store.completeDelivery(scanOf(ids[1]!), 'plex', { status: 'done', detail: 'section 1' }, now + 121_000);
        await store.retryDelivery(scanOf(ids[2]!), 'plex', 'Plex answered 503', now + 600_000);
        const list = async (query: string) => {
          const res = await r.app.inject({ method: 'GET', url: `/list${query}`, headers: AUTH });
          assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
          return (res.json() as Array<Record<string, string>>).map((e) => e.file_path);
        };
        // created_at descending by default (manager.rs:270-272); ties by id.
        assert.deepEqual(await list(''), ['/media/tv/Echo/e1.mkv', '/media/tv/Delta/e1.mkv', '/media/tv/Charlie_100%/e1.mkv', '/media/tv/Bravo/e1.mkv', '/media/tv/Alpha/e1.mkv']);
        assert.deepEqual(await list('?limit=2&page=2'), ['/media/tv/Charlie_100%/e1.mkv', '/media/tv/Bravo/e1.mkv']);
        assert.deepEqual(await list('?limit=2&page=0'), ['/media/tv/Echo/e1.mkv', '/media/tv/Delta/e1.mkv'], 'page 0 is page 1');
        assert.deepEqual(await list('?sort=-id&limit=2'), ['/media/tv/Alpha/e1.mkv', '/media/tv/Bravo/e1.mkv']);
        assert.deepEqual(await list('?sort=file_path&limit=1'), ['/media/tv/Echo/e1.mkv']);
        assert.deepEqual(await list('?status=complete'), ['/media/tv/Bravo/e1.mkv']);
        assert.equal((await list('?status=pending')).length, 3);
        assert.deepEqual(await list('?status=retry'), ['/media/tv/Charlie_100%/e1.mkv']);
        const retry = (await r.app.inject({ method: 'GET', url: `/status/${ids[2]}`, headers: AUTH })).json();
        assert.deepEqual([retry.process_status, retry.failed_times, retry.targets_hit], ['retry', 1, '']);
        assert.equal(retry.next_retry_at, new Date(now + 600_000).toISOString().replace('Z', ''));
        assert.deepEqual(await list('?status=nonsense'), []);
        // Case-insensitive, and LIKE's wildcards match themselves (manager.rs:28-41, 274-277).
        assert.deepEqual(await list('?search=ALPHA'), ['/media/tv/Alpha/e1.mkv']);
        assert.deepEqual(await list(`?search=${encodeURIComponent('_100%')}`), ['/media/tv/Charlie_100%/e1.mkv']);
        assert.deepEqual(await list(`?search=${encodeURIComponent('%')}`), ['/media/tv/Charlie_100%/e1.mkv']);
        const [echo] = (await r.app.inject({ method: 'GET', url: '/list?limit=1', headers: AUTH })).json();
        assert.equal(echo.event_source, 'my_manual', 'event_source is the trigger\'s name');
        const [done] = (await r.app.inject({ method: 'GET', url: '/list?status=complete', headers: AUTH })).json();
        assert.equal(done.process_status, 'complete');
        assert.equal(typeof done.processed_at, 'string');
        assert.equal(done.targets_hit, 'plex');
        // More than 100 is 100 (manager.rs:233-235); more than a u8 or not a number is serde's 400; a bad sort, 500.
        assert.equal((await r.app.inject({ method: 'GET', url: '/list?limit=200', headers: AUTH })).statusCode, 200);
        for (const q of ['?limit=256', '?limit=ten', '?page=-1']) {
          const res = await r.app.inject({ method: 'GET', url: `/list${q}`, headers: AUTH });
          assert.equal(res.statusCode, 400, q);
          assert.match(res.body, /^Query deserialize error: /);
        }
        const badSort = await r.app.inject({ method: 'GET', url: '/list?sort=size', headers: AUTH });
        assert.equal(badSort.statusCode, 500);
        assert.equal(badSort.body, 'invalid sort field');
      } finally {
        await r.close();
        await store.close();
      }
    });

    test('/stats counts each scan once, in the status /list gives it: a scan waiting after a refused attempt is retrying, not pending', async () => {
      // autopulse's get_stats (crates/service/src/manager.rs:163-175) counts its events by process_status: total is
      // every event, processed is complete, retrying is retry, pending is pending (routes/stats.rs:22-38 answers it).
      const { store } = await open();
      const r = await relayOn(store, '');
      try {
        const ids: number[] = [];
        for (const show of ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo']) {
          const res = await manual(r, `/media/tv/${show}/e1.mkv`);
          assert.equal(res.statusCode, 200, res.body);
          ids.push(scanOf(res.json().id));
        }
        const now = Date.now();
        await store.activateDue(['plex'], now + 120_000);
        assert.equal((await store.claimDeliveries(10, now + 120_000, 'plex')).length, 5);
        await store.completeDelivery(ids[0]!, 'plex', { status: 'done', detail: 'section 1' }, now + 121_000);
        await store.completeDelivery(ids[1]!, 'plex', { status: 'failed', error: 'no section' }, now + 121_000);
        await store.retryDelivery(ids[2]!, 'plex', 'Plex answered 503', now + 600_000);
        await store.retryDelivery(ids[3]!, 'plex', 'Plex answered 503', now + 600_000);
        const res = await r.app.inject({ method: 'GET', url: '/stats' });
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json().stats, { total: 5, processed: 1, retrying: 2, failed: 1, pending: 1 });
        // The same scans /list shows under each status.
        for (const [status, n] of [['complete', 1], ['retry', 2], ['failed', 1], ['pending', 1]] as const) {
          const list = await r.app.inject({ method: 'GET', url: `/list?status=${status}`, headers: AUTH });
          assert.equal(list.json().length, n, status);
        }
      } finally {
        await r.close();
        await store.close();
      }
    });

    test('a request held for its hash outlives a restart: /status/<its id> says hash_mismatch, then the scan once the file matches', async () => {
      const dir = tempDir('autopulse-hold-');
      mkdirSync(join(dir, 'Show'));
      const file = join(dir, 'Show', 'ep.mkv');
      writeFileSync(file, 'half an episode');
      const sum = createHash('sha256').update('the whole episode').digest('hex');
      const { store, reopen } = await open();
      // A check delay longer than the test: only the sweep at start (after the restart) can release it.
      const extra = { SERVER_FILE_CHECK_DELAY: 3600, SERVER_PATH_MAPPINGS: { [dir]: [dir] } };
      const first = await relayOn(store, 'opts:\n  check_path: true\n', extra);
      const held = await manual(first, file, sum);
      assert.equal(held.statusCode, 200, held.body);
      const id = held.json().id as string;
      assert.match(id, /^[0-9a-f-]{36}$/, 'a held request has an id of its own, a uuid as autopulse\'s');
      assert.equal(held.json().found_status, 'hash_mismatch');
      const status = await first.app.inject({ method: 'GET', url: `/status/${id}`, headers: AUTH });
      assert.equal(status.statusCode, 200);
      assert.deepEqual([status.json().process_status, status.json().found_status, status.json().file_hash], ['pending', 'hash_mismatch', sum]);
      assert.deepEqual(await store.view.listOpen(), []);
      await first.close();
      await store.close();

      writeFileSync(file, 'the whole episode');
      const store2 = await reopen();
      const second = await relayOn(store2, 'opts:\n  check_path: true\n', extra);
      try {
        await waitFor(async () => (await store2.view.listOpen()).length > 0, 60_000, 'the held scan, after the restart');
        const open2 = await store2.view.listOpen();
        assert.deepEqual(
          open2.map((e) => [e.folder, e.requests]),
          [[join(dir, 'Show'), 1]],
        );
        const after = await waitFor(async () => {
          const res = await second.app.inject({ method: 'GET', url: `/status/${id}`, headers: AUTH });
          return res.statusCode === 200 && res.json().found_status === 'found' ? res.json() : undefined;
        }, 60_000, '/status of the released hold');
        assert.equal(after.id, id);
        assert.equal(after.file_path, file);
        assert.equal(after.process_status, 'pending');
      } finally {
        await second.close();
        await store2.close();
      }
    });

    test('a hold older than SERVER_AUTOPULSE_CLEANUP_DAYS (opts.cleanup_days) is checked once more, then dropped: 404, nothing queued', async () => {
      const dir = tempDir('autopulse-expire-');
      const file = join(dir, 'never.mkv');
      const { store } = await open();
      const r = await relayOn(store, 'opts:\n  check_path: true\n  cleanup_days: 0\n', { SERVER_FILE_CHECK_DELAY: 0.05 });
      try {
        const held = await manual(r, file, 'f'.repeat(64));
        assert.equal(held.json().found_status, 'not_found');
        const id = held.json().id as string;
        await waitFor(async () => (await store.meta.get(HOLD_PREFIX + id)) === undefined, 60_000, 'the expired hold to go');
        const res = await r.app.inject({ method: 'GET', url: `/status/${id}`, headers: AUTH });
        assert.equal(res.statusCode, 404);
        assert.deepEqual(await store.view.listOpen(), []);
      } finally {
        await r.close();
        await store.close();
      }
    });
  });
}

describe('two relays on one PostgreSQL queue release a hold once', () => {
  test('both see the file match; one commit queues it (compare-and-set on the hold)', async () => {
    const dir = tempDir('autopulse-two-');
    mkdirSync(join(dir, 'Film'));
    const file = join(dir, 'Film', 'film.mkv');
    const sum = createHash('sha256').update('film').digest('hex');
    const url = await cluster.createDatabase();
    const a = await PgQueueStore.open({ url, relayId: 'relay-a' });
    const b = await PgQueueStore.open({ url, relayId: 'relay-b' });
    const yaml = 'opts:\n  check_path: true\n';
    const ra = await relayOn(a, yaml, { SERVER_FILE_CHECK_DELAY: 0.02, SERVER_PATH_MAPPINGS: { [dir]: [dir] } });
    const rb = await relayOn(b, yaml, { SERVER_FILE_CHECK_DELAY: 0.02, SERVER_PATH_MAPPINGS: { [dir]: [dir] } });
    try {
      const held = await manual(ra, file, sum);
      assert.equal(held.json().found_status, 'not_found');
      writeFileSync(file, 'film');
      const id = held.json().id as string;
      await waitFor(async () => {
        const res = await rb.app.inject({ method: 'GET', url: `/status/${id}`, headers: AUTH });
        return res.statusCode === 200 && res.json().found_status === 'found';
      }, 60_000, 'the release');
      const scans = await a.view.listOpen();
      assert.deepEqual(scans.map((s) => [s.folder, s.requests]), [[join(dir, 'Film'), 1]], 'one scan, from one request');
    } finally {
      await ra.close();
      await rb.close();
      await a.close();
      await b.close();
    }
  });
});

describe('a released hold whose scan number now names another scan (the queue was moved with move-queue)', () => {
  test('/status/<uuid> answers from the hold, never from the other scan', async () => {
    const store = new QueueStore(join(tempDir('autopulse-moved-'), 'queue.db'));
    const r = await relayOn(store, '');
    try {
      const other = await manual(r, '/media/movies/Other/o.mkv');
      const id = '6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
      const hold = {
        id,
        trigger: 'manual',
        path: '/media/tv/Show/e1.mkv',
        hash: 'a'.repeat(64),
        found: 'found',
        createdAt: Date.now(),
        updatedAt: Date.now(),
        foundAt: Date.now(),
        scanId: scanOf(other.json().id),
        scanFolder: '/media/tv/Show',
        intent: { kind: 'scan', source: 'Manual', event: 'Manual', updateType: 'Modified', paths: [{ path: '/media/tv/Show/e1.mkv', kind: 'guess' }] },
      };
      store.meta.set(HOLD_PREFIX + id, JSON.stringify(hold));
      const res = await r.app.inject({ method: 'GET', url: `/status/${id}`, headers: AUTH });
      assert.equal(res.statusCode, 200);
      assert.deepEqual([res.json().id, res.json().file_path, res.json().found_status], [id, '/media/tv/Show/e1.mkv', 'found']);
    } finally {
      await r.close();
      store.close();
    }
  });
});

describe('holds are bounded', () => {
  test(`with ${MAX_HOLDS} requests held, one more is answered 503 with why, and nothing is lost silently`, async () => {
    const store = new QueueStore(join(tempDir('autopulse-bound-'), 'queue.db'));
    const now = Date.now();
    const seed = store.db.transaction(() => {
      for (let i = 0; i < MAX_HOLDS; i++) {
        const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
        const path = `/nowhere/held/${i}.mkv`;
        store.meta.set(
          HOLD_PREFIX + id,
          JSON.stringify({ id, trigger: 'manual', path, hash: 'b'.repeat(64), found: 'not_found', createdAt: now, updatedAt: now, foundAt: null, intent: { kind: 'scan', source: 'Manual', event: 'Manual', updateType: 'Modified', paths: [{ path, kind: 'guess' }] } }),
        );
      }
    });
    seed();
    const r = await relayOn(store, 'opts:\n  check_path: true\n', { SERVER_FILE_CHECK_DELAY: 3600 });
    try {
      // The holds a previous run left are counted before the routes answer.
      const refused = await manual(r, '/nowhere/one-more.mkv', 'c'.repeat(64));
      assert.equal(refused.statusCode, 503);
      assert.match(refused.body, /requests are held for their hash already/);
      assert.equal((await store.meta.list(HOLD_PREFIX)).length, MAX_HOLDS);
    } finally {
      await r.close();
      store.close();
    }
  });
});

describe('file checks turned off: autopulse ignores the hash without check_path (runner.rs:38-40)', () => {
  test('a hold left by a run with checks on is queued by the next run, without looking at the file', async () => {
    const file = join(tempDir('autopulse-off-'), 'Show', 'e1.mkv');
    const queue = join(tempDir('autopulse-off-q-'), 'queue.db');
    const store = new QueueStore(queue);
    const on = await relayOn(store, 'opts:\n  check_path: true\n', { SERVER_FILE_CHECK_DELAY: 3600 });
    const held = await manual(on, file, 'd'.repeat(64));
    assert.equal(held.json().found_status, 'not_found');
    await on.close();
    store.close();
    const store2 = new QueueStore(queue);
    const off = await relayOn(store2, 'opts:\n  check_path: false\n', { SERVER_FILE_CHECK_DELAY: 3600 });
    try {
      await waitFor(() => store2.view.listOpen().length > 0, 60_000, 'the hold, queued');
      assert.deepEqual(store2.view.listOpen().map((e) => e.folder), [join(file, '..')]);
    } finally {
      await off.close();
      store2.close();
    }
  });
});
