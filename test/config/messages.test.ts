import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { UserError } from '../../src/core/errors.ts';
import { findJsonProblem } from '../../src/config/json-position.ts';
import { parseConfig } from '../../src/config/load.ts';
import { runCli, spawnRelay, tempDir } from '../helpers/relay.ts';

function userError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof UserError, String(err));
    return err.message;
  }
  assert.fail('no error');
}

test('bad JSON is reported by line and column, with what JSON wanted there', async () => {
  assert.deepEqual(findJsonProblem('{"a": 1}'), undefined);
  assert.deepEqual(findJsonProblem('{\n  "a": 1,\n  "b": \n}'), { line: 4, column: 1, message: 'expected a value (a string in "...", a number, true, false, null, [...] or {...}), found "}"' });
  assert.match(findJsonProblem("{\n 'a': 1}")!.message, /not '\.\.\.'/);
  assert.deepEqual({ ...findJsonProblem('{"a": "C:\\x"}'), message: '' }, { line: 1, column: 10, message: '' });
  assert.match(findJsonProblem('{"a": 1 "b": 2}')!.message, /expected "," or "}"/);
  const dir = tempDir();
  const file = join(dir, 'config.json');
  writeFileSync(file, '{\n  "SERVER_PORT": 3468\n  "PLEX_TOKEN": "x"\n}\n');
  const r = await runCli(['--config', file, 'map', '/x']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /config\.json is not valid JSON: line 3, column 3: expected "," or "}", found "\\""/);
});

test('a priority list that is not a list names the key', () => {
  const msg = userError(() => parseConfig({ SERVER_SCAN_PRIORITIES: { '1': '/TV/' } }));
  assert.match(msg, /SERVER_SCAN_PRIORITIES\.1: .*expected array/);
});

test('a misspelled key gets "did you mean"; an unrelated one is only listed', () => {
  const { warnings } = parseConfig({ PLEX_TOKN: 'x', plex_local_url: 'http://p', MY_NOTES: 'n' });
  assert.ok(warnings.includes('unknown config key PLEX_TOKN kept and ignored: did you mean PLEX_TOKEN?'), warnings.join('\n'));
  assert.ok(warnings.includes('unknown config key plex_local_url kept and ignored: did you mean PLEX_LOCAL_URL?'), warnings.join('\n'));
  assert.ok(warnings.includes('unknown config keys kept and ignored: MY_NOTES'), warnings.join('\n'));
});

test('a non-JSON environment variable error shows the quoted form to use', () => {
  // plex_autoscan decodes the variable as JSON (config.py:275), so a bare word fails there too.
  const msg = userError(() => parseConfig({}, { PLEX_TOKEN: 'abc' }));
  assert.match(msg, /PLEX_TOKEN='"abc"'/);
  assert.match(userError(() => parseConfig({}, { PLEX_TOKEN: "it's" })), /PLEX_TOKEN='"it'\\''s"'/);
});

test('an old GDRIVE section points to GOOGLE', () => {
  // plex_autoscan renamed GDRIVE to GOOGLE in its drive rewrite (commit d98f444, config.py base_config).
  const { warnings } = parseConfig({ GDRIVE: { CLIENT_ID: 'x' } });
  const line = warnings.find((w) => w.startsWith('GDRIVE'));
  assert.ok(line, warnings.join('\n'));
  assert.match(line, /renamed it GOOGLE/);
});

test('an environment override is one INFO line at start, not a WARN', async () => {
  // plex_autoscan logs "Using ENV setting" at INFO (config.py:276).
  const relay = await spawnRelay({ config: { PLEX_ENABLED: false }, env: { SERVER_SCAN_DELAY: '5', SCANRELAY_LOGLEVEL: 'INFO' } });
  try {
    const lines = relay.events().filter((e) => String(e.msg).includes('SERVER_SCAN_DELAY'));
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0]!.level, 30);
    assert.ok(!relay.events().some((e) => e.level === 40 && /environment/.test(String(e.msg))));
  } finally {
    await relay.kill();
  }
});

test('build_caches without a drive token fails with what to run, and never says "Building caches"', async () => {
  const dir = tempDir();
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ GOOGLE: { ENABLED: true, CLIENT_ID: 'id', CLIENT_SECRET: 's' } }));
  const r = await runCli(['--config', file, '--tokenfile', join(dir, 'token.json'), '--cachefile', join(dir, 'cache.db'), 'build_caches']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /no drive token in .*token\.json: run "scanrelay authorize" first/);
  assert.doesNotMatch(r.stdout + r.stderr, /Building/);
});

test('`scanrelay map` refuses what the relay refuses: a relative path, a ".." segment', async () => {
  const dir = tempDir();
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ PLEX_ENABLED: false, SERVER_PATH_MAPPINGS: { '/data/': ['/mnt/'] } }));
  const relative = await runCli(['--config', file, 'map', 'relative/path']);
  assert.equal(relative.code, 2);
  assert.match(relative.stderr, /refuse this path \(400\): path "relative\/path" is not absolute after SERVER_PATH_MAPPINGS/);
  assert.equal(relative.stdout, '');
  const dots = await runCli(['--config', file, 'map', '/mnt/a/../b']);
  assert.equal(dots.code, 2);
  assert.match(dots.stderr, /must not contain a "\.\." segment/);
  const ok = await runCli(['--config', file, 'map', '/mnt/TV/x.mkv']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /mapped:\s+\/data\/TV\/x\.mkv/);
});
