// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FieldSelectionError, parseFields, selectFields } from './drive-fields.ts';

// The fake Drive answers only the fields asked for (docs/protocols.md section 6), so a field the client stops
// asking for goes missing in the tests as it would in production.
const change = {
  kind: 'drive#change',
  fileId: 'f1',
  removed: false,
  file: { kind: 'drive#file', id: 'f1', name: 'a.mkv', mimeType: 'video/x-matroska', parents: ['p'], md5Checksum: 'x', size: '3' },
};

test('nested lists, slash paths and arrays keep exactly what is named', () => {
  const list = { kind: 'drive#changeList', newStartPageToken: '9', changes: [change, change] };
  assert.deepEqual(selectFields(list, parseFields('newStartPageToken,changes(fileId,file(id,parents))')), {
    newStartPageToken: '9',
    changes: [
      { fileId: 'f1', file: { id: 'f1', parents: ['p'] } },
      { fileId: 'f1', file: { id: 'f1', parents: ['p'] } },
    ],
  });
  assert.deepEqual(selectFields(change, parseFields('file/name,file/size,removed')), { removed: false, file: { name: 'a.mkv', size: '3' } });
  assert.deepEqual(selectFields(change, parseFields('file')), { file: change.file });
  assert.deepEqual(selectFields(change, parseFields('*')), change);
  assert.deepEqual(selectFields(change, parseFields('file(*)')), { file: change.file });
});

test('a field that is not there is simply absent; a malformed selection is refused', () => {
  assert.deepEqual(selectFields({ id: '1' }, parseFields('id,parents')), { id: '1' });
  for (const bad of ['', 'a(b', 'a)', 'a,,b', 'a(b)c', '1a', 'a/']) assert.throws(() => parseFields(bad), FieldSelectionError, bad);
});
