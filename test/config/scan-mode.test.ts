// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { namedTargets } from '../../src/config/named-targets.ts';
import { jellyfinTargetSchema } from '../../src/targets/jellyfin/schema.ts';
import { embyTargetSchema } from '../../src/targets/emby/schema.ts';
import { configSchema } from '../../src/config/schema.ts';
import { testConfig } from '../helpers/plex-target.ts';

// Issue 50: SCAN_MODE on every Jellyfin and Emby target, the top-level sections included.

test('SCAN_MODE: auto by default, one of the four modes, on TARGETS entries and on JELLYFIN / EMBY', () => {
  assert.equal(jellyfinTargetSchema.parse({ TYPE: 'jellyfin', URL: 'http://jf:8096' }).SCAN_MODE, 'auto');
  assert.equal(embyTargetSchema.parse({ TYPE: 'emby', URL: 'http://emby:8096', SCAN_MODE: 'plugin' }).SCAN_MODE, 'plugin');
  const config = testConfig({
    PLEX_ENABLED: false,
    JELLYFIN: { ENABLED: true, URL: 'http://jf:8096', API_KEY: 'k', SCAN_MODE: 'item' },
    EMBY: { ENABLED: true, URL: 'http://emby:8096', API_KEY: 'k' },
    TARGETS: { jf2: { TYPE: 'jellyfin', URL: 'http://jf2:8096', SCAN_MODE: 'media-updated' } },
  });
  const named = namedTargets(config);
  assert.deepEqual(
    [...named].map(([name, t]) => [name, 'SCAN_MODE' in t ? t.SCAN_MODE : undefined]),
    [
      ['jellyfin', 'item'],
      ['emby', 'auto'],
      ['jf2', 'media-updated'],
    ],
  );
});

test('a SCAN_MODE that is none of the four is refused, naming the key and the choices', () => {
  const bad = jellyfinTargetSchema.safeParse({ TYPE: 'jellyfin', URL: 'http://jf:8096', SCAN_MODE: 'fast' });
  assert.equal(bad.success, false);
  assert.deepEqual(bad.error!.issues[0]!.path, ['SCAN_MODE']);
  assert.match(bad.error!.issues[0]!.message, /auto.*plugin.*item.*media-updated/);
  const top = configSchema.safeParse({ JELLYFIN: { ENABLED: true, URL: 'http://jf:8096', SCAN_MODE: 'Plugin' } });
  assert.equal(top.success, false);
  assert.deepEqual(top.error!.issues[0]!.path, ['JELLYFIN', 'SCAN_MODE']);
});
