import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { audiobookshelfTargetSchema } from '../../../src/targets/audiobookshelf/schema.ts';
import { createAudiobookshelfTarget, libraryFor } from '../../../src/targets/audiobookshelf/target.ts';
import { FakeAudiobookshelf } from '../../fakes/audiobookshelf.ts';
import { scanItem } from '../../helpers/plex-target.ts';

const silent = pino({ level: 'silent' });

// autopulse's audiobookshelf.rs:75-121 (choose_library, then POST /api/watcher/update); Audiobookshelf's
// MiscController.updateWatchedPath and LibraryController.findAll (advplyr/audiobookshelf at 1b46d68).
describe('Audiobookshelf target', () => {
  let abs: FakeAudiobookshelf;
  before(async () => {
    abs = await new FakeAudiobookshelf().start();
    abs.libraries = [
      { id: 'lib-books', name: 'Audiobooks', folders: ['/audiobooks', '/more/books'] },
      { id: 'lib-pods', name: 'Podcasts', folders: ['/audiobooks/podcasts'] },
      { id: 'lib-off', name: 'Quiet', folders: ['/quiet'], disableWatcher: true },
    ];
  });
  after(async () => abs.stop());
  const target = (over: Record<string, unknown> = {}) =>
    createAudiobookshelfTarget('abs', audiobookshelfTargetSchema.parse({ TYPE: 'audiobookshelf', URL: abs.url, TOKEN: 'abs-admin-token', ...over }), silent);

  test('libraryFor: the library whose folder holds the path most closely, by whole segments', () => {
    const libs = abs.libraries.map((l) => ({ id: l.id, folders: l.folders.map((fullPath) => ({ fullPath })) }));
    const table: Array<[string, string | undefined]> = [
      ['/audiobooks/Author/Book', 'lib-books'],
      ['/more/books/Author', 'lib-books'],
      ['/audiobooks/podcasts/Show/ep1.mp3', 'lib-pods'],
      ['/audiobooks-old/Author', undefined],
      ['/elsewhere', undefined],
    ];
    for (const [path, id] of table) assert.equal(libraryFor(path, libs)?.library.id, id, path);
  });

  test('each named file goes to POST /api/watcher/update with its library and type "add", Bearer token; the rewrite applies', async () => {
    abs.updates.length = 0;
    const t = target({ REWRITE: [{ from: '^/mnt/unionfs/Media/Audiobooks', to: '/audiobooks' }] });
    const result = await t.deliver(scanItem({ folder: '/mnt/unionfs/Media/Audiobooks/Author/Book', files: ['/mnt/unionfs/Media/Audiobooks/Author/Book/01.m4b', '/mnt/unionfs/Media/Audiobooks/Author/Book/02.m4b'], updateType: 'Created' }));
    assert.equal(result.outcome, 'done', JSON.stringify(result));
    assert.deepEqual(abs.updates, [
      { libraryId: 'lib-books', path: '/audiobooks/Author/Book/01.m4b', type: 'add' },
      { libraryId: 'lib-books', path: '/audiobooks/Author/Book/02.m4b', type: 'add' },
    ]);
    const post = abs.callsTo('POST', '/api/watcher/update').at(-1)!;
    assert.equal(post.headers.authorization, 'Bearer abs-admin-token');
    assert.equal(post.headers['content-type'], 'application/json');
    assert.equal(t.toTargetPath!('/mnt/unionfs/Media/Audiobooks/X'), '/audiobooks/X');
  });

  test('a deletion is "unlink"; a folder without a file list is sent as the folder', async () => {
    abs.updates.length = 0;
    await target().deliver(scanItem({ folder: '/audiobooks/podcasts/Gone', updateType: 'Deleted' }));
    await target().deliver(scanItem({ folder: '/audiobooks/Author/New' }));
    assert.deepEqual(abs.updates, [
      { libraryId: 'lib-pods', path: '/audiobooks/podcasts/Gone', type: 'unlink' },
      { libraryId: 'lib-books', path: '/audiobooks/Author/New', type: 'add' },
    ]);
  });

  test('no library holds the path: failed, naming the library folders; a library with its watcher off: failed, saying so', async () => {
    abs.updates.length = 0;
    const none = await target().deliver(scanItem({ folder: '/audiobooks-old/Author' }));
    assert.equal(none.outcome, 'failed');
    assert.match(none.outcome === 'failed' ? none.error : '', /no Audiobookshelf library folder holds \/audiobooks-old\/Author \(library folders: \/audiobooks, \/more\/books/);
    const quiet = await target().deliver(scanItem({ folder: '/quiet/Book' }));
    assert.match(quiet.outcome === 'failed' ? quiet.error : '', /folder watcher off/);
    assert.equal(abs.updates.length, 0);
  });

  test('a wrong token is 401: retried slowly, the token never in the message; a non-admin token is 403, also auth', async () => {
    const wrong = await target({ TOKEN: 'not-the-token' }).deliver(scanItem({ folder: '/audiobooks/A' }));
    assert.ok(wrong.outcome === 'retry' && wrong.slow === true, JSON.stringify(wrong));
    assert.match(wrong.error, /HTTP 401/);
    assert.doesNotMatch(wrong.error, /not-the-token/);
    assert.equal(abs.calls.at(-1)!.status, 401);
    const user = await target({ TOKEN: 'abs-user-token' }).deliver(scanItem({ folder: '/audiobooks/A' }));
    assert.ok(user.outcome === 'retry' && user.slow === true && /HTTP 403/.test(user.error), JSON.stringify(user));
  });

  test('5xx and a closed port are retried (not slow); up again, it is delivered; libraryRoots lists every folder', async () => {
    await abs.setMode('error503');
    const busy = await target().deliver(scanItem({ folder: '/audiobooks/A' }));
    assert.ok(busy.outcome === 'retry' && !busy.slow && /503/.test(busy.error), JSON.stringify(busy));
    await abs.setMode('down');
    const down = await target().deliver(scanItem({ folder: '/audiobooks/A' }));
    assert.ok(down.outcome === 'retry' && /unreachable/.test(down.error), JSON.stringify(down));
    assert.equal((await target().available()).ok, false);
    await abs.setMode('up');
    assert.equal((await target().deliver(scanItem({ folder: '/audiobooks/A' }))).outcome, 'done');
    assert.deepEqual(await target().libraryRoots!(), ['/audiobooks', '/more/books', '/audiobooks/podcasts', '/quiet']);
    assert.deepEqual(await target().available(), { ok: true });
  });
});
