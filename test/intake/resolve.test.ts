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
    assert.deepEqual(o.request, { folder: '/data/TV', files: [], source: 'Sonarr', event: 'SeriesDelete', title: 'Dark (2017)', ids: { tvdbId: 334824 }, updateType: 'Deleted', priority: 0 });
  });
  test("a deleted file: its folder, without asking whether the file exists (it can't)", () => {
    let probes = 0;
    const [o] = resolveIntent(intent([{ path: '/tv/Dark/Season 01/a.mkv', kind: 'file' }]), config, () => (probes++, 'missing'));
    assert.ok(o && 'request' in o);
    assert.equal(o.request.folder, '/data/TV/Dark/Season 01');
    assert.deepEqual(o.request.files, [], 'a deleted file is not waited for or analyzed');
    assert.equal(probes, 0);
  });
  test('SERVER_IGNORE_LIST: a case-insensitive substring of the mapped path (plex_autoscan utils.should_ignore)', () => {
    const outcomes = resolveIntent(intent([{ path: '/tv/Dark/Sample/a.mkv', kind: 'file' }, { path: '/tv/Dark/.grab/b.mkv', kind: 'file' }, { path: '/tv/Dark/S1/c.mkv', kind: 'file' }]), config, fs());
    assert.deepEqual(outcomes.map((o) => ('ignored' in o ? o.ignored : o.folder)), ['sample', '/.grab/', '/data/TV/Dark/S1']);
  });
});
