import assert from 'node:assert/strict';
import { test } from 'node:test';
import { relayConfig } from '../../src/config/named-targets.ts';
import { configSchema, type FileConfig } from '../../src/config/schema.ts';
import { configuredServers } from '../../src/setup/servers.ts';

/* setup pairs with the media servers the config has: the targets plex, jellyfin and emby of the one target model. */

const servers = (file: Record<string, unknown>, skip?: { plex?: boolean; jellyfin?: boolean }) =>
  configuredServers(relayConfig(configSchema.parse({ SERVER_PASS: 'x', ...file }) as FileConfig), skip).map((s) => `${s.name} ${s.service}`);

test('the plex_autoscan keys: a Plex with a token, JELLYFIN and EMBY while enabled with a URL', () => {
  assert.deepEqual(servers({ PLEX_LOCAL_URL: 'http://127.0.0.1:32400', PLEX_TOKEN: 't' }), ['plex Plex at http://127.0.0.1:32400']);
  assert.deepEqual(servers({ PLEX_LOCAL_URL: 'http://127.0.0.1:32400' }), [], 'a Plex without a token cannot list its libraries');
  assert.deepEqual(servers({ PLEX_ENABLED: false, PLEX_TOKEN: 't', JELLYFIN: { ENABLED: true, URL: 'http://127.0.0.1:8096', API_KEY: 'k' }, EMBY: { ENABLED: false, URL: 'http://127.0.0.1:8097' } }), [
    'jellyfin Jellyfin at http://127.0.0.1:8096',
  ]);
});

test('TARGETS entries named plex and jellyfin are the same servers; a flag given skips its kind', () => {
  const file = { PLEX_ENABLED: false, TARGETS: { plex: { TYPE: 'plex', URL: 'http://127.0.0.1:32401', TOKEN: 't' }, jellyfin: { TYPE: 'jellyfin', URL: 'http://127.0.0.1:8096', API_KEY: 'k' } } };
  assert.deepEqual(servers(file), ['plex Plex at http://127.0.0.1:32401', 'jellyfin Jellyfin at http://127.0.0.1:8096']);
  assert.deepEqual(servers(file, { plex: true, jellyfin: true }), []);
});
