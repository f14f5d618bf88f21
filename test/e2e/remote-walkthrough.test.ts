import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { advancedDriveOptions } from '../../src/google/rclone-drive-options.ts';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google-remote.ts';
import { rcloneAuthorizeLine, rcloneContinue, rcloneCreate, rcloneDump, rcloneListRemotes, rcloneShow } from '../helpers/rclone.ts';
import { CLI, ROOT, tempDir } from '../helpers/relay.ts';
import { Terminal } from '../helpers/tmux.ts';

/**
 * `scanrelay remote` driven in a real terminal (tmux) through the spec's 14 steps; every file it writes is
 * read back with Debian's real rclone. Network only to the fake Google on 127.0.0.1.
 */

const CLIENT_ID = '123-abc.apps.googleusercontent.com';
const TOKEN = { access_token: 'ya29.fake-access', token_type: 'Bearer', refresh_token: '1//0gFAKE-refresh', expiry: '2030-01-02T03:04:05.123Z' };
const TOKEN_JSON = JSON.stringify(TOKEN);
const TOKEN_BLOB = Buffer.from(JSON.stringify({ token: TOKEN_JSON })).toString('base64').replace(/=+$/, '');
const base64Paste = () => `Paste the following into your remote machine ---> ${TOKEN_BLOB} <---End paste`;

let google: FakeGoogle;
const terminals: Terminal[] = [];

before(async () => {
  google = await startFakeGoogle({
    drives: [
      { id: '0AAAmovies', name: 'Movies' },
      { id: '0BBBtv', name: 'TV Shows' },
      { id: '0CCCmusic', name: 'Music' },
    ],
  });
});

after(async () => {
  for (const t of terminals) t.close();
  await google.close();
});

function start(opts: { conf: string; dir: string; settings?: string }): Terminal {
  const t = Terminal.start([process.execPath, CLI, 'remote', '--rclone-config', opts.conf], {
    dir: opts.dir,
    cwd: ROOT,
    env: {
      HOME: opts.dir,
      SCANRELAY_SETTINGS: opts.settings ?? join(opts.dir, 'settings.yml'),
      SCANRELAY_OAUTH_AUTH_URL: google.authUrl,
      SCANRELAY_OAUTH_TOKEN_URL: google.tokenUrl,
      SCANRELAY_DRIVE_API_URL: google.driveApiUrl,
      SCANRELAY_OAUTH_PORT: '0',
    },
  });
  terminals.push(t);
  return t;
}

/** The same answers given to real rclone's config state machine, so files can be compared byte for byte. */
function rcloneWrites(options: Record<string, string>, pasted: string): string {
  const conf = join(tempDir('scanrelay-ref-'), 'rclone.conf');
  const q1 = rcloneCreate(conf, 'cloud', options);
  const q2 = rcloneContinue(conf, 'cloud', q1.State, 'false');
  const q3 = rcloneContinue(conf, 'cloud', q2.State, pasted);
  assert.equal(q3.Option?.Name, 'config_change_team_drive');
  rcloneContinue(conf, 'cloud', q3.State, 'false');
  return readFileSync(conf, 'utf8');
}

/**
 * rclone writes the k=v answers of `config create` in Go map order, which changes from run to run, so a
 * section is compared as its set of lines.
 */
function assertSameLines(actual: string, expected: string): void {
  assert.deepEqual(actual.split('\n').sort(), expected.split('\n').sort());
}

function blobOnScreen(screen: string): string {
  const m = /rclone authorize "drive"(?: "[^"]+")?/.exec(screen);
  assert.ok(m, 'the screen shows the rclone authorize command');
  return m[0];
}

test('client id, headless paste in base64 form with markers; invalid name and bad paste are asked again', async () => {
  const dir = tempDir('scanrelay-remote-');
  const conf = join(dir, 'rclone.conf');
  const t = start({ conf, dir });
  await t.answer('n/s/q>', 'n');
  await t.waitForPrompt('name>');
  assert.match(t.screen(), /\? name> \(cloud\)$/, 'the default offered is settings.yml\'s remote, "cloud"');
  await t.answerRefused('name>', 'a+b', 'config name contains invalid characters');
  await t.answer('name>', '');
  await t.answerRefused('Storage>', 's3', 'scanrelay creates only Google Drive remotes');
  await t.answer('Storage>', 'drive');
  await t.answer('client_id>', CLIENT_ID);
  await t.answer('client_secret>', 'GOCSPX-secret-value');
  await t.answer('scope>', '1');
  await t.answer('root_folder_id>', '');
  await t.answer('service_account_file>', '');
  await t.answer('y/n>', 'n'); // Edit advanced config?
  await t.answer('y/n>', 'n'); // Use auto config?
  await t.waitForPrompt('config_token>');
  const shown = blobOnScreen(t.screen());
  const scratch = join(tempDir('scanrelay-ref-'), 'rclone.conf');
  assert.equal(shown, rcloneAuthorizeLine(scratch, 'cloud', { client_id: CLIENT_ID, client_secret: 'GOCSPX-secret-value', scope: 'drive' }));
  assert.ok(t.screen().includes(shown.replace('rclone authorize', 'scanrelay authorize')), 'scanrelay authorize is offered for a machine without rclone');
  await t.answerRefused('config_token>', 'this is not a token', "Couldn't decode response - try again");
  await t.answer('config_token>', base64Paste());
  await t.answer('y/n>', 'n'); // Configure this as a Shared Drive?
  const screenAtConfirm = await t.waitForText('Keep this "cloud" remote?');
  const confirm = screenAtConfirm.slice(screenAtConfirm.lastIndexOf('Configuration complete.'));
  assert.ok(!confirm.includes('GOCSPX-secret-value') && !confirm.includes('1//0gFAKE-refresh'), 'secrets are masked');
  assert.match(confirm, /- client_secret: GOCS\*+/);
  await t.answer('y/e/d>', 'y');
  await t.answer('e/n/d/r/s/q>', 'q');
  assert.equal(await t.exitCode(), 0);

  assert.deepEqual(rcloneDump(conf), {
    cloud: { type: 'drive', client_id: CLIENT_ID, client_secret: 'GOCSPX-secret-value', scope: 'drive', token: TOKEN_JSON, team_drive: '' },
  });
  assert.deepEqual(rcloneListRemotes(conf), ['cloud:']);
  assert.match(rcloneShow(conf, 'cloud'), /^\[cloud\]\ntype = drive\n/);
  assert.equal(statSync(conf).mode & 0o777, 0o600);
  // Byte for byte what real rclone writes for the same answers.
  assertSameLines(readFileSync(conf, 'utf8'), rcloneWrites({ client_id: CLIENT_ID, client_secret: 'GOCSPX-secret-value', scope: 'drive' }, TOKEN_BLOB));
});

test('plain token JSON paste, then a shared drive chosen from the Drive API list', async () => {
  const dir = tempDir('scanrelay-remote-');
  const conf = join(dir, 'rclone.conf');
  const t = start({ conf, dir });
  const callsBefore = google.calls.length;
  await t.answer('n/s/q>', 'n');
  await t.answer('name>', 'gd');
  await t.answer('Storage>', '1');
  await t.answer('client_id>', CLIENT_ID);
  await t.answer('client_secret>', 'sek');
  await t.answer('scope>', 'drive');
  await t.answer('root_folder_id>', 'someFolderId');
  await t.answer('service_account_file>', '');
  await t.answer('y/n>', 'n');
  await t.answer('y/n>', 'n');
  await t.answer('config_token>', TOKEN_JSON);
  await t.answer('y/n>', 'y'); // Configure this as a Shared Drive?
  const list = await t.waitForText('3 / Music');
  assert.match(list, / 1 \/ Movies\n\s+\\ \(0AAAmovies\)\n 2 \/ TV Shows\n\s+\\ \(0BBBtv\)/);
  await t.answer('config_team_drive>', '2');
  await t.answer('y/e/d>', 'y');
  await t.answer('e/n/d/r/s/q>', 'q');
  assert.equal(await t.exitCode(), 0);

  const listed = google.calls.slice(callsBefore).filter((c) => c.path === '/drive/v3/drives');
  assert.equal(listed.length, 2, 'both pages of drives.list were read');
  assert.ok(listed.every((c) => c.authorization === 'Bearer ya29.fake-access'), 'listed with the pasted token');
  assert.equal(listed[1].query.pageToken, '2');
  assert.deepEqual(rcloneDump(conf), {
    gd: { type: 'drive', client_id: CLIENT_ID, client_secret: 'sek', scope: 'drive', root_folder_id: '', token: TOKEN_JSON, team_drive: '0BBBtv' },
  });
  // rclone writes team_drive, then empties root_folder_id in place.
  assert.equal(
    readFileSync(conf, 'utf8'),
    `[gd]\ntype = drive\nclient_id = ${CLIENT_ID}\nclient_secret = sek\nscope = drive\nroot_folder_id = \ntoken = ${TOKEN_JSON}\nteam_drive = 0BBBtv\n\n`,
  );
});

test('blank client id: the low-performance warning, rclone\'s blob, and no scanrelay authorize offer', async () => {
  const dir = tempDir('scanrelay-remote-');
  const conf = join(dir, 'rclone.conf');
  const t = start({ conf, dir });
  await t.answer('n/s/q>', 'n');
  await t.answer('name>', 'cloud');
  await t.answer('Storage>', 'drive');
  await t.answer('client_id>', '');
  await t.answer('client_secret>', '');
  await t.waitForText('performs poorly');
  await t.answerRefused('scope>', '9', 'is not a scope');
  await t.answer('scope>', '2');
  await t.answer('root_folder_id>', '');
  await t.answer('service_account_file>', '');
  await t.answer('y/n>', 'n');
  await t.answer('y/n>', 'n');
  await t.waitForPrompt('config_token>');
  const screen = t.screen();
  assert.equal(blobOnScreen(screen), 'rclone authorize "drive" "eyJzY29wZSI6ImRyaXZlLnJlYWRvbmx5In0"');
  assert.equal(blobOnScreen(screen), rcloneAuthorizeLine(join(tempDir('scanrelay-ref-'), 'r.conf'), 'cloud', { scope: 'drive.readonly' }));
  assert.ok(!screen.includes('scanrelay authorize'), 'rclone\'s own client id needs rclone on the browser machine');
  await t.answer('config_token>', TOKEN_JSON);
  await t.answer('y/n>', '');
  await t.answer('y/e/d>', '');
  await t.answer('e/n/d/r/s/q>', 'q');
  assert.equal(await t.exitCode(), 0);
  assert.deepEqual(rcloneDump(conf), { cloud: { type: 'drive', scope: 'drive.readonly', token: TOKEN_JSON, team_drive: '' } });
  assert.equal(readFileSync(conf, 'utf8'), rcloneWrites({ scope: 'drive.readonly' }, TOKEN_JSON));
});

test('service account file: auth steps skipped, shared drives listed with the service account', async () => {
  const dir = tempDir('scanrelay-remote-');
  const conf = join(dir, 'rclone.conf');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(
    join(dir, 'sa.json'),
    JSON.stringify({ type: 'service_account', project_id: 'p', private_key_id: 'k1', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), client_email: 'relay@p.iam.gserviceaccount.com', client_id: '1', token_uri: 'https://oauth2.googleapis.com/token' }),
  );
  writeFileSync(join(dir, 'not-sa.json'), JSON.stringify({ installed: { client_id: 'x' } }));
  const t = start({ conf, dir });
  const callsBefore = google.calls.length;
  await t.answer('n/s/q>', 'n');
  await t.answer('name>', 'sa');
  await t.answer('Storage>', 'drive');
  await t.answer('client_id>', '');
  await t.answer('client_secret>', '');
  await t.answer('scope>', 'drive');
  await t.answer('root_folder_id>', '');
  await t.answerRefused('service_account_file>', '~/missing.json', 'does not exist');
  await t.answerRefused('service_account_file>', '~/not-sa.json', 'is not a service account key');
  await t.answer('service_account_file>', '~/sa.json');
  await t.answer('y/n>', 'n'); // Edit advanced config?
  await t.waitForText('Configure this as a Shared Drive');
  assert.ok(!t.screen().includes('Use auto config?'), 'steps 10-11 are skipped with a service account');
  await t.answer('y/n>', 'y');
  await t.waitForText('3 / Music');
  await t.answer('config_team_drive>', '1');
  await t.answer('y/e/d>', 'y');
  await t.answer('e/n/d/r/s/q>', 'q');
  assert.equal(await t.exitCode(), 0);
  const calls = google.calls.slice(callsBefore);
  const grant = calls.find((c) => c.path === '/token');
  assert.equal(grant?.form.grant_type, 'urn:ietf:params:oauth:grant-type:jwt-bearer');
  const claims = JSON.parse(Buffer.from(grant!.form.assertion.split('.')[1], 'base64url').toString());
  assert.equal(claims.iss, 'relay@p.iam.gserviceaccount.com');
  assert.equal(claims.scope, 'https://www.googleapis.com/auth/drive');
  assert.ok(calls.some((c) => c.path === '/drive/v3/drives' && /^Bearer ya29\.fake-sa-/.test(c.authorization ?? '')));
  assert.deepEqual(rcloneDump(conf), { sa: { type: 'drive', scope: 'drive', service_account_file: '~/sa.json', team_drive: '0AAAmovies', root_folder_id: '' } });
});

test('edit and delete from the menu keep rclone\'s own file byte for byte elsewhere; s is refused', async () => {
  const dir = tempDir('scanrelay-remote-');
  const conf = join(dir, 'rclone.conf');
  // A file written by real rclone: a local remote, then a drive remote through rclone's own questions.
  execFileSync('rclone', ['--config', conf, 'config', 'create', 'media', 'local', 'nounc=true'], { stdio: 'pipe' });
  const q1 = rcloneCreate(conf, 'gd', { client_id: CLIENT_ID, client_secret: 'sek', scope: 'drive' });
  const q2 = rcloneContinue(conf, 'gd', q1.State, 'false');
  const q3 = rcloneContinue(conf, 'gd', q2.State, TOKEN_JSON);
  rcloneContinue(conf, 'gd', q3.State, 'false');
  const original = readFileSync(conf, 'utf8');
  assert.ok(original.startsWith('[media]\ntype = local\nnounc = true\n\n[gd]\n'));

  const t = start({ conf, dir });
  // Issue 35 item 6: without a settings.yml nothing names a remote, so the wizard starts from the user's own
  // remotes; it does not open by offering to rename "gd" to the default name "cloud".
  await t.waitForText('Current remotes:');
  assert.doesNotMatch(t.screen(), /no such remote|Rename remote "gd"|"cloud"/);
  assert.match(t.screen(), /gd\s+drive\nmedia\s+local/);
  await t.answer('e/n/d/r/s/q>', 's');
  await t.waitForText('Setting a configuration password is not supported by scanrelay');
  await t.answer('e/n/d/r/s/q>', 'e');
  await t.answer('remote>', '1');
  await t.answer('client_id>', ''); // Enter keeps the current value
  await t.answer('client_secret>', 'newsecret');
  await t.answer('scope>', '2');
  await t.answer('root_folder_id>', '');
  await t.answer('service_account_file>', '');
  await t.answer('y/n>', 'y'); // Edit advanced config?
  const offered = advancedDriveOptions().map((o) => o.name);
  assert.ok(offered.includes('shared_with_me') && offered.includes('impersonate') && !offered.includes('team_drive'));
  for (const name of offered) {
    await t.answer(`${name}>`, name === 'shared_with_me' ? 'true' : name === 'impersonate' ? 'me@example.com' : '');
  }
  await t.answer('y/n>', 'n'); // Already have a token - refresh?
  await t.answer('y/n>', 'n'); // Configure this as a Shared Drive?
  await t.answer('y/e/d>', 'y');
  await t.answer('e/n/d/r/s/q>', 'd');
  await t.answer('remote>', 'media');
  await t.waitForText('Deleted remote "media".');
  await t.answer('e/n/d/r/s/q>', 'q');
  assert.equal(await t.exitCode(), 0);

  const expected = original
    .replace('[media]\ntype = local\nnounc = true\n\n', '')
    .replace('client_secret = sek\n', 'client_secret = newsecret\n')
    .replace('scope = drive\n', 'scope = drive.readonly\n')
    .replace('team_drive = \n', 'team_drive = \nshared_with_me = true\nimpersonate = me@example.com\n');
  assert.equal(readFileSync(conf, 'utf8'), expected);
  assert.deepEqual(rcloneDump(conf), {
    gd: { type: 'drive', client_id: CLIENT_ID, client_secret: 'newsecret', scope: 'drive.readonly', token: TOKEN_JSON, team_drive: '', shared_with_me: 'true', impersonate: 'me@example.com' },
  });
  assert.deepEqual(rcloneListRemotes(conf), ['gd:']);
});

test('a new remote added to rclone\'s file keeps that file byte for byte; delete from the confirm step', async () => {
  const dir = tempDir('scanrelay-remote-');
  const conf = join(dir, 'rclone.conf');
  execFileSync('rclone', ['--config', conf, 'config', 'create', 'media', 'local', 'nounc=true'], { stdio: 'pipe' });
  execFileSync('rclone', ['--config', conf, 'config', 'create', 'cloud', 'alias', 'remote=media:/x'], { stdio: 'pipe' });
  writeFileSync(conf, `# kept comment\n${readFileSync(conf, 'utf8')}`);
  const original = readFileSync(conf, 'utf8');
  const t = start({ conf, dir });
  await t.answer('e/n/d/r/s/q>', 'n');
  await t.answerRefused('name>', 'cloud', 'remote "cloud" already exists');
  await t.answer('name>', 'gdrive');
  await t.answer('Storage>', 'drive');
  await t.answer('client_id>', CLIENT_ID);
  await t.answer('client_secret>', 'sek');
  await t.answer('scope>', '4'); // drive.appfolder
  await t.waitForText('root_folder_id is set to appDataFolder');
  await t.answer('service_account_file>', '');
  await t.answer('y/n>', 'n');
  await t.answer('y/n>', 'n');
  await t.answer('config_token>', TOKEN_JSON);
  await t.answer('y/n>', 'n');
  await t.waitForText('Keep this "gdrive" remote?');
  const added = readFileSync(conf, 'utf8');
  assert.equal(added.slice(0, original.length), original);
  assert.deepEqual(rcloneDump(conf).gdrive, { type: 'drive', client_id: CLIENT_ID, client_secret: 'sek', scope: 'drive.appfolder', root_folder_id: 'appDataFolder', token: TOKEN_JSON, team_drive: '' });
  await t.answer('y/e/d>', 'd');
  await t.answer('e/n/d/r/s/q>', 'q');
  assert.equal(await t.exitCode(), 0);
  assert.equal(readFileSync(conf, 'utf8'), original);
});

test('settings.yml names cloud but another drive remote exists: change settings.yml, or rename the remote', async () => {
  const dir = tempDir('scanrelay-remote-');
  const conf = join(dir, 'rclone.conf');
  const settings = join(dir, 'settings.yml');
  writeFileSync(conf, `[gd]\ntype = drive\nscope = drive\ntoken = ${TOKEN_JSON}\n`);
  writeFileSync(settings, '# install\nremote: cloud\nuser: media\n');
  let t = start({ conf, dir, settings });
  await t.waitForText('names the remote "cloud", but rclone.conf has no such remote');
  await t.answer('1/2/3>', '2');
  await t.answer('e/n/d/r/s/q>', 'q');
  assert.equal(await t.exitCode(), 0);
  assert.equal(readFileSync(settings, 'utf8'), '# install\nremote: gd\nuser: media\n');

  writeFileSync(settings, 'remote: cloud\n');
  t = start({ conf, dir, settings });
  await t.answer('1/2/3>', '1');
  await t.waitForText('Renamed remote "gd" to "cloud".');
  await t.answer('e/n/d/r/s/q>', 'q');
  assert.equal(await t.exitCode(), 0);
  assert.equal(readFileSync(conf, 'utf8'), `[cloud]\ntype = drive\nscope = drive\ntoken = ${TOKEN_JSON}\n`);
  assert.deepEqual(rcloneListRemotes(conf), ['cloud:']);
});

test('auto config with a client id: the loopback browser flow on this machine', async () => {
  const dir = tempDir('scanrelay-remote-');
  const conf = join(dir, 'rclone.conf');
  const t = start({ conf, dir });
  const callsBefore = google.calls.length;
  await t.answer('n/s/q>', 'n');
  await t.answer('name>', '');
  await t.answer('Storage>', 'drive');
  await t.answer('client_id>', CLIENT_ID);
  await t.answer('client_secret>', 'sek');
  await t.answer('scope>', '');
  await t.answer('root_folder_id>', '');
  await t.answer('service_account_file>', '');
  await t.answer('y/n>', 'n');
  await t.answer('y/n>', 'y'); // Use auto config?
  const screen = await t.waitForText('Waiting for code...');
  const url = /go to the following link: (\S+)/.exec(screen)![1];
  // The "browser": the fake consent screen redirects to scanrelay's loopback receiver.
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.match(await res.text(), /Success/);
  await t.answer('y/n>', 'n');
  await t.answer('y/e/d>', 'y');
  await t.answer('e/n/d/r/s/q>', 'q');
  assert.equal(await t.exitCode(), 0);
  const auth = google.calls.slice(callsBefore).find((c) => c.path === '/o/oauth2/auth')!;
  assert.equal(auth.query.client_id, CLIENT_ID);
  assert.equal(auth.query.scope, 'https://www.googleapis.com/auth/drive');
  assert.equal(auth.query.access_type, 'offline');
  assert.match(auth.query.redirect_uri, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  const exchange = google.calls.slice(callsBefore).find((c) => c.path === '/token')!;
  assert.equal(exchange.form.client_secret, 'sek');
  assert.equal(exchange.form.redirect_uri, auth.query.redirect_uri);
  const cloud = rcloneDump(conf).cloud;
  const token = JSON.parse(cloud.token);
  assert.deepEqual(Object.keys(token), ['access_token', 'token_type', 'refresh_token', 'expiry']);
  assert.match(token.access_token, /^ya29\.fake-access-\d+$/);
  assert.equal(token.token_type, 'Bearer');
  assert.match(token.refresh_token, /^1\/\/fake-refresh-/);
  assert.ok(Date.parse(token.expiry) > Date.now());
  assert.deepEqual(Object.keys(cloud), ['client_id', 'client_secret', 'team_drive', 'token', 'type']);
});

test('an expired pasted token is refreshed to list shared drives; edit from the confirm step; rename from the menu', async () => {
  const dir = tempDir('scanrelay-remote-');
  const conf = join(dir, 'rclone.conf');
  const expired = JSON.stringify({ ...TOKEN, refresh_token: '1//0gEXPIRED-refresh', expiry: '2020-01-01T00:00:00Z' });
  const t = start({ conf, dir });
  const callsBefore = google.calls.length;
  await t.answer('n/s/q>', 'n');
  await t.answer('name>', 'old');
  await t.answer('Storage>', 'drive');
  await t.answer('client_id>', CLIENT_ID);
  await t.answer('client_secret>', 'sek');
  await t.answer('scope>', '1');
  await t.answer('root_folder_id>', '');
  await t.answer('service_account_file>', '');
  await t.answer('y/n>', 'n');
  await t.answer('y/n>', 'n');
  await t.answer('config_token>', expired);
  await t.answer('y/n>', 'y');
  await t.waitForText('3 / Music');
  await t.answer('config_team_drive>', '3');
  await t.answer('y/e/d>', 'e');
  await t.waitForText('Editing existing "old" remote');
  for (const prompt of ['client_id>', 'client_secret>', 'scope>', 'root_folder_id>', 'service_account_file>']) await t.answer(prompt, '');
  await t.answer('y/n>', 'n'); // Edit advanced config?
  await t.answer('y/n>', 'n'); // Already have a token - refresh?
  await t.waitForText('Change current Shared Drive (Team Drive) ID "0CCCmusic"?');
  await t.answer('y/n>', 'n');
  await t.answer('y/e/d>', 'y');
  await t.answer('e/n/d/r/s/q>', 'r');
  await t.answer('remote>', 'old');
  await t.answerRefused('name>', 'bad name ', 'cannot end with a space');
  await t.answer('name>', 'new name');
  await t.waitForText('Renamed remote "old" to "new name".');
  await t.answer('e/n/d/r/s/q>', 'q');
  assert.equal(await t.exitCode(), 0);

  const calls = google.calls.slice(callsBefore);
  const refresh = calls.find((c) => c.path === '/token')!;
  assert.equal(refresh.form.grant_type, 'refresh_token');
  assert.equal(refresh.form.refresh_token, '1//0gEXPIRED-refresh');
  assert.equal(refresh.form.client_id, CLIENT_ID);
  const listed = calls.filter((c) => c.path === '/drive/v3/drives');
  assert.ok(listed.length >= 1 && listed.every((c) => /^Bearer ya29\.fake-refreshed-\d+$/.test(c.authorization ?? '')));
  const dump = rcloneDump(conf);
  assert.deepEqual(Object.keys(dump), ['new name']);
  const remote = dump['new name'];
  const token = JSON.parse(remote.token);
  assert.equal(token.access_token, listed[0].authorization!.slice('Bearer '.length), 'the refreshed token is saved, as rclone does');
  assert.equal(token.refresh_token, '1//0gEXPIRED-refresh');
  assert.ok(Date.parse(token.expiry) > Date.now());
  assert.deepEqual({ ...remote, token: '' }, { type: 'drive', client_id: CLIENT_ID, client_secret: 'sek', scope: 'drive', token: '', team_drive: '0CCCmusic', root_folder_id: '' });
  assert.deepEqual(rcloneListRemotes(conf), ['new name:']);
});

test('blank client id with auto config runs the real rclone authorize with rclone\'s blob and reads its answer', async () => {
  const dir = tempDir('scanrelay-remote-');
  const conf = join(dir, 'rclone.conf');
  // A stand-in for rclone on PATH that records its arguments and answers like `rclone authorize` does.
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'rclone'),
    `#!/bin/sh\nprintf '%s\\n' "$@" > ${join(dir, 'rclone-args')}\necho "Paste the following into your remote machine --->"\necho "${TOKEN_BLOB}"\necho "<---End paste"\n`,
    { mode: 0o755 },
  );
  const t = Terminal.start([process.execPath, CLI, 'remote', '--rclone-config', conf], {
    dir,
    cwd: ROOT,
    env: { HOME: dir, PATH: `${bin}:${process.env.PATH}`, SCANRELAY_SETTINGS: join(dir, 'settings.yml') },
  });
  terminals.push(t);
  await t.answer('n/s/q>', 'n');
  await t.answer('name>', '');
  await t.answer('Storage>', 'drive');
  await t.answer('client_id>', '');
  await t.answer('client_secret>', '');
  await t.answer('scope>', 'drive');
  await t.answer('root_folder_id>', '');
  await t.answer('service_account_file>', '');
  await t.answer('y/n>', 'n');
  await t.answer('y/n>', 'y'); // Use auto config?
  await t.answer('y/n>', 'n'); // Shared Drive?
  await t.answer('y/e/d>', 'y');
  await t.answer('e/n/d/r/s/q>', 'q');
  assert.equal(await t.exitCode(), 0);
  assert.deepEqual(readFileSync(join(dir, 'rclone-args'), 'utf8').split('\n').filter(Boolean), ['authorize', 'drive', 'eyJzY29wZSI6ImRyaXZlIn0']);
  assert.deepEqual(rcloneDump(conf), { cloud: { type: 'drive', scope: 'drive', token: TOKEN_JSON, team_drive: '' } });
});
