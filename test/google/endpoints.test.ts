// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DRIVE_API_URL, GOOGLE_AUTH_URL, GOOGLE_TOKEN_URL, googleEndpoints, serviceAccountTokenUrl } from '../../src/google/endpoints.ts';

// One resolver for the drive monitor and the rclone walkthrough: a remote's own option, then the environment,
// then the config's GOOGLE keys, then Google's defaults (docs/remote.md, "Settings and environment").
test('the first that is set wins: remote option, environment, config, default', () => {
  const configured = { OAUTH_AUTH_URL: 'http://config/auth', OAUTH_TOKEN_URL: 'http://config/token', DRIVE_API_URL: 'http://config/drive/' };
  const env = { SCANRELAY_OAUTH_AUTH_URL: 'http://env/auth', SCANRELAY_OAUTH_TOKEN_URL: 'http://env/token', SCANRELAY_DRIVE_API_URL: 'http://env/drive/' };
  const remote = { auth_url: 'http://remote/auth', token_url: 'http://remote/token' };

  const all = googleEndpoints({ env, configured, remote });
  assert.deepEqual([all.authUrl, all.tokenUrl, all.driveApiUrl], ['http://remote/auth', 'http://remote/token', 'http://env/drive/']);
  const noRemote = googleEndpoints({ env, configured });
  assert.deepEqual([noRemote.authUrl, noRemote.tokenUrl, noRemote.driveApiUrl], ['http://env/auth', 'http://env/token', 'http://env/drive/']);
  const configOnly = googleEndpoints({ env: {}, configured });
  assert.deepEqual([configOnly.authUrl, configOnly.tokenUrl, configOnly.driveApiUrl], ['http://config/auth', 'http://config/token', 'http://config/drive/']);
  const nothing = googleEndpoints({ env: {} });
  assert.deepEqual([nothing.authUrl, nothing.tokenUrl, nothing.driveApiUrl, nothing.loopbackPort], [GOOGLE_AUTH_URL, GOOGLE_TOKEN_URL, DRIVE_API_URL, 53682]);
  // An empty remote option or variable counts as not set.
  assert.equal(googleEndpoints({ env: { SCANRELAY_OAUTH_TOKEN_URL: '' }, remote: { token_url: '' }, configured }).tokenUrl, 'http://config/token');
});

test("a service account uses its key's token_uri unless a token URL was chosen (a config's default is not a choice)", () => {
  assert.equal(serviceAccountTokenUrl(googleEndpoints({ env: {} })), undefined);
  assert.equal(serviceAccountTokenUrl(googleEndpoints({ env: {}, configured: { OAUTH_TOKEN_URL: GOOGLE_TOKEN_URL } })), undefined);
  assert.equal(serviceAccountTokenUrl(googleEndpoints({ env: {}, configured: { OAUTH_TOKEN_URL: 'http://fake/token' } })), 'http://fake/token');
  assert.equal(serviceAccountTokenUrl(googleEndpoints({ env: { SCANRELAY_OAUTH_TOKEN_URL: 'http://env/token' } })), 'http://env/token');
});

test('SCANRELAY_OAUTH_PORT: 0 picks a free port; anything that is not a port falls back to rclone\'s 53682', () => {
  assert.equal(googleEndpoints({ env: { SCANRELAY_OAUTH_PORT: '0' } }).loopbackPort, 0);
  assert.equal(googleEndpoints({ env: { SCANRELAY_OAUTH_PORT: 'http' } }).loopbackPort, 53682);
  assert.equal(googleEndpoints({ env: { SCANRELAY_OAUTH_PORT: '70000' } }).loopbackPort, 53682);
});
