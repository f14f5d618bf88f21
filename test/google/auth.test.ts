import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { UserError } from '../../src/core/errors.ts';
import { TokenFileSource } from '../../src/google/auth.ts';
import { DriveClient } from '../../src/google/drive-client.ts';
import { RcloneRemoteSource } from '../../src/google/rclone-remote.ts';
import { ServiceAccountSource, readServiceAccountKey } from '../../src/google/service-account.ts';
import { googleEndpoints } from '../../src/google/endpoints.ts';
import { expandPath } from '../../src/paths/expand.ts';
import { readTokenFile, writeTokenFile } from '../../src/google/token-file.ts';
import { FakeGoogle } from '../fakes/google.ts';
import { tempDir } from '../helpers/relay.ts';

let google: FakeGoogle;
before(async () => {
  google = await new FakeGoogle().start();
});
after(() => google.stop());

/** The fake's endpoints, as a config's GOOGLE section would name them (no environment override). */
const endpointsOf = (g: FakeGoogle) => googleEndpoints({ env: {}, configured: { OAUTH_AUTH_URL: g.authUrl, OAUTH_TOKEN_URL: g.tokenUrl } });
const clientOf = (g: FakeGoogle) => ({ clientId: g.client.id, clientSecret: g.client.secret, authUrl: g.authUrl, tokenUrl: g.tokenUrl });

describe('token file', () => {
  it('refreshes an expiring token with the GOOGLE client and rewrites the file with mode 0600', async () => {
    const dir = tempDir();
    const file = join(dir, 'token.json');
    const issued = google.issueToken({ expiresIn: 10 });
    writeTokenFile(file, issued);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const source = new TokenFileSource(file, clientOf(google));
    const access = await source.accessToken();
    assert.notEqual(access, issued.access_token);
    assert.ok(google.validAccessTokens.has(access));
    const saved = readTokenFile(file)!;
    assert.equal(saved.access_token, access);
    assert.equal(saved.refresh_token, issued.refresh_token, 'refresh token kept');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const refreshCall = google.calls.filter((c) => c.path === '/token').at(-1)!;
    assert.deepEqual(refreshCall.form, { grant_type: 'refresh_token', refresh_token: issued.refresh_token, client_id: google.client.id, client_secret: google.client.secret });
  });

  it('no token file: a clear message naming scanrelay authorize', async () => {
    const source = new TokenFileSource(join(tempDir(), 'none.json'), clientOf(google));
    await assert.rejects(source.accessToken(), (e: Error) => e instanceof UserError && /scanrelay authorize/.test(e.message));
  });
});

describe('service account', () => {
  it('exchanges an RS256 JWT signed with the key for an access token the Drive API accepts', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const email = 'relay@project.iam.gserviceaccount.com';
    google.serviceAccounts.set(email, publicKey);
    const dir = tempDir();
    const keyFile = join(dir, 'sa.json');
    writeFileSync(keyFile, JSON.stringify({ type: 'service_account', client_email: email, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), private_key_id: 'kid-1', token_uri: google.tokenUrl }));
    process.env.SCANRELAY_TEST_SA_DIR = dir;
    const key = readServiceAccountKey(expandPath('${SCANRELAY_TEST_SA_DIR}/sa.json'));
    const source = new ServiceAccountSource(key, google.tokenUrl);
    const client = new DriveClient({ baseUrl: google.driveUrl, auth: source });
    assert.match(await client.startPageToken(), /^\d+$/);
    const jwt = google.assertions.at(-1)!;
    assert.equal(jwt.header.alg, 'RS256');
    assert.equal(jwt.header.kid, 'kid-1');
    assert.equal(jwt.claims.iss, email);
    assert.equal(jwt.claims.scope, 'https://www.googleapis.com/auth/drive');
    assert.equal(jwt.claims.aud, google.tokenUrl);
    assert.equal(google.calls.find((c) => c.form.grant_type === 'urn:ietf:params:oauth:grant-type:jwt-bearer')?.form.assertion?.split('.').length, 3);
  });

  it('a key the endpoint does not know is refused with the endpoint\'s reason', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const source = new ServiceAccountSource({ client_email: 'nobody@x.iam.gserviceaccount.com', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string }, google.tokenUrl);
    await assert.rejects(source.accessToken(), /invalid_grant/);
  });

  it('expands ~ and environment variables in SERVICE_ACCOUNT_FILE', () => {
    assert.equal(expandPath('~/sa.json', { HOME: '/home/u' }).endsWith('/sa.json'), true);
    assert.equal(expandPath('$CONF/sa.json', { CONF: '/etc/relay' }), '/etc/relay/sa.json');
  });
});

describe('rclone remote', () => {
  const conf = (dir: string, body: string) => {
    const path = join(dir, 'rclone.conf');
    writeFileSync(path, body);
    return path;
  };

  it('a remote with its own client: refreshed with that client, kept in scanrelay\'s token file, rclone.conf untouched', async () => {
    const dir = tempDir();
    const old = google.issueToken({ expiresIn: -60 });
    const text = `[gdrive]\ntype = drive\nclient_id = ${google.client.id}\nclient_secret = ${google.client.secret}\nscope = drive\ntoken = ${JSON.stringify({ ...old, expiry: '2020-01-01T00:00:00.123456789Z' })}\n`;
    const path = conf(dir, text);
    const tokenfile = join(dir, 'token.json');
    const source = new RcloneRemoteSource({ remote: 'gdrive:', configPath: path, tokenfile, endpoints: endpointsOf(google) });
    const client = new DriveClient({ baseUrl: google.driveUrl, auth: source });
    await client.startPageToken();
    assert.equal(readFileSync(path, 'utf8'), text, 'rclone.conf is never written');
    const cached = readTokenFile(tokenfile)!;
    assert.ok(google.validAccessTokens.has(cached.access_token));
    assert.equal(statSync(tokenfile).mode & 0o777, 0o600);
    // A second source (a restart) reuses the cached token instead of refreshing again.
    const refreshes = google.calls.filter((c) => c.form.grant_type === 'refresh_token').length;
    await new RcloneRemoteSource({ remote: 'gdrive', configPath: path, tokenfile, endpoints: endpointsOf(google) }).accessToken();
    assert.equal(google.calls.filter((c) => c.form.grant_type === 'refresh_token').length, refreshes);
    // The remote is authorized again in rclone: its new token wins over scanrelay's cached one.
    const again = google.issueToken();
    writeFileSync(path, text.replace(/^token = .*$/m, `token = ${JSON.stringify(again)}`));
    assert.equal(await new RcloneRemoteSource({ remote: 'gdrive', configPath: path, tokenfile, endpoints: endpointsOf(google) }).accessToken(), again.access_token);
  });

  it('a blank client_id: rclone renews the token (fake rclone on PATH) and it is read again', async () => {
    const dir = tempDir();
    const fresh = google.issueToken();
    const path = conf(dir, `[gdrive]\ntype = drive\nclient_id =\nclient_secret =\nscope = drive\ntoken = ${JSON.stringify({ access_token: 'ya29.expired', token_type: 'Bearer', refresh_token: 'r', expiry: '2020-01-01T00:00:00Z' })}\n`);
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    // What rclone does on "about": refresh with its built-in client and rewrite the token line.
    writeFileSync(
      join(bin, 'rclone'),
      `#!/bin/sh\necho "$@" >> "${join(dir, 'rclone-calls.log')}"\nconf=""\nwhile [ $# -gt 0 ]; do [ "$1" = "--config" ] && conf="$2"; shift; done\n` +
        `sed -i 's|^token = .*|token = {"access_token":"${fresh.access_token}","token_type":"Bearer","refresh_token":"r","expiry":"2999-01-01T00:00:00Z"}|' "$conf"\necho "Total: 15 GiB"\n`,
    );
    chmodSync(join(bin, 'rclone'), 0o755);
    const origPath = process.env.PATH;
    process.env.PATH = `${bin}:${origPath}`;
    try {
      const source = new RcloneRemoteSource({ remote: 'gdrive', configPath: path, tokenfile: join(dir, 'token.json'), endpoints: endpointsOf(google) });
      const client = new DriveClient({ baseUrl: google.driveUrl, auth: source });
      await client.startPageToken();
      assert.equal(readFileSync(join(dir, 'rclone-calls.log'), 'utf8').trim(), `about gdrive: --config ${path}`);
      assert.equal(google.calls.at(-1)!.bearer, fresh.access_token);
    } finally {
      process.env.PATH = origPath;
    }
  });

  it('a blank client_id without rclone installed: says so clearly', async () => {
    const dir = tempDir();
    const path = conf(dir, `[gdrive]\ntype = drive\nclient_id =\ntoken = {"access_token":"x","token_type":"Bearer","refresh_token":"r","expiry":"2020-01-01T00:00:00Z"}\n`);
    const source = new RcloneRemoteSource({ remote: 'gdrive', configPath: path, binary: join(dir, 'no-rclone-here'), tokenfile: join(dir, 't.json'), endpoints: endpointsOf(google) });
    await assert.rejects(source.accessToken(), (e: Error) => e instanceof UserError && /blank client_id/.test(e.message) && /not installed/.test(e.message));
  });

  it('a missing remote or a non-drive remote is a clear config error', () => {
    const dir = tempDir();
    const path = conf(dir, `[crypt]\ntype = crypt\n`);
    const opts = { configPath: path, tokenfile: join(dir, 't.json'), endpoints: endpointsOf(google) };
    assert.throws(() => new RcloneRemoteSource({ remote: 'gdrive', ...opts }), /no remote \[gdrive\]/);
    assert.throws(() => new RcloneRemoteSource({ remote: 'crypt:', ...opts }), /not "drive"/);
  });
});
