// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deepestHolder, pathUnder } from '../../src/targets/path-match.ts';

// Whole path segments, and Windows paths by Windows' rules: autopulse's RuntimePath as sonarr.rs:48-54,
// radarr.rs:48-54 and fileflows.rs:99-101 use it (their tests at sonarr.rs:127-155, radarr.rs:127-156,
// fileflows.rs:330-344).
test('pathUnder: a root holds a path by whole segments; Windows paths compare without case, either separator', () => {
  const table: Array<[path: string, root: string, under: boolean]> = [
    ['/tv/Show/Season 1/e1.mkv', '/tv/Show', true],
    ['/tv/Show', '/tv/Show', true],
    ['/tv/Show/', '/tv/Show', true],
    ['/tv/Show/e1.mkv', '/tv/Show/', true],
    ['/tv/Showcase/e1.mkv', '/tv/Show', false],
    ['/tv/show/e1.mkv', '/tv/Show', false], // POSIX: case counts
    ['/tv', '/tv/Show', false], // a folder above the root is not in it
    [String.raw`d:\tv\breaking bad\Season 1\S01E01.mkv`, String.raw`D:\TV\Breaking Bad`, true],
    ['D:/TV/Breaking Bad/S01E01.mkv', String.raw`D:\TV\Breaking Bad`, true],
    [String.raw`\\server\movies\the matrix\The Matrix (1999).mkv`, String.raw`\\SERVER\Movies\The Matrix`, true],
    [String.raw`D:\TV\Showcase\Episode.mkv`, String.raw`D:\TV\Show`, false],
    [String.raw`D:\tv\Show\Episode.mkv`, '/tv/Show', false], // mixed flavours never match
    ['/tv/Show/e1.mkv', String.raw`D:\tv\Show`, false],
    ['/tv/Show/e1.mkv', '', false],
  ];
  for (const [path, root, under] of table) assert.equal(pathUnder(path, root), under, `${path} under ${root}`);
});

test('deepestHolder: the closest root wins, whatever the order; none holds it: undefined', () => {
  const roots = [{ id: 1, path: '/media' }, { id: 2, path: '/media/TV/Show' }, { id: 3, path: '/media/TV' }, { id: 4, path: undefined }];
  const table: Array<[path: string, id: number | undefined]> = [
    ['/media/TV/Show/S01/e1.mkv', 2],
    ['/media/TV/Other', 3],
    ['/media/Movies/A', 1],
    ['/data/x', undefined],
  ];
  for (const [path, id] of table) assert.equal(deepestHolder(path, roots, (r) => r.path)?.id, id, path);
});
