// Issue 35 item 5: errors that blame the right place, and help and log lines a person can read.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/load.ts';
import { ROOT, runCli, tempDir } from '../helpers/relay.ts';

test('a bad value from an environment variable is reported as the environment\'s, a bad value in the file as the file\'s', () => {
  assert.throws(
    () => parseConfig({ SERVER_SCAN_DELAY: 10 }, { SERVER_SCAN_DELAY: '"soon"' }, '/opt/config.json'),
    (err: Error) => {
      assert.match(err.message, /^environment variable SERVER_SCAN_DELAY: .*expected number.*\(it replaces the config file's SERVER_SCAN_DELAY; for example SERVER_SCAN_DELAY=180\)$/);
      assert.doesNotMatch(err.message, /\/opt\/config\.json/);
      return true;
    },
  );
  assert.throws(() => parseConfig({ SERVER_SCAN_DELAY: 'soon' }, {}, '/opt/config.json'), { message: /^\/opt\/config\.json: SERVER_SCAN_DELAY: / });
  // Both at once: each blamed on its own place.
  assert.throws(
    () => parseConfig({ SERVER_PORT: 'x' }, { SERVER_SCAN_DELAY: '[]' }, '/opt/config.json'),
    { message: /^\/opt\/config\.json: SERVER_PORT: .*; environment variable SERVER_SCAN_DELAY: / },
  );
});

test('SERVER_PORT=abc gets a hint that works when followed; a text key still gets the quoting hint', () => {
  for (const [key, value] of [['SERVER_PORT', 'abc'], ['SERVER_ALLOW_MANUAL_SCAN', 'yes'], ['SERVER_PATH_MAPPINGS', '/data/'], ['SERVER_IP', 'localhost']] as const) {
    let message = '';
    assert.throws(() => parseConfig({}, { [key]: value }, 'config.json'), (err: Error) => ((message = err.message), true));
    const hint = new RegExp(`${key}=('[^']*'|\\S+)$`).exec(message);
    assert.ok(hint, message);
    const shellValue = hint[1]!.startsWith("'") ? hint[1]!.slice(1, -1) : hint[1]!;
    // What the shell hands the relay after the user types the hint.
    assert.doesNotThrow(() => parseConfig({}, { [key]: shellValue }, 'config.json'), `${message} -> ${key}=${shellValue}`);
  }
  assert.throws(() => parseConfig({}, { SERVER_PORT: 'abc' }), /SERVER_PORT takes a number, for example SERVER_PORT=3467$/);
});

test('`import --from-queue nope.db` says the file does not exist and creates nothing', async () => {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ SERVER_PASS: 'import-secret', PLEX_ENABLED: false }));
  const r = await runCli(['--config', config, 'import', '--from-queue', 'nope.db'], { cwd: dir });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr, `scanrelay: --from-queue ${join(dir, 'nope.db')}: the file does not exist\n`);
  assert.ok(!existsSync(join(dir, 'nope.db')), 'no empty database was made in its place');
  const cache = await runCli(['--config', config, 'import', '--from-cache', 'gone/cache.db'], { cwd: dir });
  assert.equal(cache.stderr, `scanrelay: --from-cache ${join(dir, 'gone', 'cache.db')}: the file does not exist\n`);
});

test('`sections` with a scanner that cannot run prints the error, not the list header', async () => {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ PLEX_SCANNER: join(dir, 'no-such-scanner'), USE_SUDO: false, PLEX_ENABLED: true }));
  const r = await runCli(['--config', config, 'sections'], { cwd: dir, env: { PATH: process.env.PATH } });
  assert.notEqual(r.code, 0);
  assert.doesNotMatch(r.stdout, /Plex Sections/);
  assert.match(r.stderr, /^scanrelay: Plex Media Scanner --list/m);
});

test("a command's --help lists the global options (--config and the files)", async () => {
  for (const command of ['scan', 'server', 'import']) {
    const r = await runCli([command, '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Global Options:[\s\S]*--config <file>[\s\S]*--queuefile <file>/, `${command} --help`);
  }
});

test('the top-level help fits 80 columns and every wrapped line stays indented (nothing restarts at column 0)', async () => {
  const r = await runCli(['--help']);
  assert.equal(r.code, 0);
  const lines = r.stdout.trimEnd().split('\n');
  assert.deepEqual(lines.filter((l) => l.length > 80), []);
  const atColumn0 = lines.filter((l) => l && !l.startsWith(' '));
  assert.deepEqual(atColumn0, ['Usage: scanrelay [options] [command]', 'Scan relay for Plex, Jellyfin and Emby: scans exactly the folder that changed', 'Options:', 'Commands:']);
  // Each command's description line starts beside its name.
  assert.match(r.stdout, /\n {2}authorize \[options\] \[backend\] \[blob\] +authorize drive monitoring/);
});

test('human (terminal) logs name a config key once: not in the message and again as a field', () => {
  const script = `
    const { createLogger } = await import(${JSON.stringify(join(ROOT, 'src', 'log.ts'))});
    const log = await createLogger({ level: 'info', pretty: true });
    log.warn({ key: 'PLEX_TOKEN', target: 'plex' }, 'PLEX_TOKEN is empty: set it in the config');
    log.warn({ key: 'PLEX_EMPTY_TRASH_MAX_FILES', deleted: 3 }, 'too many deleted items; not emptying the trash');
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
  assert.equal(r.status, 0, r.stderr);
  // eslint-disable-next-line no-control-regex
  const out = r.stdout.replace(/\x1b\[\d+m/g, '');
  assert.equal(out.split('PLEX_TOKEN').length - 1, 1, out);
  assert.match(out, /target: "plex"/);
  // A key the message does not name is still shown.
  assert.match(out, /key: PLEX_EMPTY_TRASH_MAX_FILES/);
});
