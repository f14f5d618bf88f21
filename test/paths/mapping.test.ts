// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ancestors, mapPath, parentFolder, relativeTo } from '../../src/paths/mapping.ts';
import { looksLikeFile, scanFolderFor } from '../../src/paths/folder.ts';
import { invalidMappedPath, invalidRequestPath } from '../../src/paths/validate.ts';
import { ignoredBy, priorityOf } from '../../src/paths/rules.ts';
import { scanPrioritiesSchema } from '../../src/config/schema.ts';

describe('mapPath', () => {
  const cases: Array<[string, Record<string, string[]>, string, string]> = [
    ['container form to key', { '/data/Movies/': ['/movies/'] }, '/movies/Heat (1995)/Heat.mkv', '/data/Movies/Heat (1995)/Heat.mkv'],
    ['drive form (relative) to key', { '/data/TV/': ['My Drive/Media/TV/'] }, 'My Drive/Media/TV/Dark/S01/e1.mkv', '/data/TV/Dark/S01/e1.mkv'],
    ['whole segments only: /mnt/media does not match /mnt/media2', { '/data/A/': ['/mnt/media'] }, '/mnt/media2/x.mkv', '/mnt/media2/x.mkv'],
    ['longest value wins over file order', { '/short/': ['/mnt'], '/long/': ['/mnt/media'] }, '/mnt/media/x.mkv', '/long/x.mkv'],
    ['trailing slashes do not matter (value without, key with)', { '/data/Movies/': ['/movies'] }, '/movies/X/x.mkv', '/data/Movies/X/x.mkv'],
    ['trailing slashes do not matter (value with, key without)', { '/data/Movies': ['/movies/'] }, '/movies/X/x.mkv', '/data/Movies/X/x.mkv'],
    ['exact match of the folder itself', { '/data/Movies/': ['/movies/'] }, '/movies', '/data/Movies'],
    ['Windows key turns / into \\', { 'G:\\media\\': ['/data/media/'] }, '/data/media/Movies/X/x.mkv', 'G:\\media\\Movies\\X\\x.mkv'],
    ['POSIX key turns \\ into /', { '/data/': ['G:\\media\\'] }, 'G:\\media\\Movies\\x.mkv', '/data/Movies/x.mkv'],
    ['unmapped path is left as it came', { '/data/': ['/mnt/'] }, '/srv/x.mkv', '/srv/x.mkv'],
    ['empty values are ignored', { '/data/': [''] }, '/srv/x.mkv', '/srv/x.mkv'],
    ['spaces, unicode and quotes pass through', { '/data/TV/': ['/tv/'] }, "/tv/L'Été \"x\"/ep 1.mkv", "/data/TV/L'Été \"x\"/ep 1.mkv"],
    ['root value maps everything below it', { '/data/': ['/'] }, '/x/y.mkv', '/data/x/y.mkv'],
  ];
  for (const [name, mappings, input, expected] of cases) {
    test(name, () => assert.equal(mapPath(mappings, input).path, expected));
  }

  test('reports which key and value matched', () => {
    const m = mapPath({ '/data/Movies/': ['/movies/', '/mnt/unionfs/Media/Movies/'] }, '/mnt/unionfs/Media/Movies/A/a.mkv');
    assert.deepEqual(m.match, { key: '/data/Movies/', value: '/mnt/unionfs/Media/Movies/' });
  });
});

describe('path helpers', () => {
  test('relativeTo matches whole segments', () => {
    assert.equal(relativeTo('/a/bc/d', '/a/b'), undefined);
    assert.equal(relativeTo('/a/b/d', '/a/b/'), 'd');
    assert.equal(relativeTo('/a/b', '/a/b'), '');
  });
  test('parentFolder keeps roots', () => {
    assert.equal(parentFolder('/a/b/c.mkv'), '/a/b');
    assert.equal(parentFolder('/a'), '/');
    assert.equal(parentFolder('G:\\media\\x.mkv'), 'G:\\media');
    assert.equal(parentFolder('G:\\x.mkv'), 'G:\\');
  });
  test('ancestors lists every parent up to the root', () => {
    assert.deepEqual(ancestors('/a/b/c'), ['/a/b', '/a', '/']);
  });
  test('a file is scanned as its folder, a folder as itself', () => {
    const missing = () => 'missing' as const;
    assert.equal(scanFolderFor('/data/Movies/Heat (1995)/Heat.mkv', {}, missing), '/data/Movies/Heat (1995)');
    assert.equal(scanFolderFor('/data/Movies/Heat (1995)/', {}, missing), '/data/Movies/Heat (1995)');
    assert.equal(scanFolderFor('/data/TV/S.W.A.T', {}, missing), '/data/TV/S.W.A.T');
    assert.equal(looksLikeFile('/data/TV/Mr. Robot'), false);
    assert.equal(looksLikeFile('/data/Music/a/01 - x.FLAC'), true);
  });
  test('when scanrelay can see the path, the file system decides', () => {
    const seen: string[] = [];
    const probe = (p: string) => {
      seen.push(p);
      return 'folder' as const;
    };
    assert.equal(scanFolderFor('/data/Movies/Odd.mkv', { '/local/': ['/data/'] }, probe), '/data/Movies/Odd.mkv');
    assert.deepEqual(seen, ['/local/Movies/Odd.mkv']);
  });
});

describe('request validation', () => {
  test('rejects missing, empty, NUL, .. and non-absolute mapped paths with a message', () => {
    assert.match(invalidRequestPath(undefined)!, /missing/);
    assert.match(invalidRequestPath('  ')!, /missing or empty/);
    assert.match(invalidRequestPath('/a/\0b')!, /NUL/);
    assert.match(invalidRequestPath('/a/../b')!, /\.\./);
    assert.equal(invalidRequestPath('/a/..b/c'), undefined);
    assert.match(invalidMappedPath('My Drive/Media/x.mkv')!, /not absolute/);
    assert.equal(invalidMappedPath('G:\\media\\x.mkv'), undefined);
  });
  test('SERVER_IGNORE_LIST is a case-insensitive substring', () => {
    assert.equal(ignoredBy(['/.grab/', 'Thumbs.db'], '/data/x/thumbs.DB'), 'Thumbs.db');
    assert.equal(ignoredBy(['/.grab/'], '/data/x/y.mkv'), undefined);
  });
  test('SERVER_SCAN_PRIORITIES: first case-insensitive match, default 0', () => {
    const p = scanPrioritiesSchema.parse({ '0': ['/movies/'], '2': ['/tv/'] });
    assert.equal(priorityOf(p, '/data/TV/Dark'), 2);
    assert.equal(priorityOf(p, '/data/Music/x'), 0);
  });
});
