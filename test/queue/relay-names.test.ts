// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deliveryKey, deliveryLabel } from '../../src/queue/pg/relays.ts';

// How a delivery on a shared queue is named, and how people read that name.

test('a delivery is named by the kind of server and its own id, and read as the kind and the server name', () => {
  const plex = deliveryKey('plex', '9f3c1a2b7d4e5f60718293a4b5c6d7e8f9012345');
  assert.equal(plex, 'plex@9f3c1a2b7d4e5f60718293a4b5c6d7e8f9012345');
  const cases: Array<[kind: string, label: string | null, key: string, shown: string]> = [
    ['plex', 'Living Room', plex, 'plex (Living Room)'],
    // No name told (Plex without a token): the start of its id.
    ['plex', null, plex, 'plex (9f3c1a2b7d4e)'],
    ['plex', '', plex, 'plex (9f3c1a2b7d4e)'],
    ['jellyfin', 'Den', deliveryKey('jellyfin', 'a1b2c3d4e5f60718293a4b5c6d7e8f90'), 'jellyfin (Den)'],
    // A name from before relays recorded their servers reads as it is.
    ['plex', null, 'plex', 'plex'],
    ['emby', 'Old', 'emby', 'emby'],
  ];
  for (const [kind, label, key, shown] of cases) assert.equal(deliveryLabel(kind, label, key), shown, `${kind} ${label} ${key}`);
});
