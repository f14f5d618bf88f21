// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { renameScans } from '../../../src/triggers/arr/scans.ts';

describe('renameScans: folders to scan after a rename', () => {
  const cases: Array<[string, string | undefined, Array<{ now: string; before?: string }>, Array<{ path: string; kind: string }>]> = [
    ['file renamed in place: the item folder', '/tv/Dark', [{ now: '/tv/Dark/Season 01/b.mkv', before: '/tv/Dark/Season 01/a.mkv' }], [{ path: '/tv/Dark', kind: 'folder' }]],
    ['season folder renamed inside the item: the item folder covers both', '/tv/Dark', [{ now: '/tv/Dark/Season 01/a.mkv', before: '/tv/Dark/Season 1/a.mkv' }], [{ path: '/tv/Dark', kind: 'folder' }]],
    [
      'item folder renamed: the old one is gone',
      '/tv/Dark (2017)',
      [{ now: '/tv/Dark (2017)/Season 01/a.mkv', before: '/tv/Dark/Season 01/a.mkv' }],
      [{ path: '/tv/Dark (2017)', kind: 'folder' }, { path: '/tv/Dark', kind: 'gone' }],
    ],
    [
      'several files from one old folder give one gone path',
      '/tv/B',
      [{ now: '/tv/B/S1/a.mkv', before: '/tv/A/S1/a.mkv' }, { now: '/tv/B/S2/b.mkv', before: '/tv/A/S2/b.mkv' }],
      [{ path: '/tv/B', kind: 'folder' }, { path: '/tv/A', kind: 'gone' }],
    ],
    [
      'no item folder: new folders and the old folder below the shared one',
      undefined,
      [{ now: '/tv/Dark/Season 01/a.mkv', before: '/tv/Dark/Season 1/a.mkv' }],
      [{ path: '/tv/Dark/Season 01/a.mkv', kind: 'file' }, { path: '/tv/Dark/Season 1', kind: 'gone' }],
    ],
    [
      'no item folder, file moved up out of a subfolder: the old folder still exists and holds the new one',
      undefined,
      [{ now: '/tv/Dark/Season 01/Extras/a.mkv', before: '/tv/Dark/Season 01/a.mkv' }],
      [{ path: '/tv/Dark/Season 01/Extras/a.mkv', kind: 'file' }, { path: '/tv/Dark/Season 01', kind: 'folder' }],
    ],
    [
      'old location shares only the root: the old folder itself is gone (never scan "/")',
      '/tv/Dark',
      [{ now: '/tv/Dark/Season 01/a.mkv', before: '/old-disk/Dark/Season 01/a.mkv' }],
      [{ path: '/tv/Dark', kind: 'folder' }, { path: '/old-disk/Dark/Season 01', kind: 'gone' }],
    ],
    ['no previous path: the new folders only', undefined, [{ now: '/music/A/CD 1/01.flac' }, { now: '/music/A/CD 1/02.flac' }], [{ path: '/music/A/CD 1/01.flac', kind: 'file' }]],
    ['no files: the item folder', '/movies/Up (2009)', [], [{ path: '/movies/Up (2009)', kind: 'folder' }]],
  ];
  for (const [name, item, renamed, expected] of cases) {
    test(name, () => assert.deepEqual(renameScans(item, renamed), expected));
  }
});
