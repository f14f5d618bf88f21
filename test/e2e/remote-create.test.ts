import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parsePaste } from '../../src/google/rclone-paste.ts';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google-remote.ts';
import { rcloneContinue, rcloneCreate, rcloneDump, rcloneShow } from '../helpers/rclone.ts';
import { CLI, tempDir } from '../helpers/relay.ts';

/** The non-interactive half: `remote create`, `authorize drive <blob>`, refusals. */

const CLIENT_ID = '123-abc.apps.googleusercontent.com';
const TOKEN = { access_token: 'ya29.fake-access', token_type: 'Bearer', refresh_token: '1//0gFAKE', expiry: '2030-01-02T03:04:05.123Z' };
const TOKEN_JSON = JSON.stringify(TOKEN);

let google: FakeGoogle;
before(async () => {
  google = await startFakeGoogle();
});
after(async () => google.close());

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI; onStdout sees output as it comes (to play the browser). */
function cli(args: string[], opts: { env?: NodeJS.ProcessEnv; onStdout?: (all: string) => void } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, SCANRELAY_OAUTH_AUTH_URL: google.authUrl, SCANRELAY_OAUTH_TOKEN_URL: google.tokenUrl, SCANRELAY_OAUTH_PORT: '0', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      opts.onStdout?.(stdout);
    });
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('remote create writes what rclone writes for the same answers, keeping the rest of the file', async () => {
  const dir = tempDir('scanrelay-create-');
  const conf = join(dir, 'rclone.conf');
  writeFileSync(conf, '# mine\n[media]\ntype = local\n');
  writeFileSync(join(dir, 'token.json'), `${JSON.stringify(TOKEN, null, 2)}\n`);
  const r = await cli(['remote', 'create', 'cloud', '--client-id', CLIENT_ID, '--client-secret', 'sek', '--scope', 'drive', '--token-file', join(dir, 'token.json'), '--rclone-config', conf, '--non-interactive']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /created remote "cloud"/);
  // Real rclone, same answers, same token, headless: the same section.
  const ref = join(tempDir('scanrelay-ref-'), 'rclone.conf');
  const q1 = rcloneCreate(ref, 'cloud', { client_id: CLIENT_ID, client_secret: 'sek', scope: 'drive' });
  const q2 = rcloneContinue(ref, 'cloud', q1.State, 'false');
  const q3 = rcloneContinue(ref, 'cloud', q2.State, TOKEN_JSON);
  rcloneContinue(ref, 'cloud', q3.State, 'false');
  const ours = readFileSync(conf, 'utf8');
  const before = '# mine\n[media]\ntype = local\n\n';
  assert.ok(ours.startsWith(before), 'the existing remote and comment are kept byte for byte');
  // rclone writes the k=v answers of `config create` in Go map order, which changes from run to run:
  // the section must hold the same lines, in any order.
  assert.deepEqual(ours.slice(before.length).split('\n').sort(), readFileSync(ref, 'utf8').split('\n').sort());
  assert.deepEqual(rcloneDump(conf).cloud, { type: 'drive', client_id: CLIENT_ID, client_secret: 'sek', scope: 'drive', token: TOKEN_JSON, team_drive: '' });
});

test('remote create with a shared drive and a pasted rclone answer as the token file', async () => {
  const dir = tempDir('scanrelay-create-');
  const conf = join(dir, 'rclone.conf');
  const blob = Buffer.from(JSON.stringify({ token: TOKEN_JSON })).toString('base64').replace(/=+$/, '');
  writeFileSync(join(dir, 'paste.txt'), `Paste the following into your remote machine --->\n${blob}\n<---End paste\n`);
  const r = await cli(['remote', 'create', 'td', '--scope', '2', '--token-file', join(dir, 'paste.txt'), '--team-drive', '0ABCteam', '--rclone-config', conf]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(rcloneDump(conf).td, { type: 'drive', scope: 'drive.readonly', token: TOKEN_JSON, team_drive: '0ABCteam' });
  assert.match(rcloneShow(conf, 'td'), /team_drive = 0ABCteam/);
});

test('remote create refuses a bad name, an existing name, a bad token file and an encrypted config', async () => {
  const dir = tempDir('scanrelay-create-');
  const conf = join(dir, 'rclone.conf');
  writeFileSync(conf, '[cloud]\ntype = drive\n');
  writeFileSync(join(dir, 't.json'), TOKEN_JSON);
  writeFileSync(join(dir, 'bad.json'), '{"token_type":"Bearer"}');
  const bad = await cli(['remote', 'create', 'a+b', '--token-file', join(dir, 't.json'), '--rclone-config', conf]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /remote name "a\+b": config name contains invalid characters/);
  const dup = await cli(['remote', 'create', 'cloud', '--token-file', join(dir, 't.json'), '--rclone-config', conf]);
  assert.equal(dup.code, 2);
  assert.match(dup.stderr, /remote "cloud" already exists/);
  const tok = await cli(['remote', 'create', 'x', '--token-file', join(dir, 'bad.json'), '--rclone-config', conf]);
  assert.equal(tok.code, 2);
  assert.match(tok.stderr, /access_token/);
  const none = await cli(['remote', 'create', 'x', '--rclone-config', conf]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /--token-file .* or --service-account-file/);
  assert.equal(readFileSync(conf, 'utf8'), '[cloud]\ntype = drive\n', 'nothing written on refusal');

  const enc = join(dir, 'enc.conf');
  writeFileSync(enc, '# Encrypted rclone configuration File\n\nRCLONE_ENCRYPT_V0:\nZm9vYmFy\n');
  for (const args of [['remote', 'create', 'x', '--token-file', join(dir, 't.json'), '--rclone-config', enc], ['remote', '--rclone-config', enc]]) {
    const r = await cli(args);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /encrypted rclone config \(RCLONE_ENCRYPT_V0\): scanrelay cannot read or edit it/);
  }
});

test('remote without a terminal says how to script it', async () => {
  const r = await cli(['remote', '--rclone-config', join(tempDir('scanrelay-create-'), 'r.conf')]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /needs a terminal.*remote create/);
});

test('authorize drive <blob> with a client id: loopback flow, answer that real rclone accepts at config_token', async () => {
  const ref = join(tempDir('scanrelay-ref-'), 'rclone.conf');
  const q1 = rcloneCreate(ref, 'gd', { client_id: CLIENT_ID, client_secret: 'sek', scope: 'drive' });
  const q2 = rcloneContinue(ref, 'gd', q1.State, 'false');
  const blob = /rclone authorize "drive" "([^"]+)"/.exec(q2.Option!.Help)![1];
  let browsed: Promise<Response> | undefined;
  const r = await cli(['authorize', 'drive', blob], {
    onStdout: (all) => {
      const m = /go to the following link: (\S+)/.exec(all);
      if (m && !browsed) browsed = fetch(m[1]);
    },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal((await browsed!).status, 200);
  const auth = google.calls.filter((c) => c.path === '/o/oauth2/auth').pop()!;
  assert.equal(auth.query.client_id, CLIENT_ID);
  assert.equal(auth.query.scope, 'https://www.googleapis.com/auth/drive');
  assert.match(r.stdout, /Paste the following into your remote machine --->\n[A-Za-z0-9+/]+\n<---End paste\n$/);
  const pasted = parsePaste(r.stdout);
  assert.equal(pasted.form, 'configmap');
  // Real rclone takes the answer at config_token> and stores the token.
  const body = r.stdout.split('--->\n')[1].split('\n')[0];
  const q3 = rcloneContinue(ref, 'gd', q2.State, body);
  assert.equal(q3.Error, '');
  rcloneContinue(ref, 'gd', q3.State, 'false');
  const token = JSON.parse(rcloneDump(ref).gd.token);
  assert.match(token.access_token, /^ya29\.fake-access-\d+$/);
  assert.equal(token.token_type, 'Bearer');
  assert.match(token.refresh_token, /^1\/\/fake-refresh-/);
  assert.deepEqual(JSON.parse(pasted.tokenText), token);
});

test('authorize drive without a client id and without rclone explains; a bad blob is refused', async () => {
  const noRclone = await cli(['authorize', 'drive', 'eyJzY29wZSI6ImRyaXZlIn0'], { env: { PATH: '' } });
  assert.equal(noRclone.code, 2);
  assert.match(noRclone.stderr, /rclone's own client id, which only rclone itself may use, and rclone is not installed here.*your own client id/);
  const garbage = await cli(['authorize', 'drive', 'not a blob!']);
  assert.equal(garbage.code, 2);
  assert.match(garbage.stderr, /not one that rclone prints/);
  const other = await cli(['authorize', 'onedrive', 'eyJ9']);
  assert.equal(other.code, 2);
  assert.match(other.stderr, /only "drive" remotes/);
});

test('authorize drive without a client id hands over to rclone authorize when rclone is installed', async () => {
  const dir = tempDir('scanrelay-create-');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  // A stand-in for rclone that records its arguments and prints what rclone authorize prints.
  writeFileSync(join(bin, 'rclone'), `#!/bin/sh\nprintf '%s\\n' "$@" > ${join(dir, 'args')}\necho "Paste the following into your remote machine --->"\necho "eyJ0b2tlbiI6Int9In0"\necho "<---End paste"\n`, { mode: 0o755 });
  const r = await cli(['authorize', 'drive', 'eyJzY29wZSI6ImRyaXZlIn0'], { env: { PATH: `${bin}:${process.env.PATH}` } });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(readFileSync(join(dir, 'args'), 'utf8').split('\n').filter(Boolean), ['authorize', 'drive', 'eyJzY29wZSI6ImRyaXZlIn0']);
  assert.match(r.stdout, /rclone's own client id: running rclone authorize\.\nPaste the following into your remote machine --->\neyJ0b2tlbiI6Int9In0\n<---End paste\n$/);
});
