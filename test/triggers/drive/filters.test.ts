// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configSchema } from '../../../src/config/schema.ts';
import { classify } from '../../../src/triggers/drive/changes.ts';
import { filterPaths, watchedSharedDrives, type AllowedConfig } from '../../../src/triggers/drive/filters.ts';

const allowed = (over: Partial<AllowedConfig>): AllowedConfig => ({ ...configSchema.parse({}).GOOGLE.ALLOWED, FILE_PATHS: ['My Drive/Media/'], ...over });

describe('drive filters (plex_autoscan _remove_unwanted_paths)', () => {
  it('matches extensions as a case-insensitive suffix, with or without the dot', () => {
    const withDot = allowed({ FILE_EXTENSIONS: true, FILE_EXTENSIONS_LIST: ['.mkv'] });
    const noDot = allowed({ FILE_EXTENSIONS: true, FILE_EXTENSIONS_LIST: ['mkv'] });
    for (const a of [withDot, noDot]) {
      assert.deepEqual(filterPaths(['My Drive/Media/Movies/A (2020)/A.MKV'], 'video/x-matroska', a).kept, ['My Drive/Media/Movies/A (2020)/A.MKV']);
      assert.deepEqual(filterPaths(['My Drive/Media/Movies/A (2020)/A.nfo'], 'text/plain', a).kept, []);
    }
  });

  it('keeps the "ts" quirk: any name ending in ts passes', () => {
    const a = allowed({ FILE_EXTENSIONS: true, FILE_EXTENSIONS_LIST: ['mkv', 'ts'] });
    assert.deepEqual(filterPaths(['My Drive/Media/Extras/Credits'], 'application/octet-stream', a).kept, ['My Drive/Media/Extras/Credits']);
    assert.deepEqual(filterPaths(['My Drive/Media/Extras/ep.ts'], 'video/mp2t', a).kept, ['My Drive/Media/Extras/ep.ts']);
  });

  it('extension filter off: every extension passes', () => {
    const a = allowed({ FILE_EXTENSIONS: false, FILE_EXTENSIONS_LIST: ['mkv'] });
    assert.equal(filterPaths(['My Drive/Media/x.nfo'], 'text/plain', a).kept.length, 1);
  });

  it('matches MIME entries as case-insensitive substrings; a mismatch drops the change', () => {
    const a = allowed({ MIME_TYPES: true, MIME_TYPES_LIST: ['video'] });
    assert.equal(filterPaths(['My Drive/Media/a.mkv'], 'Video/X-Matroska', a).kept.length, 1);
    const r = filterPaths(['My Drive/Media/a.jpg'], 'image/jpeg', a);
    assert.deepEqual(r.kept, []);
    assert.deepEqual(r.removed, [{ path: 'My Drive/Media/a.jpg', reason: 'mime' }]);
  });

  it('rejects a .sub file even though Drive calls it video/MP2G', () => {
    const a = allowed({ MIME_TYPES: true, MIME_TYPES_LIST: ['video'] });
    assert.deepEqual(filterPaths(['My Drive/Media/Movies/A/A.sub'], 'video/MP2G', a).kept, []);
    assert.equal(filterPaths(['My Drive/Media/Movies/A/A.mpg'], 'video/MP2G', a).kept.length, 1);
  });

  it('FILE_PATHS: case-insensitive plain prefix; outside paths and an empty list allow nothing', () => {
    const a = allowed({});
    assert.equal(filterPaths(['my drive/media/TV/x.mkv'], 'video/x-matroska', a).kept.length, 1);
    assert.deepEqual(filterPaths(['My Drive/Downloads/x.mkv'], 'video/x-matroska', a).removed, [{ path: 'My Drive/Downloads/x.mkv', reason: 'path' }]);
    assert.deepEqual(filterPaths(['My Drive/Media/x.mkv'], 'video/x-matroska', allowed({ FILE_PATHS: [] })).kept, []);
  });

  it('keeps only the allowed paths of a file with several parents', () => {
    const r = filterPaths(['My Drive/Media/TV/a.mkv', 'My Drive/Other/a.mkv'], 'video/x-matroska', allowed({}));
    assert.deepEqual(r.kept, ['My Drive/Media/TV/a.mkv']);
  });

  it('TEAMDRIVES: only listed shared drives, none when the list is empty or TEAMDRIVE is off', () => {
    const drives = [{ id: '1', name: 'Media' }, { id: '2', name: 'Backups' }];
    assert.deepEqual(watchedSharedDrives(drives, { TEAMDRIVE: true, TEAMDRIVES: ['Media'] }), [{ id: '1', name: 'Media' }]);
    assert.deepEqual(watchedSharedDrives(drives, { TEAMDRIVE: true, TEAMDRIVES: [] }), []);
    assert.deepEqual(watchedSharedDrives(drives, { TEAMDRIVE: false, TEAMDRIVES: ['Media'] }), []);
  });
});

describe('change kinds (plex_autoscan _process_changes)', () => {
  const before = { id: 'f', name: 'a.mkv', parents: ['p'], md5: 'm1', mimeType: 'video/x-matroska', paths: ['D/Media/a.mkv'] };
  it('new, modified, renamed, moved, unchanged', () => {
    assert.equal(classify(undefined, { name: 'a.mkv', md5Checksum: 'm1' }, ['D/Media/a.mkv']), 'new');
    assert.equal(classify(before, { name: 'a.mkv', md5Checksum: 'm2' }, ['D/Media/a.mkv']), 'modified');
    assert.equal(classify(before, { name: 'b.mkv', md5Checksum: 'm1' }, ['D/Media/b.mkv']), 'renamed');
    assert.equal(classify(before, { name: 'a.mkv', md5Checksum: 'm1' }, ['D/Media/TV/a.mkv']), 'moved');
    assert.equal(classify(before, { name: 'a.mkv', md5Checksum: 'm1' }, ['D/Media/a.mkv']), 'unchanged');
  });
  it('no md5 on either side: not scanned, as plex_autoscan', () => {
    assert.equal(classify(before, { name: 'a.mkv' }, ['D/Media/a.mkv']), 'no-md5');
    assert.equal(classify({ ...before, md5: null }, { name: 'a.mkv', md5Checksum: 'm1' }, ['D/Media/a.mkv']), 'no-md5');
  });
});

describe('TEAMDRIVES by id (autoscan bernard and A-Train name shared drives by id)', () => {
  it('a listed id selects the drive as its name does', () => {
    const drives = [{ id: '0A1xxxxxxxxxUk9PVA', name: 'Media' }, { id: '0A2', name: 'Other' }];
    assert.deepEqual(watchedSharedDrives(drives, { TEAMDRIVE: true, TEAMDRIVES: ['0A1xxxxxxxxxUk9PVA'] }), [{ id: '0A1xxxxxxxxxUk9PVA', name: 'Media' }]);
  });
});
