import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { UserError } from '../../src/core/errors.ts';
import { parseConfig } from '../../src/config/load.ts';
import { runCli, tempDir } from '../helpers/relay.ts';

// Docker users set nested keys as SCANRELAY__SECTION__KEY and secrets as ..._FILE, the way autopulse reads its
// environment (dan-online/autopulse crates/service/src/settings/mod.rs:233-305: prefix, "__" between levels,
// a __FILE variable's file read and trimmed, winning over the plain variable).

const FILE = { SERVER_PASS: 'file-secret', PLEX_TOKEN: 'file-token', GOOGLE: { ENABLED: false, POLL_INTERVAL: 60, TEAMDRIVES: ['a'] } };

test('SCANRELAY__SECTION__KEY sets one nested key, whatever its case, and keeps the section\'s other keys', () => {
  const { config, notices } = parseConfig(FILE, { SCANRELAY__GOOGLE__ENABLED: 'true', SCANRELAY__google__teamdrives: '["x","y"]' });
  assert.equal(config.GOOGLE.ENABLED, true);
  assert.deepEqual(config.GOOGLE.TEAMDRIVES, ['x', 'y']);
  assert.equal(config.GOOGLE.POLL_INTERVAL, 60, 'the file\'s other keys stay');
  assert.ok(notices.some((n) => n.includes('SCANRELAY__GOOGLE__ENABLED for GOOGLE.ENABLED')), notices.join('\n'));
  // The file as read is not changed (commands that rewrite it keep the file's values).
  assert.equal(FILE.GOOGLE.ENABLED, false);
});

test('SCANRELAY__KEY sets a top-level key; a text key takes the text as it is, digits and all', () => {
  const { file: config } = parseConfig(FILE, { SCANRELAY__PLEX_TOKEN: '0123456789', SCANRELAY__SERVER_PORT: '4000', SCANRELAY__PLEX_LOCAL_URL: 'http://plex:32400' });
  assert.equal(config.PLEX_TOKEN, '0123456789');
  assert.equal(config.SERVER_PORT, 4000);
  assert.equal(config.PLEX_LOCAL_URL, 'http://plex:32400');
});

test('SCANRELAY__..._FILE reads the secret from a file, trimmed, and wins over the plain variable', () => {
  const dir = tempDir();
  const secret = join(dir, 'plex_token');
  writeFileSync(secret, 'token-from-secret\n');
  const { file: config, notices } = parseConfig(FILE, { SCANRELAY__PLEX_TOKEN: 'plain', SCANRELAY__PLEX_TOKEN__FILE: secret });
  assert.equal(config.PLEX_TOKEN, 'token-from-secret');
  assert.ok(!notices.join('\n').includes('token-from-secret'), 'the secret itself is never in a notice');
  const pass = join(dir, 'pass');
  writeFileSync(pass, '  s3cret-pass  \n');
  assert.equal(parseConfig(FILE, { SCANRELAY__SERVER_PASS__FILE: pass }).config.SERVER_PASS, 's3cret-pass');
});

test('mistakes stop the start naming the variable: an unreadable file, a key the config does not have, a wrong type', () => {
  const missing = join(tempDir(), 'nope');
  assert.throws(() => parseConfig(FILE, { SCANRELAY__PLEX_TOKEN__FILE: missing }), (e: unknown) => e instanceof UserError && e.message === `environment variable SCANRELAY__PLEX_TOKEN__FILE: cannot read ${missing}: ENOENT`);
  assert.throws(() => parseConfig(FILE, { SCANRELAY__GOOGLE__ENABLD: 'true' }), (e: unknown) => e instanceof UserError && /SCANRELAY__GOOGLE__ENABLD: GOOGLE has no key ENABLD/.test(e.message));
  assert.throws(() => parseConfig(FILE, { SCANRELAY__GOGLE__ENABLED: 'true' }), (e: unknown) => e instanceof UserError && /SCANRELAY__GOGLE__ENABLED: GOGLE is not a config key/.test(e.message));
  assert.throws(() => parseConfig(FILE, { SCANRELAY__GOOGLE__ENABLED: 'maybe' }), (e: unknown) => e instanceof UserError && /GOOGLE\.ENABLED/.test(e.message));
});

test('the top-level overrides plex_autoscan reads are unchanged: JSON values, and a bare word is still refused with the quoting hint', () => {
  assert.equal(parseConfig(FILE, { PLEX_TOKEN: '"json-token"' }).file.PLEX_TOKEN, 'json-token');
  assert.throws(() => parseConfig(FILE, { PLEX_TOKEN: 'bare' }), /must hold JSON/);
  // Unrelated SCANRELAY_ settings (one underscore) are not config keys.
  assert.equal(parseConfig(FILE, { SCANRELAY_LOGLEVEL: 'DEBUG', SCANRELAY_CONFIG: '/x' }).file.PLEX_TOKEN, 'file-token');
});

test('the relay reads them from its environment: a wrong nested key is one line and exit 2', async () => {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ SERVER_IP: '127.0.0.1', SERVER_PORT: 0, SERVER_PASS: 'x-secret', PLEX_ENABLED: false }));
  const r = await runCli(['--config', config, '--queuefile', join(dir, 'queue.db'), 'server'], { env: { SCANRELAY__SERVER__PORT: '1' } });
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.equal(r.stderr, 'scanrelay: environment variable SCANRELAY__SERVER__PORT: SERVER is not a config key (SCANRELAY__<KEY> or SCANRELAY__<SECTION>__<KEY>, as in config.json)\n');
});
