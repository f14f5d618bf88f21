import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { fileflowsTargetSchema } from '../../../src/targets/fileflows/schema.ts';
import { createFileflowsTarget, fileflowsLibraryFor } from '../../../src/targets/fileflows/target.ts';
import { FakeFileFlows } from '../../fakes/fileflows.ts';
import { scanItem } from '../../helpers/plex-target.ts';

const silent = pino({ level: 'silent' });

// autopulse's fileflows.rs:136-321: libraries by path, search each file, reprocess known ones, manually add
// the rest to the library's flow; the x-token header from FileFlows' Scripts/Shared/FileFlowsApi.js.
describe('FileFlows target', () => {
  let ff: FakeFileFlows;
  before(async () => {
    ff = await new FakeFileFlows('ff-token').start();
    ff.libraries = [
      { Uid: 'lib-movies', Name: 'Movies', Enabled: true, Path: '/media/movies', Flow: { Uid: 'flow-1', Name: 'Convert' } },
      { Uid: 'lib-off', Name: 'Off', Enabled: false, Path: '/media/off', Flow: { Uid: 'flow-2' } },
      { Uid: 'lib-noflow', Name: 'NoFlow', Enabled: true, Path: '/media/noflow', Flow: null },
    ];
    ff.known.set('file-uid-1', '/media/movies/Film (2000)/Film (2000).mkv');
    // A file whose name holds the other's path: a search for that path finds it too.
    ff.known.set('file-uid-2', '/media/movies/Film (2000)/Film (2000).mkv.bak');
  });
  after(async () => ff.stop());
  const target = (over: Record<string, unknown> = {}) => createFileflowsTarget('ff', fileflowsTargetSchema.parse({ TYPE: 'fileflows', URL: ff.url, API_KEY: 'ff-token', ...over }), silent);

  test('fileflowsLibraryFor: by whole segments, the closest library path', () => {
    const table: Array<[string, string | undefined]> = [
      ['/media/movies/Film', 'lib-movies'],
      ['/media/movies-4k/Film', undefined],
      ['/media/noflow/x', 'lib-noflow'],
    ];
    for (const [path, uid] of table) assert.equal(fileflowsLibraryFor(path, ff.libraries)?.Uid, uid, path);
  });

  test('a known file is reprocessed by its uid, a new one added to the library flow; x-token on every call', async () => {
    ff.reprocessed.length = 0;
    ff.added.length = 0;
    const result = await target().deliver(scanItem({ folder: '/media/movies/Film (2000)', files: ['/media/movies/Film (2000)/Film (2000).mkv', '/media/movies/Film (2000)/Film (2000).en.srt'] }));
    assert.deepEqual(result, { outcome: 'done', detail: '1 file(s) reprocessed, 1 added (library "Movies")' });
    assert.deepEqual(ff.reprocessed, [['file-uid-1']]);
    assert.deepEqual(ff.added, [{ FlowUid: 'flow-1', Files: ['/media/movies/Film (2000)/Film (2000).en.srt'] }]);
    assert.ok(ff.calls.every((c) => c.headers['x-token'] === 'ff-token'));
    assert.deepEqual(ff.callsTo('POST', '/api/library-file/search').map((c) => c.body), [
      { Path: '/media/movies/Film (2000)/Film (2000).mkv', Limit: 1 },
      { Path: '/media/movies/Film (2000)/Film (2000).en.srt', Limit: 1 },
    ]);
  });

  test('a search hit for another file (a name that only holds the path) is not reprocessed: the file is added', async () => {
    ff.reprocessed.length = 0;
    ff.added.length = 0;
    ff.known.delete('file-uid-1');
    try {
      assert.equal((await target().deliver(scanItem({ folder: '/media/movies/Film (2000)', files: ['/media/movies/Film (2000)/Film (2000).mkv'] }))).outcome, 'done');
      assert.deepEqual(ff.reprocessed, []);
      assert.deepEqual(ff.added, [{ FlowUid: 'flow-1', Files: ['/media/movies/Film (2000)/Film (2000).mkv'] }]);
    } finally {
      ff.known.set('file-uid-1', '/media/movies/Film (2000)/Film (2000).mkv');
    }
  });

  test('no file named, or a deletion: done without a call (FileFlows works on files)', async () => {
    const before = ff.calls.length;
    assert.equal((await target().deliver(scanItem({ folder: '/media/movies/New' }))).outcome, 'done');
    assert.equal((await target().deliver(scanItem({ folder: '/media/movies/Gone', files: ['/media/movies/Gone/a.mkv'], updateType: 'Deleted' }))).outcome, 'done');
    assert.equal(ff.calls.length, before);
  });

  test('no library holds it, a disabled library, or no flow for a new file: failed with the reason', async () => {
    const cases: Array<[string, RegExp]> = [
      ['/media/tv/Show', /no FileFlows library holds \/media\/tv\/Show \(library paths: \/media\/movies, \/media\/off, \/media\/noflow\)/],
      ['/media/off/A', /library "Off" is disabled/],
      ['/media/noflow/A', /library "NoFlow" has no flow/],
    ];
    for (const [folder, expected] of cases) {
      const r = await target().deliver(scanItem({ folder, files: [`${folder}/a.mkv`] }));
      assert.ok(r.outcome === 'failed' && expected.test(r.error), `${folder}: ${JSON.stringify(r)}`);
    }
  });

  test('a wrong token is 401 (retried slowly, not shown); 5xx retried; libraryRoots are the library paths', async () => {
    const wrong = await target({ API_KEY: 'bad-token' }).deliver(scanItem({ folder: '/media/movies/A', files: ['/media/movies/A/a.mkv'] }));
    assert.ok(wrong.outcome === 'retry' && wrong.slow === true && !/bad-token/.test(wrong.error), JSON.stringify(wrong));
    await ff.setMode('error503');
    const busy = await target().deliver(scanItem({ folder: '/media/movies/A', files: ['/media/movies/A/a.mkv'] }));
    assert.ok(busy.outcome === 'retry' && !busy.slow, JSON.stringify(busy));
    await ff.setMode('up');
    assert.deepEqual(await target().libraryRoots!(), ['/media/movies', '/media/off', '/media/noflow']);
  });
});
