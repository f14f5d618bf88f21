import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { tdarrTargetSchema } from '../../../src/targets/tdarr/schema.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import { createTdarrTarget, filesBelow, tdarrScanConfig } from '../../../src/targets/tdarr/target.ts';
import { tempDir } from '../../helpers/relay.ts';
import { FakeTdarr } from '../../fakes/tdarr.ts';
import { scanItem } from '../../helpers/plex-target.ts';

const silent = pino({ level: 'silent' });

// autopulse's tdarr.rs:58-81 (always scanFolderWatcher, with each event's path: tdarr.rs:65-66) and Tdarr's API
// docs for POST /api/v2/scan-files (scanFindNew takes one folder, scanFolderWatcher a list of files). Its author
// (HaveAGitGat/Tdarr #577): scan-files with a folder is for the library's own folder; a subfolder given to it
// becomes the library's path and its history is lost; a subfolder's files go in scanFolderWatcher's list.
describe('Tdarr target', () => {
  let tdarr: FakeTdarr;
  before(async () => {
    tdarr = await new FakeTdarr('tapi_secret_key_1').start();
  });
  after(async () => tdarr.stop());
  const target = (over: Record<string, unknown> = {}) => createTdarrTarget('tdarr', tdarrTargetSchema.parse({ TYPE: 'tdarr', URL: tdarr.url, DB_ID: 'lib-tv', API_KEY: 'tapi_secret_key_1', ...over }), silent);

  test('tdarrScanConfig: always scanFolderWatcher: the named files; else the files listed in the folder; else a cut list; else the folder', () => {
    const base = { folder: '/tv/Show/S01', files: [] as string[], moreFiles: 0 };
    const listed = ['/tv/Show/S01/e1.mkv', '/tv/Show/S01/e2.mkv'];
    const table: Array<[Partial<typeof base>, string[], string[]]> = [
      [{ files: ['/tv/Show/S01/e1.mkv'] }, listed, ['/tv/Show/S01/e1.mkv']],
      [{}, listed, listed],
      [{}, [], ['/tv/Show/S01']],
      [{ files: ['/tv/Show/S01/e1.mkv'], moreFiles: 3 }, listed, listed],
      [{ files: ['/tv/Show/S01/e1.mkv'], moreFiles: 3 }, [], ['/tv/Show/S01/e1.mkv']],
    ];
    for (const [over, found, paths] of table) assert.deepEqual(tdarrScanConfig('L', { ...base, ...over }, found), { dbID: 'L', mode: 'scanFolderWatcher', arrayOrPath: paths }, JSON.stringify(over));
  });

  test('a folder alone is sent as its files, read from disk and rewritten; the library keeps its own folder (#577)', async () => {
    tdarr.scans.length = 0;
    tdarr.libraries['lib-tv'] = '/media/TV';
    const root = tempDir('scanrelay-tdarr-');
    mkdirSync(join(root, 'TV/Dark/S01/Subs'), { recursive: true });
    for (const f of ['TV/Dark/S01/e2.mkv', 'TV/Dark/S01/e1.mkv', 'TV/Dark/S01/Subs/e1.en.srt']) writeFileSync(join(root, f), '');
    const t = target({ REWRITE: [{ from: `^${root}/`, to: '/media/' }] });
    const result = await t.deliver(scanItem({ folder: join(root, 'TV/Dark/S01') }));
    assert.deepEqual(result, { outcome: 'done', detail: 'scanFolderWatcher of 3 file(s) listed in the folder in library lib-tv' });
    assert.deepEqual(tdarr.scans, [{ dbID: 'lib-tv', mode: 'scanFolderWatcher', arrayOrPath: ['/media/TV/Dark/S01/e1.mkv', '/media/TV/Dark/S01/e2.mkv', '/media/TV/Dark/S01/Subs/e1.en.srt'] }]);
    // A folder the relay cannot read (Tdarr's disk is not mounted here): the folder itself, still in the list form.
    const gone = await t.deliver(scanItem({ folder: join(root, 'TV/Gone') }));
    assert.deepEqual(gone, { outcome: 'done', detail: 'scanFolderWatcher of the folder (no file in it could be listed here) in library lib-tv' });
    assert.deepEqual(tdarr.scans.at(-1), { dbID: 'lib-tv', mode: 'scanFolderWatcher', arrayOrPath: ['/media/TV/Gone'] });
    assert.equal(tdarr.libraries['lib-tv'], '/media/TV', 'no scan moved the library to a subfolder');
    // The walk stops at its cap; a deletion of the folder lists nothing (what is left has not changed).
    assert.deepEqual(await filesBelow(join(root, 'TV'), 2), [join(root, 'TV/Dark/S01/e1.mkv'), join(root, 'TV/Dark/S01/e2.mkv')]);
    await t.deliver(scanItem({ folder: join(root, 'TV/Dark/S01'), updateType: 'Deleted' }));
    assert.deepEqual(tdarr.scans.at(-1)!.arrayOrPath, ['/media/TV/Dark/S01']);
  });

  test("only a folder inside the library's own folder is listed: /etc, a folder outside it, a '..' way out and a library Tdarr cannot name send no host file name", async () => {
    tdarr.scans.length = 0;
    tdarr.libraries['lib-tv'] = '/media/TV';
    const root = tempDir('scanrelay-tdarr-');
    const outside = tempDir('scanrelay-tdarr-outside-');
    mkdirSync(join(root, 'TV/Dark'), { recursive: true });
    writeFileSync(join(root, 'TV/Dark/e1.mkv'), '');
    writeFileSync(join(outside, 'secret.key'), '');
    const t = target({ REWRITE: [{ from: `^${root}/`, to: '/media/' }] });
    const outsideDetail = "scanFolderWatcher of the folder (not listed: it is not inside the library's folder as Tdarr tells it) in library lib-tv";
    for (const folder of ['/etc', '/root', outside, `${root}/TV/../..${outside}`, root]) {
      const result = await t.deliver(scanItem({ folder }));
      assert.deepEqual(result, { outcome: 'done', detail: outsideDetail }, folder);
      const asTdarrNamesIt = folder.startsWith(`${root}/`) ? `/media/${folder.slice(root.length + 1)}` : folder;
      assert.deepEqual(tdarr.scans.at(-1)!.arrayOrPath, [asTdarrNamesIt], `${folder}: the folder itself, none of its files`);
    }
    assert.deepEqual(await t.libraryRoots?.(), ['/media/TV'], "the library's folder, from its settings (cruddb)");
    // Inside it, the files are listed.
    assert.deepEqual((await t.deliver(scanItem({ folder: join(root, 'TV/Dark') }))).outcome, 'done');
    assert.deepEqual(tdarr.scans.at(-1)!.arrayOrPath, ['/media/TV/Dark/e1.mkv']);
    // A library id Tdarr does not know: no folder to hold anything, so nothing is listed.
    const unknown = target({ DB_ID: 'lib-gone', REWRITE: [{ from: `^${root}/`, to: '/media/' }] });
    assert.deepEqual(await unknown.deliver(scanItem({ folder: join(root, 'TV/Dark') })), {
      outcome: 'done',
      detail: "scanFolderWatcher of the folder (not listed: Tdarr did not tell the library's folder) in library lib-gone",
    });
    assert.deepEqual(tdarr.scans.at(-1)!.arrayOrPath, ['/media/TV/Dark']);
  });

  test('a folder of many entries is read as a stream, and no entry past the cap is read', async () => {
    tdarr.scans.length = 0;
    const root = tempDir('scanrelay-tdarr-big-');
    const big = join(root, 'TV', 'Big');
    mkdirSync(big, { recursive: true });
    // The attack's folder held 300,000 entries (bench/listing.ts reads one that size); 20,000 show the same here.
    for (let i = 0; i < 20_000; i++) writeFileSync(join(big, `e${i}.mkv`), '');
    let read = 0;
    const counting = async (path: string) =>
      (async function* () {
        for await (const e of await opendir(path, { bufferSize: 256 })) {
          read++;
          yield e;
        }
      })();
    const files = await filesBelow(big, 1000, counting);
    assert.equal(files.length, 1000);
    assert.equal(read, 1000, 'the walk stopped reading at the cap');
    tdarr.libraries['lib-big'] = root;
    assert.equal((await target({ DB_ID: 'lib-big' }).deliver(scanItem({ folder: big }))).outcome, 'done');
    assert.equal(tdarr.scans.at(-1)!.arrayOrPath.length, 1000);
  });

  test('POST /api/v2/scan-files with data.scanConfig, the key in x-api-key, paths through the rewrite', async () => {
    tdarr.scans.length = 0;
    const t = target({ REWRITE: [{ from: '^/mnt/media/', to: '/media/' }] });
    const files = ['/mnt/media/TV/Dark/S01/e1.mkv', '/mnt/media/TV/Dark/S01/e2.mkv'];
    const result = await t.deliver(scanItem({ folder: '/mnt/media/TV/Dark/S01', files }));
    assert.deepEqual(result, { outcome: 'done', detail: 'scanFolderWatcher of 2 file(s) in library lib-tv' });
    assert.deepEqual(tdarr.scans, [{ dbID: 'lib-tv', mode: 'scanFolderWatcher', arrayOrPath: ['/media/TV/Dark/S01/e1.mkv', '/media/TV/Dark/S01/e2.mkv'] }]);
    const call = tdarr.callsTo('POST', '/api/v2/scan-files').at(-1)!;
    assert.equal(call.headers['x-api-key'], 'tapi_secret_key_1');
    assert.equal(call.headers['content-type'], 'application/json');
    // A deletion Sonarr named: the named files, as autopulse sends every event's path whatever it was.
    assert.equal((await t.deliver(scanItem({ folder: '/mnt/media/TV/Dark/S01', files: [files[0]!], updateType: 'Deleted' }))).outcome, 'done');
    assert.deepEqual(tdarr.scans.at(-1), { dbID: 'lib-tv', mode: 'scanFolderWatcher', arrayOrPath: ['/media/TV/Dark/S01/e1.mkv'] });
  });

  test('a backlog in one call (deliverMany): the paths of every scan in one scanFolderWatcher list (a folder not readable here as itself), one result per scan', async () => {
    tdarr.scans.length = 0;
    tdarr.libraries['lib-tv'] = '/media';
    const t = target({ REWRITE: [{ from: '^/mnt/media/', to: '/media/' }] });
    const results = await t.deliverMany!([
      scanItem({ folder: '/mnt/media/TV/Dark/S01', files: ['/mnt/media/TV/Dark/S01/e1.mkv', '/mnt/media/TV/Dark/S01/e2.mkv'] }),
      scanItem({ folder: '/mnt/media/TV/Dark/S02' }),
      scanItem({ folder: '/mnt/media/Movies/Up', files: ['/mnt/media/Movies/Up/Up.mkv'] }),
    ]);
    assert.deepEqual(results, [
      { outcome: 'done', detail: 'scanFolderWatcher of 2 file(s) in library lib-tv' },
      { outcome: 'done', detail: 'scanFolderWatcher of the folder (no file in it could be listed here) in library lib-tv' },
      { outcome: 'done', detail: 'scanFolderWatcher of 1 file(s) in library lib-tv' },
    ]);
    // One request, never scanFindNew (#577: a subfolder given to it becomes the library's path).
    assert.deepEqual(
      tdarr.scans.map((s) => [s.mode, s.arrayOrPath]),
      [['scanFolderWatcher', ['/media/TV/Dark/S01/e1.mkv', '/media/TV/Dark/S01/e2.mkv', '/media/TV/Dark/S02', '/media/Movies/Up/Up.mkv']]],
    );
    // Refused (a wrong key): each scan of the shared request is retried, none done.
    const wrong = await target({ API_KEY: 'wrong' }).deliverMany!([scanItem({ folder: '/a', files: ['/a/1.mkv'] }), scanItem({ folder: '/b', files: ['/b/1.mkv'] })]);
    assert.deepEqual(wrong.map((r) => r.outcome), ['retry', 'retry']);
  });

  test('REQUEST.HEADERS go with every request (a proxy header), without replacing the key', async () => {
    const t = target({ REQUEST: { HEADERS: { 'X-Proxy-Auth': 'p1', 'x-api-key': 'overridden?' } } });
    assert.equal((await t.deliver(scanItem({ folder: '/tv/A' }))).outcome, 'done');
    const call = tdarr.calls.at(-1)!;
    assert.equal(call.headers['x-proxy-auth'], 'p1');
    assert.equal(call.headers['x-api-key'], 'tapi_secret_key_1');
  });

  test('a wrong or missing key is 401: retried slowly, the key never shown; 5xx is retried', async () => {
    const wrong = await target({ API_KEY: 'tapi_wrong_key_9' }).deliver(scanItem({ folder: '/tv/A' }));
    assert.ok(wrong.outcome === 'retry' && wrong.slow === true && /HTTP 401/.test(wrong.error), JSON.stringify(wrong));
    assert.doesNotMatch(wrong.error, /tapi_wrong_key_9/);
    const missing = await target({ API_KEY: undefined }).deliver(scanItem({ folder: '/tv/A' }));
    assert.ok(missing.outcome === 'retry' && missing.slow === true, JSON.stringify(missing));
    await tdarr.setMode('error503');
    const busy = await target().deliver(scanItem({ folder: '/tv/A' }));
    assert.ok(busy.outcome === 'retry' && !busy.slow, JSON.stringify(busy));
    assert.equal((await target().available()).ok, false);
    await tdarr.setMode('up');
    assert.deepEqual(await target().available(), { ok: true });
  });

  test('a Tdarr without auth takes no key; a request it refuses (4xx) is failed, not retried', async () => {
    const open = await new FakeTdarr().start();
    try {
      const t = createTdarrTarget('tdarr2', tdarrTargetSchema.parse({ TYPE: 'tdarr', URL: open.url, DB_ID: 'x' }), silent);
      assert.equal((await t.deliver(scanItem({ folder: '/m/a', files: ['/m/a/1.mkv'] }))).outcome, 'done');
      assert.equal(open.calls.at(-1)!.headers['x-api-key'], undefined);
      const lost = createTdarrTarget('tdarr3', tdarrTargetSchema.parse({ TYPE: 'tdarr', URL: `${open.url}/tdarr`, DB_ID: 'x' }), silent);
      const r = await lost.deliver(scanItem({ folder: '/m/a' }));
      assert.ok(r.outcome === 'failed' && /HTTP 404/.test(r.error) && /check the URL/.test(r.error), JSON.stringify(r));
    } finally {
      await open.stop();
    }
  });
});
