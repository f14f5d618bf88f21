// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { RelayInstance } from '../../src/queue/instance.ts';
import { tempDir } from '../helpers/relay.ts';

// A relay's install id (queue/instance.ts): kept across restarts in its own folder, held by one process at a time,
// and another folder (the same config on a second host) is another install.

test('a restart from the same folder has the same id; a second process of that folder gets none; another folder has its own', () => {
  const queuefile = join(tempDir('scanrelay-instance-'), 'queue.db');
  const first = RelayInstance.take(queuefile);
  assert.ok(first);
  assert.match(first.id, /^[0-9a-f-]{36}$/);
  // While the first runs, a second relay from the same folder cannot say it is this install.
  assert.equal(RelayInstance.take(queuefile), undefined);
  first.release();
  const restarted = RelayInstance.take(queuefile);
  assert.equal(restarted?.id, first.id);
  restarted?.release();
  const elsewhere = RelayInstance.take(join(tempDir('scanrelay-instance-'), 'queue.db'));
  assert.ok(elsewhere);
  assert.notEqual(elsewhere.id, first.id);
  elsewhere.release();
});
