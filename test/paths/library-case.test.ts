// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { insideKnownLibrary, withinRoots } from '../../src/paths/library.ts';
import { ItemTree } from '../../src/targets/media-browser/item-tree.ts';

// autopulse's emby/jellyfin `path_match: case_insensitive` (settings/targets/emby.rs:44-58, 167-170,
// starts_with_ascii_case_insensitive): a library folder holds a path whatever the case of its ASCII letters. The one
// rule (paths/library.ts) and the item mode's walk (item-tree.ts) compare so for such a target; every other target
// compares as written.

test('withinRoots and insideKnownLibrary: ignoring ASCII case only where the place says so, whole segments still', () => {
  assert.equal(withinRoots('//nas/media/tv/Dark/e1.mkv', ['//NAS/Media/TV']), false);
  assert.equal(withinRoots('//nas/media/tv/Dark/e1.mkv', ['//NAS/Media/TV'], true), true);
  assert.equal(withinRoots('//nas/media/tv2/x.mkv', ['//NAS/Media/TV'], true), false, 'a sibling sharing the prefix is outside');
  assert.equal(withinRoots('/data/FILMÉ/x', ['/data/filmé'], true), false, 'only ASCII letters fold');
  assert.equal(insideKnownLibrary('/data/movies/Heat/Heat.mkv', [{ roots: ['/data/Movies'] }]), false);
  assert.equal(insideKnownLibrary('/data/movies/Heat/Heat.mkv', [{ roots: ['/data/Movies'], ignoreCase: true }]), true);
  assert.equal(insideKnownLibrary('/data/movies/../../etc/passwd', [{ roots: ['/data/Movies'], ignoreCase: true }]), false, 'never a ".." way out');
});

test("item mode: the library and the deepest item are found whatever the request's case (PATH_MATCH case_insensitive)", async () => {
  const calls: string[] = [];
  const client = {
    libraries: async () => [{ id: 'lib', name: 'TV', locations: ['//NAS/Media/TV'] }],
    children: async (parentId: string) => {
      calls.push(parentId);
      if (parentId === 'lib') return [{ Id: 'show', Path: '//NAS/Media/TV/Dark', IsFolder: true }] as never;
      if (parentId === 'show') return [{ Id: 's1', Path: '//NAS/Media/TV/Dark/Season 1', IsFolder: true }] as never;
      return [] as never;
    },
  };
  const path = '//nas/media/tv/dark/season 1';
  assert.equal(await new ItemTree(client).deepest(path), undefined, 'compared as written by default: no library holds it');
  const found = await new ItemTree(client, Date.now, true).deepest(path);
  assert.deepEqual(found && { id: found.id, root: found.root }, { id: 's1', root: false });
  assert.deepEqual(calls, ['lib', 'show'], 'the season is the path itself: nothing below it is listed');
});

test("?hash=: a case-insensitive target's library bounds the read as its scans are checked (LibraryRoots.places, hashPlaces)", async () => {
  const { LibraryRoots } = await import('../../src/targets/library-roots.ts');
  const { hashPlaces } = await import('../../src/server/library-places.ts');
  const { silentLogger } = await import('../../src/core/logger.ts');
  const target = (name: string, pathsIgnoreCase: boolean) => ({ name, pathsIgnoreCase, libraryRoots: async () => ['/Media/TV'] });
  const config = { SERVER_PATH_MAPPINGS: {}, SERVER_FILE_EXIST_PATH_MAPPINGS: {}, SERVER_PATH_REWRITES: [] };
  const places = async (ignoreCase: boolean) => hashPlaces(config, new LibraryRoots([target('jf', ignoreCase)], silentLogger()), undefined, { ms: 2000 });
  assert.equal(insideKnownLibrary('/media/tv/Dark/e1.mkv', await places(true)), true);
  assert.equal(insideKnownLibrary('/media/tv/Dark/e1.mkv', await places(false)), false);
  assert.equal(insideKnownLibrary('/etc/passwd', await places(true)), false);
});
