// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { insideKnownLibrary, isPlainAbsolute, withinRoots } from '../../src/paths/library.ts';

// Issue 47 items 1 and 8: the one rule for where the relay reads its own disk on a client's word (a `?hash=`
// check, Tdarr's folder listing).
test('plain: absolute, no ".." segment, no NUL', () => {
  const table: Array<[string, boolean]> = [
    ['/media/tv/a.mkv', true],
    ['/media/tv/..a.mkv', true],
    ['/media/tv/../../etc/passwd', false],
    ['/media/..', false],
    ['media/tv', false],
    ['', false],
    ['/media/a\0b', false],
    ['C:\\Media\\a.mkv', false],
  ];
  for (const [path, plain] of table) assert.equal(isPlainAbsolute(path), plain, JSON.stringify(path));
});

test('inside a known library: whole segments, as each place names the path; a place with no roots admits nothing', () => {
  const plex = { roots: ['/data/TV', '/data/Movies/'] };
  assert.equal(insideKnownLibrary('/data/TV/Show/e1.mkv', [plex]), true);
  assert.equal(insideKnownLibrary('/data/TV', [plex]), true);
  assert.equal(insideKnownLibrary('/data/Movies/Up/Up.mkv', [plex]), true);
  assert.equal(insideKnownLibrary('/data/TV2/x.mkv', [plex]), false, 'a sibling that shares the prefix is outside');
  assert.equal(insideKnownLibrary('/data/TV/../../etc/passwd', [plex]), false);
  assert.equal(insideKnownLibrary('/etc/passwd', [plex]), false);
  assert.equal(insideKnownLibrary('/data/TV/x', [{ roots: [] }]), false);
  assert.equal(insideKnownLibrary('/data/TV/x', []), false);
  // A target that names the relay's /mnt/media as D:\Media (its REWRITE).
  const windows = { roots: ['D:\\Media'], name: (p: string) => p.replace(/^\/mnt\/media/, 'D:\\Media').replaceAll('/', '\\') };
  assert.equal(insideKnownLibrary('/mnt/media/TV/e.mkv', [windows]), true);
  assert.equal(insideKnownLibrary('/mnt/other/e.mkv', [windows]), false);
  // A rewrite that yields a relative or ".." path never counts, nor one that throws.
  assert.equal(insideKnownLibrary('/x/a', [{ roots: ['/lib'], name: () => '/lib/../etc' }]), false);
  assert.equal(insideKnownLibrary('/x/a', [{ roots: ['lib'], name: () => 'lib/a' }]), false);
  assert.equal(
    insideKnownLibrary('/x/a', [
      {
        roots: ['/lib'],
        name: () => {
          throw new Error('bad rule');
        },
      },
    ]),
    false,
  );
  // A library at the root of the disk holds everything plain.
  assert.equal(insideKnownLibrary('/etc/passwd', [{ roots: ['/'] }]), true);
  assert.equal(withinRoots('D:\\Media\\TV', ['D:\\Media']), true);
});
