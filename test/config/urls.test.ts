import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { UserError } from '../../src/core/errors.ts';
import { parseConfig } from '../../src/config/load.ts';
import { runCli, tempDir } from '../helpers/relay.ts';

test('PLEX_LOCAL_URL without a scheme stops the start: exit 2, one line naming the key', async () => {
  const file = join(tempDir(), 'config.json');
  writeFileSync(file, JSON.stringify({ SERVER_PASS: 'url-secret', SERVER_IP: '127.0.0.1', SERVER_PORT: 0, PLEX_LOCAL_URL: 'localhost:32400', PLEX_TOKEN: 't' }));
  const r = await runCli(['--config', file, 'server']);
  assert.equal(r.code, 2, r.stderr + r.stdout);
  assert.match(r.stderr, /PLEX_LOCAL_URL: "localhost:32400" must start with http:\/\/ or https:\/\/ \(for example http:\/\/localhost:32400\)/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  assert.doesNotMatch(r.stdout, /scan URL/, 'it never listened');
});

test('every URL key is checked the same way, nested ones by their dotted name; empty means unset', () => {
  const bad: Array<[string, Record<string, unknown>]> = [
    ['JELLYFIN.URL', { JELLYFIN: { ENABLED: true, URL: 'jellyfin:8096', API_KEY: 'k' } }],
    ['EMBY.URL', { EMBY: { URL: 'ftp://emby:8096' } }],
    ['RCLONE.RC_CACHE_REFRESH.RC_URL', { RCLONE: { RC_CACHE_REFRESH: { RC_URL: 'localhost:5572' } } }],
    ['GOOGLE.OAUTH_TOKEN_URL', { GOOGLE: { OAUTH_TOKEN_URL: 'oauth2.googleapis.com/token' } }],
    ['GOOGLE.DRIVE_API_URL', { CLOUD: { DRIVE_API_URL: 'www.googleapis.com/drive/v3' } }],
  ];
  for (const [key, raw] of bad) {
    assert.throws(
      () => parseConfig(raw),
      (err: unknown) => err instanceof UserError && err.exitCode === 2 && err.message.includes(`${key}: `) && /must start with http:\/\/ or https:\/\//.test(err.message),
      key,
    );
  }
  // An unset server URL and the defaults load.
  assert.doesNotThrow(() => parseConfig({ JELLYFIN: { URL: '' }, PLEX_LOCAL_URL: 'https://10.0.0.2:32400' }));
});

test("SERVER_QUEUE_URL='postgress://...' names the scheme, from the environment and from the file", () => {
  const env = { SERVER_QUEUE_URL: 'postgress://relay:pw@127.0.0.1:5432/scanrelay' };
  assert.throws(() => parseConfig({}, env), (err: unknown) => {
    const message = (err as Error).message;
    assert.match(message, /environment variable SERVER_QUEUE_URL: the scheme "postgress:\/\/" is not one scanrelay knows; a shared queue is postgres:\/\/ or postgresql:\/\//);
    assert.doesNotMatch(message, /JSON|quotes/);
    assert.doesNotMatch(message, /pw@/, 'the password is not repeated');
    return true;
  });
  assert.throws(() => parseConfig({ SERVER_QUEUE_URL: 'mysql://db/scanrelay' }), /SERVER_QUEUE_URL: the scheme "mysql:\/\/" is not one scanrelay knows/);
  // The right schemes still load, quoted or not.
  assert.equal(parseConfig({}, { SERVER_QUEUE_URL: 'postgresql://relay@127.0.0.1/q' }).config.SERVER_QUEUE_URL, 'postgresql://relay@127.0.0.1/q');
});
