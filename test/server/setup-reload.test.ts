import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Relay } from '../../src/server/run.ts';
import { FakePlex } from '../fakes/plex.ts';
import { postJson, ROOT, tempDir } from '../helpers/relay.ts';
import { startRelayAgainst } from '../helpers/suite.ts';

/**
 * POST /api/<secret>/setup/reload: the running relay takes its triggers' rewrites and the /triggers/ credentials
 * from its config file without a restart, and names the changed keys it reads only at start.
 */
let plex: FakePlex;
let relay: Relay;
let base: string;
const configPath = join(tempDir(), 'config.json');
const start = { SERVER_PASS: 's3cret', SERVER_PATH_MAPPINGS: {}, SERVER_SCAN_DELAY: 600 };
const download = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'arr', 'sonarr', 'download.json'), 'utf8'));
const basic = (user: string, pass: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });

before(async () => {
  plex = await new FakePlex({ sections: [{ id: '2', title: 'TV', type: 'show', locations: ['/data/TV'] }] }).start();
  writeFileSync(configPath, JSON.stringify({ ...start, PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token }));
  relay = await startRelayAgainst(plex, start, { configPath });
  base = relay.url.slice(0, relay.url.lastIndexOf('/'));
});
after(async () => {
  await relay?.close();
  await plex?.stop();
});

test('the reload needs the secret and a same-origin request (before any credentials are set)', async () => {
  assert.equal((await postJson(`${base}/api/wrong/setup/reload`, {})).status, 404);
  assert.equal((await postJson(`${base}/api/s3cret/setup/reload`, {}, { 'sec-fetch-site': 'cross-site' })).status, 403);
  const same = await postJson(`${base}/api/s3cret/setup/reload`, { keys: [] });
  assert.equal(same.status, 200, same.text);
  assert.deepEqual(same.body, { reloaded: [], restart: [] });
});

test('the new triggers, rewrites and credentials serve at once; a changed PLEX_TOKEN is named as needing a restart', async () => {
  // Started without credentials: autoscan's routes are off.
  assert.equal((await postJson(`${base}/triggers/sonarr`, download)).status, 404);

  writeFileSync(
    configPath,
    JSON.stringify({
      ...start,
      PLEX_LOCAL_URL: plex.url,
      PLEX_TOKEN: 'another-token',
      SERVER_AUTH_USER: 'relay',
      SERVER_AUTH_PASS: 'pass',
      SERVER_AUTOSCAN_TRIGGERS: { sonarr: { PRIORITY: 0, REWRITE: [{ from: '^/tv(/|$)', to: '/data/TV${1}' }] }, 'sonarr-2': { REWRITE: [] } },
    }),
  );
  const keys = ['SERVER_AUTOSCAN_TRIGGERS', 'SERVER_AUTH_USER', 'SERVER_AUTH_PASS', 'PLEX_TOKEN'];
  const reload = await postJson(`${base}/api/s3cret/setup/reload`, { keys });
  assert.equal(reload.status, 200, reload.text);
  assert.deepEqual(reload.body, { reloaded: ['SERVER_AUTOSCAN_TRIGGERS', 'SERVER_AUTH_USER', 'SERVER_AUTH_PASS'], restart: ['PLEX_TOKEN'] });

  assert.equal((await postJson(`${base}/triggers/sonarr`, download)).status, 401);
  const queued = await postJson(`${base}/triggers/sonarr`, download, basic('relay', 'pass'));
  assert.equal(queued.status, 200, queued.text);
  assert.match(queued.text, /\/data\/TV\/Westworld/);
  // A trigger the file added serves too; one it does not name is not found.
  assert.equal((await postJson(`${base}/triggers/sonarr-2`, { eventType: 'Test' }, basic('relay', 'pass'))).status, 200);
  assert.equal((await postJson(`${base}/triggers/nope`, download, basic('relay', 'pass'))).status, 404);
  // The secret now needs the credentials too, like every route.
  assert.equal((await postJson(`${base}/api/s3cret/setup/reload`, { keys })).status, 401);
});
