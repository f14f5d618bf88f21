// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { importAutopulse } from '../../../src/peers/autopulse/import.ts';
import { configSchema, scanDelayMax, type FileConfig } from '../../../src/config/schema.ts';
import { relayConfig } from '../../../src/config/named-targets.ts';
import { packageVersion } from '../../../src/core/version.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { QueueIntake } from '../../../src/queue/door.ts';
import { relayRoutes } from '../../../src/queue/route.ts';
import { QueueStore } from '../../../src/queue/store.ts';
import { buildApp } from '../../../src/server/app.ts';
import { DEFAULT_RECOGNIZERS } from '../../../src/server/run.ts';
import { ROOT, tempDir } from '../../helpers/relay.ts';

/*
 * autopulse's routes as it answers them (crates/server/src/routes/*.rs at dan-online/autopulse 55124fd), for what
 * scanrelay keeps differently: one scan per folder where autopulse keeps one row per file
 * (crates/database/src/models.rs:77-119, crates/server/src/routes/triggers.rs:62-122).
 */

const AUTH = { authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` };
const FIX = join(ROOT, 'test', 'fixtures', 'autopulse');

let closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

/** The relay's app on an imported autopulse config; `roots`: the targets' library roots (a folder outside is refused). */
async function relayFrom(yaml: string, extra: Record<string, unknown> = {}, roots?: string[]) {
  const { config } = importAutopulse(yaml, 'config.yaml', {});
  const parsed = relayConfig(configSchema.parse({ ...config, SERVER_PASS: 'test-secret', SERVER_QUEUE_URL: undefined, ...extra }) as FileConfig);
  const store = new QueueStore(join(tempDir('autopulse-answers-'), 'queue.db'));
  const timing = { delayMs: parsed.SERVER_SCAN_DELAY * 1000, maxMs: scanDelayMax(parsed) * 1000 };
  const inside = (f: string) => (roots ?? []).some((r) => f === r || f.startsWith(`${r}/`));
  const libraries = roots && { check: async (folders: readonly string[]) => ({ outside: folders.filter((f) => !inside(f)), roots, unknown: [] }), places: async () => [{ roots }] };
  const app = await buildApp({ config: parsed, log: silentLogger(), intake: new QueueIntake(store, relayRoutes(parsed), () => timing), store, recognizers: DEFAULT_RECOGNIZERS, ...(libraries ? { libraries } : {}) });
  await app.ready();
  closers.push(() => store.close(), () => app.close());
  return { app, store };
}
type Relay = Awaited<ReturnType<typeof relayFrom>>;
const get = (r: Relay, url: string) => r.app.inject({ method: 'GET', url, headers: AUTH });

describe('GET / (routes/index.rs:10-17)', () => {
  test('answers 200 with autopulse\'s index body, without credentials', async () => {
    const r = await relayFrom('triggers:\n  my_manual:\n    type: manual\n');
    const res = await r.app.inject({ method: 'GET', url: '/' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { autopulse: `v${packageVersion()}` });
  });
});

describe("each file of a trigger's answer has its own id (triggers.rs:80-104: one row per path)", () => {
  test('two Lidarr tracks of one album: two ids, and /status/<id> answers for each file', async () => {
    const r = await relayFrom('triggers:\n  lidarr:\n    type: lidarr\n');
    const album = '/music/Nina Simone/Pastel Blues (1965)';
    // lidarr.rs:74-122: a Download lists its trackFiles by path.
    const res = await r.app.inject({
      method: 'POST',
      url: '/triggers/lidarr',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: { eventType: 'Download', artist: { path: '/music/Nina Simone' }, trackFiles: [{ path: `${album}/01 Be My Husband.flac` }, { path: `${album}/02 Nobody's Fault But Mine.flac` }] },
    });
    assert.equal(res.statusCode, 200, res.body);
    const events = res.json() as Array<{ id: string; file_path: string }>;
    assert.equal(events.length, 2);
    assert.notEqual(events[0]!.id, events[1]!.id, 'today both came back "14"');
    for (const ev of events) {
      const status = await get(r, `/status/${encodeURIComponent(ev.id)}`);
      assert.equal(status.statusCode, 200, status.body);
      assert.equal(status.json().id, ev.id);
      assert.equal(status.json().file_path, ev.file_path);
      assert.equal(status.json().event_source, 'lidarr');
    }
    assert.equal(r.store.view.listOpen().length, 1, 'still one scan of the album folder');
  });
});

describe('failed_times counts failures (runner.rs:307: raised only when a target failed)', () => {
  test('0 after a first-try success', async () => {
    const r = await relayFrom('triggers:\n  my_manual:\n    type: manual\n');
    const queued = await get(r, `/triggers/my_manual?path=${encodeURIComponent('/media/movies/Heat (1995)/Heat.mkv')}`);
    assert.equal(queued.statusCode, 200, queued.body);
    const id = queued.json().id as string;
    const scan = Number.parseInt(id, 10);
    const now = Date.now();
    await r.store.activateDue(['plex'], now + 600_000);
    assert.equal((await r.store.claimDeliveries(10, now + 600_000, 'plex')).length, 1);
    await r.store.completeDelivery(scan, 'plex', { status: 'done', detail: 'section 1' }, now + 601_000);
    const ev = (await get(r, `/status/${id}`)).json();
    assert.equal(ev.process_status, 'complete');
    assert.equal(ev.failed_times, 0);
    const [listed] = (await get(r, '/list')).json();
    assert.equal(listed.failed_times, 0);
  });
});

describe('a request held for its hash is a row of /list and /stats (runner.rs:37-107: a pending, not found row)', () => {
  test('a hash mismatch is listed as pending hash_mismatch and counted as pending', async () => {
    const dir = tempDir('autopulse-hold-');
    const file = join(dir, 'Heat.mkv');
    writeFileSync(file, 'still uploading');
    // The folder is a library the relay knows (SERVER_FILE_EXIST_PATH_MAPPINGS): only there is a file hashed.
    const r = await relayFrom('opts:\n  check_path: true\ntriggers:\n  my_manual:\n    type: manual\n', { SERVER_FILE_EXIST_PATH_MAPPINGS: { [dir]: [dir] } });
    const want = createHash('sha256').update('the whole film').digest('hex');
    const held = await get(r, `/triggers/my_manual?path=${encodeURIComponent(file)}&hash=${want}`);
    assert.equal(held.statusCode, 200, held.body);
    assert.equal(held.json().found_status, 'hash_mismatch');
    await get(r, `/triggers/my_manual?path=${encodeURIComponent('/media/tv/Other/e1.mkv')}`);
    const list = (await get(r, '/list')).json() as Array<Record<string, unknown>>;
    assert.deepEqual(list.map((e) => e.file_path).sort(), [file, '/media/tv/Other/e1.mkv'].sort());
    const row = list.find((e) => e.file_path === file)!;
    assert.deepEqual([row.id, row.process_status, row.found_status], [held.json().id, 'pending', 'hash_mismatch']);
    assert.deepEqual((await get(r, '/list?status=pending&search=heat')).json().map((e: { file_path: string }) => e.file_path), [file]);
    assert.deepEqual((await get(r, '/list?status=complete')).json(), []);
    const stats = (await r.app.inject({ method: 'GET', url: '/stats' })).json().stats;
    assert.deepEqual([stats.total, stats.pending], [2, 2]);
  });
});

describe('found_status reads found only once the file was found (runner.rs:37-107, with opts.check_path)', () => {
  test('a scan of a file not there yet is not_found, and found once it is', async () => {
    const dir = tempDir('autopulse-found-');
    mkdirSync(join(dir, 'Heat (1995)'));
    const file = join(dir, 'Heat (1995)', 'Heat.mkv');
    // The folder is a library the relay knows (SERVER_FILE_EXIST_PATH_MAPPINGS): only there is the disk looked at.
    const r = await relayFrom('opts:\n  check_path: true\ntriggers:\n  my_manual:\n    type: manual\n', { SERVER_FILE_EXIST_PATH_MAPPINGS: { [dir]: [dir] } });
    const queued = await get(r, `/triggers/my_manual?path=${encodeURIComponent(file)}`);
    assert.equal(queued.statusCode, 200, queued.body);
    const id = queued.json().id as string;
    assert.equal((await get(r, `/status/${id}`)).json().found_status, 'not_found');
    assert.equal((await get(r, '/list')).json()[0].found_status, 'not_found');
    writeFileSync(file, 'film');
    assert.equal((await get(r, `/status/${id}`)).json().found_status, 'found');
  });

  test('a file outside every library the relay knows is never looked at: not_found though it is there (docs/security.md)', async () => {
    const dir = tempDir('autopulse-found-outside-');
    const file = join(dir, 'secret.txt');
    writeFileSync(file, 'there');
    const library = tempDir('autopulse-found-library-');
    const r = await relayFrom('opts:\n  check_path: true\ntriggers:\n  my_manual:\n    type: manual\n', { SERVER_FILE_EXIST_PATH_MAPPINGS: { [library]: [library] } });
    const queued = await get(r, `/triggers/my_manual?path=${encodeURIComponent(file)}`);
    assert.equal(queued.statusCode, 200, queued.body);
    assert.equal((await get(r, `/status/${queued.json().id as string}`)).json().found_status, 'not_found');
    assert.equal((await get(r, '/list')).json()[0].found_status, 'not_found');
  });
});

describe("a '//' made by a user's rewrite is one separator (autopulse #190)", () => {
  test("README's my_manual (from /downloads to /) and a Sonarr rewrite to /: accepted, in the library, not 400", async () => {
    const yaml = `${readFileSync(join(FIX, 'readme.yaml'), 'utf8')}\n`.replace('auth:\n  username: terry\n  password: yoghurt\n', '');
    const r = await relayFrom(yaml.replace('to: "/tvshows"', 'to: "/"'), {}, ['/movies', '/Show']);
    const manual = await get(r, '/triggers/my_manual?path=/downloads/movies/Film/film.mkv');
    assert.equal(manual.statusCode, 200, manual.body);
    assert.equal(manual.json().file_path, '/movies/Film/film.mkv');
    const sonarr = await r.app.inject({
      method: 'POST',
      url: '/triggers/my_sonarr',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: { eventType: 'Download', episodeFile: { relativePath: 'Season 1/Show.S01E01.mkv' }, series: { path: '/downloads/Show' } },
    });
    assert.equal(sonarr.statusCode, 200, sonarr.body);
    assert.equal(sonarr.json()[0].file_path, '/Show/Season 1/Show.S01E01.mkv');
    assert.deepEqual(r.store.view.listOpen().map((e) => e.folder).sort(), ['/Show/Season 1', '/movies/Film']);
  });
});

describe('pageWithHolds: a page of scans and held requests, as if they were one list', () => {
  test('every page of every order equals the page of the whole list, merged', async () => {
    const { pageWithHolds } = await import('../../../src/peers/autopulse/events.ts');
    const scans = Array.from({ length: 7 }, (_, i) => ({ id: i + 1, folder: `/m/${'gcaefbd'[i]}`, title: null, source: 'Manual', firstAt: 1000 * (i * 2 + 1), lastAt: 1000 * (i * 2 + 1), finishedAt: null, status: 'pending', deliveries: [] }));
    // No ties: scans at odd seconds, holds at even ones (a tie is ordered by id, as the SQL orders it).
    const holds = [0, 4, 10, 20].map((t, i) => ({ id: `u${i}`, trigger: 'manual', path: `/m/h${i}`, hash: 'x', found: 'hash_mismatch' as const, createdAt: 1000 * t, updatedAt: 1000 * t, foundAt: null, intent: { kind: 'scan', source: 'Manual', event: 'Manual', updateType: 'Modified', paths: [] } }));
    type Scan = (typeof scans)[number];
    const key = (r: { scan?: Scan; hold?: (typeof holds)[number] }, sort: string) =>
      r.scan ? (sort === 'file_path' ? r.scan.folder : r.scan.firstAt) : sort === 'file_path' ? r.hold!.path : r.hold!.createdAt;
    for (const sort of ['created_at', 'file_path'] as const) {
      for (const asc of [true, false]) {
        const all = [...scans.map((scan) => ({ scan })), ...holds.map((hold) => ({ hold }))].sort((a, b) => {
          const [x, y] = [key(a, sort), key(b, sort)];
          return (asc ? 1 : -1) * (x < y ? -1 : x > y ? 1 : 0);
        });
        const read = async (q: { offset: number; limit: number }) => {
          const sorted = [...scans].sort((a, b) => (asc ? 1 : -1) * (key({ scan: a }, sort) < key({ scan: b }, sort) ? -1 : 1));
          return sorted.slice(q.offset, q.offset + q.limit) as never;
        };
        for (const limit of [1, 2, 3, 5]) {
          for (let offset = 0; offset <= all.length; offset += limit) {
            const page = await pageWithHolds({ sort, asc, limit, offset }, holds as never, read, () => 'pending');
            assert.deepEqual(page.map((r) => ('scan' in r ? r.scan.id : r.hold.id)), all.slice(offset, offset + limit).map((r: { scan?: Scan; hold?: { id: string } }) => (r.scan ? r.scan.id : r.hold!.id)), `${sort} ${asc} ${limit} ${offset}`);
          }
        }
      }
    }
  });
});

describe('a merged scan is never due before any of its requests (database/src/conn.rs:311-318)', () => {
  test('a Readarr file with a 10 s timer and a manual file with a 1 s timer in one folder: both wait for the 10 s', async () => {
    // settings/triggers/readarr.rs and manual.rs: `timer: {wait}` per trigger (settings/timer.rs:4-8).
    const r = await relayFrom('triggers:\n  readarr:\n    type: readarr\n    timer:\n      wait: 10\n  my_manual:\n    type: manual\n    timer:\n      wait: 1\n');
    const book = '/books/Terry Pratchett/Mort (1987)';
    const before = Date.now();
    // readarr.rs:71-123: a Download lists its bookFiles by path.
    const readarr = await r.app.inject({
      method: 'POST',
      url: '/triggers/readarr',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: { eventType: 'Download', author: { path: '/books/Terry Pratchett' }, bookFiles: [{ path: `${book}/Mort.epub` }] },
    });
    assert.equal(readarr.statusCode, 200, readarr.body);
    const manual = await get(r, `/triggers/my_manual?path=${encodeURIComponent(`${book}/Mort.azw3`)}`);
    assert.equal(manual.statusCode, 200, manual.body);
    const due = (ev: { can_process: string }) => Date.parse(`${ev.can_process}Z`);
    const first = due(readarr.json()[0]);
    assert.ok(first >= before + 10_000, 'the Readarr file waits its 10 s');
    assert.equal(due(manual.json()), first, 'the manual file, in the same scan, does not pull it forward to 1 s');
    const [open] = r.store.view.listOpen();
    assert.equal(open!.dueAt, first);
  });
});
