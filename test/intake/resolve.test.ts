// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FolderProbe } from '../../src/paths/folder.ts';
import { nearestExistingAncestor, resolveIntent } from '../../src/intake/resolve.ts';

/** A file system holding exactly these folders (as scanrelay sees them). */
const fs = (...folders: string[]): FolderProbe => (p) => (folders.includes(p) ? 'folder' : 'missing');

describe('nearestExistingAncestor: the folder scanned for a deleted folder', () => {
  const visible = { '/mnt/local/': ['/data/'] };

  test('without SERVER_FILE_EXIST_PATH_MAPPINGS: the parent', () => {
    assert.equal(nearestExistingAncestor('/data/TV/Dark', {}, fs()), '/data/TV');
  });
  test('the parent when it exists', () => {
    assert.equal(nearestExistingAncestor('/data/TV/Dark', visible, fs('/mnt/local/TV', '/mnt/local')), '/data/TV');
  });
  test('walks up past folders that are gone too', () => {
    assert.equal(nearestExistingAncestor('/data/Music/A/Album/CD 1', visible, fs('/mnt/local/Music', '/mnt/local')), '/data/Music');
  });
  test('may stop at the mapping root itself', () => {
    assert.equal(nearestExistingAncestor('/data/TV/Dark', visible, fs('/mnt/local')), '/data');
  });
  test('never above the mapping roots: there the local disk says nothing about the media', () => {
    const probe: FolderProbe = (p) => (p === '/' ? 'folder' : 'missing');
    assert.equal(nearestExistingAncestor('/data/TV/Dark', visible, probe), '/data/TV');
  });
  test('a path outside every mapping: the parent, without probing', () => {
    const probed: string[] = [];
    const probe: FolderProbe = (p) => (probed.push(p), 'folder');
    assert.equal(nearestExistingAncestor('/elsewhere/TV/Dark', visible, probe), '/elsewhere/TV');
    assert.deepEqual(probed, []);
  });
});

describe('resolveIntent for webhook paths', () => {
  const config = {
    SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'] },
    SERVER_FILE_EXIST_PATH_MAPPINGS: { '/mnt/local/': ['/data/'] },
    SERVER_IGNORE_LIST: ['/.grab/', 'sample'],
    SERVER_SCAN_PRIORITIES: [],
  };
  const intent = (paths: Array<{ path: string; kind: 'file' | 'folder' | 'gone' }>) =>
    ({ kind: 'scan', source: 'Sonarr', event: 'SeriesDelete', title: 'Dark (2017)', ids: { tvdbId: 334824 }, updateType: 'Deleted', paths }) as const;

  test('a deleted series folder: the nearest existing ancestor, mapped, with title and ids kept', () => {
    const [o] = resolveIntent(intent([{ path: '/tv/Dark', kind: 'gone' }]), config, fs('/mnt/local/TV'));
    assert.ok(o && 'request' in o);
    assert.deepEqual(o.request, { folder: '/data/TV', files: [], source: 'Sonarr', event: 'SeriesDelete', title: 'Dark (2017)', ids: { tvdbId: 334824 }, updateType: 'Deleted', priority: 0, removal: true });
    // SERVER_SCAN_REMOVED false: nothing, as plex_autoscan scanned nothing for a delete (scan.py:381-463 has no delete branch).
    const [off] = resolveIntent(intent([{ path: '/tv/Dark', kind: 'gone' }]), { ...config, SERVER_SCAN_REMOVED: false }, fs('/mnt/local/TV'));
    assert.ok(off && 'ignored' in off);
    assert.match(off.reason, /SERVER_SCAN_REMOVED is false: .* its own periodic library scan/);
  });
  test("a deleted file: its folder, without asking whether the file exists (it can't)", () => {
    let probes = 0;
    const [o] = resolveIntent(intent([{ path: '/tv/Dark/Season 01/a.mkv', kind: 'file' }]), config, () => (probes++, 'missing'));
    assert.ok(o && 'request' in o);
    assert.equal(o.request.folder, '/data/TV/Dark/Season 01');
    assert.deepEqual(o.request.files, [], 'a deleted file is not waited for or analyzed');
    assert.equal(probes, 0);
  });
  test('SERVER_IGNORE_LIST: a case-insensitive substring of the mapped path, for manual requests only (scan.py:326-335, utils.py:154-159)', () => {
    const paths = [{ path: '/tv/Dark/Sample/a.mkv', kind: 'file' as const }, { path: '/tv/Dark/.grab/b.mkv', kind: 'file' as const }, { path: '/tv/Dark/S1/c.mkv', kind: 'file' as const }];
    const manual = resolveIntent({ ...intent(paths), source: 'Manual', event: 'Manual' }, config, fs());
    assert.deepEqual(manual.map((o) => ('ignored' in o ? o.ignored : o.folder)), ['sample', '/.grab/', '/data/TV/Dark/S1']);
    // The webhook branches (scan.py:381-463) and the drive monitor (scan.py:153-184) never call should_ignore.
    const webhook = resolveIntent(intent(paths), config, fs());
    assert.deepEqual(webhook.map((o) => ('ignored' in o ? o.ignored : o.folder)), ['/data/TV/Dark/Sample', '/data/TV/Dark/.grab', '/data/TV/Dark/S1']);
  });
});
