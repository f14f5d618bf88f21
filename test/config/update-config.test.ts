import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, tempDir } from '../helpers/relay.ts';

// plex_autoscan's update_config merges base_config's missing keys, recursively (config.py:214-265, __inner_upgrade).
// Its GOOGLE section is config.py:73-89: none of scanrelay's drive keys are in it.
test('update_config adds only plex_autoscan keys, keeps the mode, writes config.json.bak first and prints the added keys', async () => {
  const dir = tempDir();
  const file = join(dir, 'config.json');
  const original = `${JSON.stringify({ SERVER_PASS: 'abc', PLEX_TOKEN: 'tok', GOOGLE: { ENABLED: false, SCAN_REMOVED: true }, JELLYFIN: { ENABLED: true, URL: 'http://j' }, CUSTOM: 1 })}\n`;
  writeFileSync(file, original);
  chmodSync(file, 0o640);
  const r = await runCli(['--config', file, 'update_config']);
  assert.equal(r.code, 0, r.stderr);
  const json = JSON.parse(readFileSync(file, 'utf8'));
  // The test-only endpoint keys and other scanrelay drive keys are not added...
  for (const key of ['OAUTH_AUTH_URL', 'OAUTH_TOKEN_URL', 'DRIVE_API_URL', 'SERVICE_ACCOUNT_FILE', 'RCLONE_REMOTE']) assert.ok(!(key in json.GOOGLE), key);
  // ...the scanrelay keys the user set stay, and scanrelay's own top-level keys are not added.
  assert.equal(json.GOOGLE.SCAN_REMOVED, true);
  assert.deepEqual(json.JELLYFIN, { ENABLED: true, URL: 'http://j' });
  for (const key of ['PLEX_SCAN_METHOD', 'SERVER_METRICS', 'EMBY']) assert.ok(!(key in json), key);
  assert.equal(json.GOOGLE.POLL_INTERVAL, 120);
  assert.equal(json.CUSTOM, 1);
  assert.equal(statSync(file).mode & 0o777, 0o640, 'mode kept');
  assert.equal(readFileSync(`${file}.bak`, 'utf8'), original, 'backup holds the old bytes');
  assert.equal(statSync(`${file}.bak`).mode & 0o777, 0o640);
  assert.match(r.stdout, /previous file: .*config\.json\.bak/);
  assert.match(r.stdout, /^\+ SERVER_PORT: 3467$/m);
  assert.match(r.stdout, /^\+ GOOGLE\.POLL_INTERVAL: 120$/m);
  assert.match(r.stdout, /^\+ RCLONE: \{/m);
  assert.ok(!/^\+ (PLEX_TOKEN|SERVER_PASS|CUSTOM)\b/m.test(r.stdout), 'keys the file had are not listed');

  // A second run has nothing to add and leaves the file (and the backup) alone.
  writeFileSync(`${file}.bak`, 'old backup');
  const again = await runCli(['--config', file, 'update_config']);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /no missing keys/);
  assert.equal(readFileSync(`${file}.bak`, 'utf8'), 'old backup');
});

test('update_config on a file that is not JSON names the line and column and writes nothing', async () => {
  const dir = tempDir();
  const file = join(dir, 'config.json');
  writeFileSync(file, '{\n  "SERVER_PORT": 3468,\n  "PLEX_TOKEN": "x",\n}\n');
  const r = await runCli(['--config', file, 'update_config']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /not valid JSON: line 4, column 1: .*trailing comma/);
  assert.ok(!existsSync(`${file}.bak`));
});
