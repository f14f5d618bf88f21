import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeGoogle } from '../fakes/google.ts';
import { CLI, tempDir, waitFor } from '../helpers/relay.ts';

let google: FakeGoogle;
before(async () => {
  google = await new FakeGoogle().start();
});
after(() => google.stop());

function startAuthorize(opts: { args?: string[]; google?: Record<string, unknown>; existingToken?: string } = {}) {
  const dir = tempDir('scanrelay-auth-');
  const configPath = join(dir, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      SERVER_PASS: 'x',
      GOOGLE: { ENABLED: true, CLIENT_ID: google.client.id, CLIENT_SECRET: google.client.secret, OAUTH_AUTH_URL: google.authUrl, OAUTH_TOKEN_URL: google.tokenUrl, DRIVE_API_URL: google.driveUrl, ...opts.google },
    }),
  );
  const tokenfile = join(dir, 'token.json');
  if (opts.existingToken) writeFileSync(tokenfile, opts.existingToken, { mode: 0o600 });
  const proc = spawn(process.execPath, [CLI, '--config', configPath, '--tokenfile', tokenfile, 'authorize', ...(opts.args ?? [])], {
    env: { ...process.env, SCANRELAY_LOGLEVEL: 'info' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += d));
  proc.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  const out = { stdout: () => stdout, stderr: () => stderr };
  return {
    proc,
    tokenfile,
    out,
    exited,
    async authUrl(): Promise<URL> {
      const line = await waitFor(() => stdout.split('\n').find((l) => l.startsWith(google.authUrl)), 30_000, 'the authorization URL');
      await waitFor(() => stdout.includes('Enter authorization code:'), 10_000, 'the prompt');
      return new URL(line!);
    },
    logs: () =>
      stdout.split('\n').flatMap((l) => {
        try {
          return [JSON.parse(l.slice(l.indexOf('{')))];
        } catch {
          return [];
        }
      }),
  };
}

function assertSaved(run: ReturnType<typeof startAuthorize>, redirectUri: string) {
  const token = JSON.parse(readFileSync(run.tokenfile, 'utf8'));
  assert.ok(google.validAccessTokens.has(token.access_token));
  assert.ok(token.refresh_token);
  assert.equal(statSync(run.tokenfile).mode & 0o777, 0o600);
  const exchange = google.calls.filter((c) => c.form.grant_type === 'authorization_code').at(-1)!;
  assert.equal(exchange.form.redirect_uri, redirectUri, 'the exchange repeats the redirect_uri');
  const msgs = run.logs().map((e) => `${e.component}: ${e.msg}`);
  assert.ok(msgs.includes('drive: Requesting access token for auth code'), msgs.join('\n'));
  assert.ok(msgs.includes('drive: Retrieved first access token'));
  assert.ok(msgs.some((m) => m.startsWith('scan: Access tokens were successfully retrieved')));
  assert.match(run.out.stdout(), /Restart the relay/);
}

describe('scanrelay authorize', () => {
  it('loopback: prints the URL with the right parameters and finishes by itself when the browser returns', async () => {
    const run = startAuthorize();
    const url = await run.authUrl();
    const p = url.searchParams;
    assert.equal(p.get('scope'), 'https://www.googleapis.com/auth/drive');
    assert.equal(p.get('response_type'), 'code');
    assert.equal(p.get('client_id'), google.client.id);
    assert.equal(p.get('access_type'), 'offline');
    assert.equal(p.get('prompt'), 'consent');
    assert.match(p.get('redirect_uri')!, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    // The "browser": consent redirects to the loopback address.
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.equal(await run.exited, 0, run.out.stderr());
    assertSaved(run, p.get('redirect_uri')!);
  });

  it('headless: accepts the whole address the browser ended on', async () => {
    const run = startAuthorize();
    const url = await run.authUrl();
    const consent = await fetch(url, { redirect: 'manual' });
    const landed = consent.headers.get('location')!;
    // The browser was elsewhere: the loopback address is never reached, the user pastes it.
    run.proc.stdin.write(`${landed}\n`);
    assert.equal(await run.exited, 0, run.out.stderr());
    assertSaved(run, url.searchParams.get('redirect_uri')!);
  });

  it('headless: accepts the bare code', async () => {
    const run = startAuthorize();
    const url = await run.authUrl();
    const landed = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!);
    run.proc.stdin.write(`  ${landed.searchParams.get('code')}  \n`);
    assert.equal(await run.exited, 0, run.out.stderr());
    assertSaved(run, url.searchParams.get('redirect_uri')!);
  });

  it('--oob: the spec\'s URL parameters exactly, the prompt, and the pasted code', async () => {
    const run = startAuthorize({ args: ['--oob'] });
    const url = await run.authUrl();
    assert.equal(`${url.origin}${url.pathname}`, google.authUrl);
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      scope: 'https://www.googleapis.com/auth/drive',
      redirect_uri: 'urn:ietf:wg:oauth:2.0:oob',
      response_type: 'code',
      client_id: google.client.id,
      access_type: 'offline',
    });
    assert.match(run.out.stdout(), /Enter authorization code:/);
    const page = await (await fetch(url)).text();
    const code = /Success code=([^<]+)</.exec(page)![1]!;
    run.proc.stdin.write(`${code}\n`);
    assert.equal(await run.exited, 0, run.out.stderr());
    assertSaved(run, 'urn:ietf:wg:oauth:2.0:oob');
  });

  it('a bad code: clear message, non-zero exit, the existing token untouched', async () => {
    const existing = '{"access_token":"ya29.keep-me","refresh_token":"1//keep"}\n';
    const run = startAuthorize({ args: ['--oob'], existingToken: existing });
    await run.authUrl();
    run.proc.stdin.write('4/not-a-real-code\n');
    const code = await run.exited;
    assert.notEqual(code, 0);
    assert.match(run.out.stderr(), /authorization failed.*invalid_grant/);
    assert.equal(readFileSync(run.tokenfile, 'utf8'), existing);
  });

  it('an empty CLIENT_ID: clear message and non-zero exit before any URL', async () => {
    const run = startAuthorize({ google: { CLIENT_ID: '' } });
    run.proc.stdin.end();
    assert.notEqual(await run.exited, 0);
    assert.match(run.out.stderr(), /GOOGLE\.CLIENT_ID is empty/);
    assert.doesNotMatch(run.out.stdout(), /oauth2\/auth/);
  });

  it('a network failure at the token endpoint: clear message, non-zero exit, token untouched', async () => {
    const existing = '{"access_token":"ya29.keep-me"}\n';
    const run = startAuthorize({ args: ['--oob'], google: { OAUTH_TOKEN_URL: 'http://127.0.0.1:9/token' }, existingToken: existing });
    await run.authUrl();
    run.proc.stdin.write('4/some-code\n');
    assert.notEqual(await run.exited, 0);
    assert.match(run.out.stderr(), /cannot reach the token endpoint/);
    assert.equal(readFileSync(run.tokenfile, 'utf8'), existing);
  });
});
