import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { authorizeBlob, authorizeCommand, decodeConfigMap, encodeConfigMap } from '../../src/google/rclone-blob.ts';
import { parsePaste, pasteBlock, PasteError } from '../../src/google/rclone-paste.ts';
import { formatToken, parseToken } from '../../src/google/rclone-token.ts';
import { rcloneAuthorizeLine, rcloneContinue, rcloneCreate, rcloneDump } from '../helpers/rclone.ts';
import { tempDir } from '../helpers/relay.ts';

// The same answers given to real rclone and to our blob function must print the same command.
const CASES: Array<{ name: string; options: Record<string, string> }> = [
  { name: 'client id, secret and scope', options: { client_id: 'abc.apps.googleusercontent.com', client_secret: 'sek', scope: 'drive' } },
  { name: 'scope only (blank client id)', options: { scope: 'drive.readonly' } },
  { name: 'appfolder scope sets root_folder_id', options: { scope: 'drive.appfolder' } },
  { name: 'root folder and advanced options', options: { client_id: 'x.apps.googleusercontent.com', scope: 'drive', root_folder_id: '0AbCdEf', shared_with_me: 'true', impersonate: 'me@example.com' } },
  { name: 'advanced options left at their defaults are not sent', options: { scope: 'drive', use_trash: 'true', chunk_size: '8Mi', list_chunk: '1000' } },
  { name: 'characters Go escapes in JSON', options: { client_id: 'a<b>&c', scope: 'drive' } },
];

for (const c of CASES) {
  test(`blob matches rclone's: ${c.name}`, () => {
    const conf = join(tempDir('scanrelay-blob-'), 'rclone.conf');
    const line = rcloneAuthorizeLine(conf, 'gd', c.options);
    // rclone's drive config adds root_folder_id=appDataFolder for the appfolder scope before asking.
    const remote = { ...rcloneDump(conf).gd };
    assert.equal(authorizeCommand(remote), line);
    if (c.options.scope === 'drive.appfolder') assert.equal(remote.root_folder_id, 'appDataFolder');
  });
}

test('with nothing non-default the command has no blob, as rclone prints it', () => {
  assert.equal(authorizeCommand({ type: 'drive', client_id: '', scope: '' }), 'rclone authorize "drive"');
  // rclone with no options at all: the same line.
  const conf = join(tempDir('scanrelay-blob-'), 'rclone.conf');
  assert.equal(rcloneAuthorizeLine(conf, 'gd', {}), 'rclone authorize "drive"');
});

test('the blob is base64 without padding of sorted JSON, and decodes back', () => {
  const blob = authorizeBlob({ scope: 'drive', client_id: 'abc', token: '{"x":1}', type: 'drive' });
  assert.ok(!blob.includes('='));
  assert.equal(Buffer.from(blob, 'base64').toString(), '{"client_id":"abc","scope":"drive"}');
  assert.deepEqual(decodeConfigMap(blob), { client_id: 'abc', scope: 'drive' });
  assert.equal(encodeConfigMap({}), '');
});

const TOKEN = { access_token: 'ya29.a', token_type: 'Bearer', refresh_token: '1//r', expiry: '2030-01-02T03:04:05.123Z' };
const TOKEN_JSON = JSON.stringify(TOKEN);

test('paste: base64 config-map form, with and without markers and stray whitespace', () => {
  const blob = encodeConfigMap({ token: TOKEN_JSON });
  for (const text of [
    blob,
    `Paste the following into your remote machine --->\n${blob}\n<---End paste\n`,
    `  Paste the following into your remote machine ---> ${blob.slice(0, 20)}\n ${blob.slice(20)}   <---End paste`,
  ]) {
    const r = parsePaste(text);
    assert.equal(r.form, 'configmap');
    assert.equal(r.tokenText, TOKEN_JSON);
    assert.deepEqual(r.options, {});
  }
});

test('paste: plain token JSON form, with markers', () => {
  const r = parsePaste(`Paste the following into your remote machine --->\n${TOKEN_JSON}\n<---End paste`);
  assert.equal(r.form, 'token-json');
  assert.deepEqual(r.token, TOKEN);
  assert.equal(r.tokenText, TOKEN_JSON);
});

test('paste: other keys of the config map are kept for the remote', () => {
  const r = parsePaste(encodeConfigMap({ token: TOKEN_JSON, root_folder_id: 'abc' }));
  assert.deepEqual(r.options, { root_folder_id: 'abc' });
});

test('paste: bad pastes say why', () => {
  assert.throws(() => parsePaste(''), (e: Error) => e instanceof PasteError && /nothing was pasted/.test(e.message));
  assert.throws(() => parsePaste('not base64 !!'), /not base64/);
  assert.throws(() => parsePaste(encodeConfigMap({ other: 'x' })), /holds no token/);
  assert.throws(() => parsePaste('{"token_type":"Bearer"}'), /access_token/);
  assert.throws(() => parsePaste('{"access_token":"a","expiry":"yesterday"}'), /RFC 3339/);
  assert.throws(() => parsePaste(Buffer.from('[1]').toString('base64')), /not an object/);
});

test('token: one-line JSON in rclone order; expires_in becomes an RFC 3339 expiry', () => {
  const t = parseToken('{"expires_in":3600,"token_type":"Bearer","access_token":"a","refresh_token":"r","scope":"x"}', Date.parse('2030-01-01T00:00:00Z'));
  assert.equal(formatToken(t), '{"access_token":"a","token_type":"Bearer","refresh_token":"r","expiry":"2030-01-01T01:00:00.000Z"}');
});

test('real rclone accepts what scanrelay authorize drive prints at config_token', () => {
  const conf = join(tempDir('scanrelay-blob-'), 'rclone.conf');
  const first = rcloneCreate(conf, 'gd', { client_id: 'abc.apps.googleusercontent.com', client_secret: 'sek', scope: 'drive' });
  const second = rcloneContinue(conf, 'gd', first.State, 'false');
  assert.equal(second.Option?.Name, 'config_token');
  const block = pasteBlock({ token: TOKEN_JSON });
  const body = block.split('\n')[1];
  const third = rcloneContinue(conf, 'gd', second.State, body);
  assert.equal(third.Error, '');
  assert.equal(third.Option?.Name, 'config_change_team_drive');
  rcloneContinue(conf, 'gd', third.State, 'false');
  const gd = rcloneDump(conf).gd;
  assert.deepEqual(JSON.parse(gd.token), TOKEN);
  assert.equal(gd.team_drive, '');
});
