import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  deleteRemote,
  editRemote,
  findRemote,
  isEncryptedConf,
  listRemotes,
  parseRcloneConf,
  readRcloneConf,
  renameRemote,
  updateRemote,
  writeRcloneConf,
} from '../../src/google/rclone-conf.ts';
import { tempDir } from '../helpers/relay.ts';
import { rcloneDump, rcloneListRemotes } from '../helpers/rclone.ts';

/** What our reader makes of a file, in `rclone config dump`'s shape. */
function ourDump(text: string): Record<string, Record<string, string>> {
  const conf = parseRcloneConf(text);
  return Object.fromEntries(listRemotes(conf).map((n) => [n, findRemote(conf, n)!]));
}

function writeTemp(text: string, name = 'rclone.conf'): string {
  const file = join(tempDir('scanrelay-rclone-'), name);
  writeFileSync(file, text);
  return file;
}

// The rclone.conf quirks in docs/protocols.md section 7, each checked against real rclone.
const QUIRKS = [
  'top = before any section',
  '[gdrive]',
  'type = drive',
  'root_folder_id = 0AbC;not-a-comment',
  'description = path with # hash',
  'nounc = true',
  'q = "quoted value"',
  'bt = `back`',
  'trip = """tri"""',
  'token = {"access_token":"ya29.x","token_type":"Bearer","refresh_token":"1//y","expiry":"2024-01-02T03:04:05.123456789Z"}',
  '# a comment = not a key',
  '; another comment',
  '  spaced   =   value with  inner  spaces   ',
  'colon: value:with:colons',
  'eq=a=b=c',
  'Key_Upper = Case',
  'empty =',
  'dup = first',
  'dup = last',
  '"quoted key" = qk',
  '[ Media Crypt ]',
  'type=crypt',
  'remote = gdrive:media',
  '[gdrive]',
  'merged = from second block',
  '[empty]',
  '',
].join('\n');

test('the reader agrees with rclone config dump on every quirk', () => {
  const file = writeTemp(QUIRKS);
  assert.deepEqual(ourDump(QUIRKS), rcloneDump(file));
  assert.deepEqual(listRemotes(parseRcloneConf(QUIRKS)).map((n) => `${n}:`), rcloneListRemotes(file));
  // A few values spelled out, so a shared mistake cannot hide.
  const gdrive = findRemote(parseRcloneConf(QUIRKS), 'gdrive')!;
  assert.equal(gdrive.root_folder_id, '0AbC;not-a-comment');
  assert.equal(gdrive.description, 'path with # hash');
  assert.equal(gdrive.q, '"quoted value"');
  assert.equal(gdrive.bt, 'back');
  assert.equal(gdrive.trip, 'tri');
  assert.equal(gdrive.dup, 'last');
  assert.equal(gdrive.merged, 'from second block');
  assert.equal(gdrive.colon, 'value:with:colons');
  assert.equal(gdrive.eq, 'a=b=c');
  assert.equal(gdrive.empty, '');
  assert.equal(JSON.parse(gdrive.token).refresh_token, '1//y');
});

test('CRLF line endings and a byte order mark read as rclone reads them', () => {
  const text = '\uFEFF[bom]\r\na = 1 \r\n[crlf]\r\nb = two\r\n';
  assert.deepEqual(ourDump(text), rcloneDump(writeTemp(text)));
});

test('a line rclone cannot parse is refused with its line number', () => {
  const text = '[x]\ntype = local\nnoequals\n';
  assert.throws(() => execFileSync('rclone', ['--config', writeTemp(text), 'config', 'dump'], { stdio: 'pipe' }));
  assert.throws(() => parseRcloneConf(text, 'f.conf'), /f\.conf line 3: rclone cannot parse this line: noequals/);
});

test('an encrypted config is detected and refused clearly', () => {
  const text = '# Encrypted rclone configuration File\n\nRCLONE_ENCRYPT_V0:\nAAAAbase64stuff\n';
  assert.equal(isEncryptedConf(text), true);
  assert.throws(() => readRcloneConf(writeTemp(text)), /encrypted rclone config \(RCLONE_ENCRYPT_V0\).*rclone config/);
});

const BASE = ['# my remotes', '', '[media]', 'type = local', '; keep me', 'nounc = true', '', '# about gd', '[gd]', 'type = drive', 'scope = drive', 'client_id = old', '', '# trailing comment', '[z]', 'type = alias', 'remote = media:', ''].join('\n');

test('adding a remote appends it and keeps every existing byte', () => {
  const out = editRemote(BASE, 'new one', { set: [['type', 'drive'], ['scope', 'drive'], ['team_drive', '']] });
  assert.ok(out.startsWith(BASE));
  assert.equal(out.slice(BASE.length), '\n[new one]\ntype = drive\nscope = drive\nteam_drive = \n\n');
  const file = writeTemp(out);
  assert.deepEqual(rcloneDump(file)['new one'], { type: 'drive', scope: 'drive', team_drive: '' });
  assert.deepEqual(ourDump(out), rcloneDump(file));
});

test('adding to a file without a final newline or blank line separates the section', () => {
  const out = editRemote('[a]\ntype = local', 'b', { set: [['type', 'local']] });
  assert.equal(out, '[a]\ntype = local\n\n[b]\ntype = local\n\n');
  assert.equal(editRemote('', 'b', { set: [['type', 'local']] }), '[b]\ntype = local\n\n');
});

test('editing one remote rewrites only its changed lines and adds new keys after its last option', () => {
  const out = editRemote(BASE, 'gd', { set: [['client_id', 'new.apps.googleusercontent.com'], ['token', '{"access_token":"a"}'], ['team_drive', '']] });
  const expected = BASE.replace('client_id = old\n', 'client_id = new.apps.googleusercontent.com\ntoken = {"access_token":"a"}\nteam_drive = \n');
  assert.equal(out, expected);
  const dump = rcloneDump(writeTemp(out));
  assert.equal(dump.gd.client_id, 'new.apps.googleusercontent.com');
  assert.equal(dump.gd.token, '{"access_token":"a"}');
  assert.deepEqual(dump.media, { type: 'local', nounc: 'true' });
});

test('editing rewrites the last of duplicate keys, so the new value wins in rclone too', () => {
  const text = '[d]\ntype = drive\nscope = one\nscope = two\n';
  const out = editRemote(text, 'd', { set: [['scope', 'three']] });
  assert.equal(out, '[d]\ntype = drive\nscope = one\nscope = three\n');
  assert.equal(rcloneDump(writeTemp(out)).d.scope, 'three');
});

test('unsetting a key removes its lines only', () => {
  const out = editRemote(BASE, 'gd', { unset: ['client_id'] });
  assert.equal(out, BASE.replace('client_id = old\n', ''));
});

test('deleting a remote keeps comments that introduce the next remote, and everything else', () => {
  const out = deleteRemote(BASE, 'gd');
  assert.equal(out, BASE.replace('[gd]\ntype = drive\nscope = drive\nclient_id = old\n\n', ''));
  const dump = rcloneDump(writeTemp(out));
  assert.deepEqual(Object.keys(dump), ['media', 'z']);
  assert.ok(out.includes('# about gd\n# trailing comment\n[z]'));
});

test('deleting a remote split over two blocks removes both', () => {
  const text = '[a]\ntype = local\n\n[b]\ntype = local\n\n[a]\nextra = 1\n';
  assert.equal(deleteRemote(text, 'a'), '[b]\ntype = local\n\n');
});

test('renaming rewrites the header only', () => {
  const out = renameRemote(BASE, 'gd', 'cloud');
  assert.equal(out, BASE.replace('[gd]', '[cloud]'));
  assert.throws(() => renameRemote(BASE, 'gd', 'media'), /already exists/);
  assert.throws(() => renameRemote(BASE, 'nope', 'x'), /no remote named "nope"/);
});

test('values rclone would read back differently are refused', () => {
  assert.throws(() => editRemote('', 'x', { set: [['a', ' lead']] }), /trims/);
  assert.throws(() => editRemote('', 'x', { set: [['a', '`tick']] }), /backtick/);
  assert.throws(() => editRemote('', 'x', { set: [['a', 'two\nlines']] }), /line break/);
  // Quotes inside are fine and stay literal, as rclone keeps them.
  const out = editRemote('', 'x', { set: [['type', 'alias'], ['remote', '"quoted"']] });
  assert.equal(rcloneDump(writeTemp(out)).x.remote, '"quoted"');
});

test('CRLF files keep CRLF on edited and added lines', () => {
  const text = '[a]\r\ntype = local\r\n';
  assert.equal(editRemote(text, 'a', { set: [['type', 'alias'], ['remote', 'x:']] }), '[a]\r\ntype = alias\r\nremote = x:\r\n');
});

test('the write is atomic and leaves mode 0600', () => {
  const dir = tempDir('scanrelay-rclone-');
  const file = join(dir, 'rclone.conf');
  writeFileSync(file, BASE, { mode: 0o644 });
  writeRcloneConf(file, editRemote(BASE, 'n', { set: [['type', 'local']] }));
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.ok(readFileSync(file, 'utf8').startsWith(BASE));
  assert.deepEqual(execFileSync('ls', ['-A', dir], { encoding: 'utf8' }).trim().split('\n'), ['rclone.conf']);
});

test('a file written by real rclone config create is kept byte for byte when we add a remote', () => {
  const dir = tempDir('scanrelay-rclone-');
  const file = join(dir, 'rclone.conf');
  execFileSync('rclone', ['--config', file, 'config', 'create', 'local1', 'local', 'nounc=true'], { stdio: 'pipe' });
  execFileSync('rclone', ['--config', file, 'config', 'create', 'al', 'alias', 'remote=local1:/x'], { stdio: 'pipe' });
  const original = readFileSync(file, 'utf8');
  writeRcloneConf(file, editRemote(original, 'cloud', { set: [['type', 'drive'], ['scope', 'drive'], ['team_drive', '']] }));
  const after = readFileSync(file, 'utf8');
  assert.equal(after.slice(0, original.length), original);
  assert.deepEqual(rcloneDump(file), {
    al: { type: 'alias', remote: 'local1:/x' },
    cloud: { type: 'drive', scope: 'drive', team_drive: '' },
    local1: { type: 'local', nounc: 'true' },
  });
});

test('updateRemote rewrites one option of an existing remote in place (a refreshed token)', () => {
  const file = writeTemp(BASE);
  updateRemote(file, 'gd', { set: [['client_id', 'refreshed']] });
  assert.equal(readFileSync(file, 'utf8'), BASE.replace('client_id = old', 'client_id = refreshed'));
  assert.throws(() => updateRemote(file, 'nope', { set: [['a', 'b']] }), /no remote named "nope"/);
});
