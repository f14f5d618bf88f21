import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UserError } from '../../src/core/errors.ts';
import { parseConfig } from '../../src/config/load.ts';
import { triggerRouting } from '../../src/config/named-targets.ts';
import { plexSettings } from '../../src/targets/plex/settings.ts';
import { plexTargetSchema } from '../../src/targets/plex/schema.ts';
import { runCli, tempDir } from '../helpers/relay.ts';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';

// Issue 39: TARGETS, a map of named targets. The plex_autoscan keys are the targets plex, jellyfin and emby.

const load = (raw: Record<string, unknown>) => parseConfig({ SERVER_PASS: 'a-long-enough-secret-for-tests', ...raw }).config;
const refused = (raw: Record<string, unknown>): string => {
  try {
    load(raw);
  } catch (err) {
    assert.ok(err instanceof UserError, String(err));
    assert.equal(err.exitCode, 2);
    assert.doesNotMatch(err.message, /\n/, 'one line');
    return err.message;
  }
  assert.fail('the config was accepted');
};

describe('TARGETS: named targets', () => {
  test('a config without TARGETS has the targets it had: plex from the PLEX_* keys, jellyfin and emby when enabled', () => {
    const config = load({ PLEX_LOCAL_URL: 'http://plex:32400', PLEX_TOKEN: 't', PLEX_REWRITE: [{ from: '^/data/', to: '/media/' }], JELLYFIN: { ENABLED: true, URL: 'http://jf:8096', API_KEY: 'k' } });
    const targets = config.targets;
    assert.deepEqual([...targets.keys()], ['plex', 'jellyfin']);
    const plex = targets.get('plex')!;
    assert.equal(plex.TYPE, 'plex');
    assert.ok(plex.TYPE === 'plex' && plex.URL === 'http://plex:32400' && plex.TOKEN === 't');
    assert.deepEqual(plex.REWRITE, [{ from: '^/data/', to: '/media/' }]);
    // Below the config there are only the named targets: the servers' own keys are gone from the relay's config.
    assert.deepEqual(Object.keys(config).filter((k) => k.startsWith('PLEX_') || k === 'JELLYFIN' || k === 'EMBY'), []);
    assert.deepEqual([...load({ PLEX_ENABLED: false }).targets.keys()], []);
  });

  test('a Plex entry takes the PLEX_* settings by the same names without the prefix, and its settings keep the relay-wide slice', () => {
    const config = load({
      PLEX_TOKEN: 'top',
      TARGETS: { plex4k: { TYPE: 'plex', URL: 'http://4k:32400', TOKEN: '4k', ANALYZE_TYPE: 'OFF', EMPTY_TRASH: true, FIX_MISMATCHED: true, REFRESH_METADATA: true, SCAN_METHOD: 'api', REWRITE: [{ from: '^/data/', to: '/4k/' }] } },
    });
    const entry = config.targets.get('plex4k')!;
    assert.ok(entry.TYPE === 'plex');
    const view = plexSettings(entry, config);
    assert.equal(view.URL, 'http://4k:32400');
    assert.equal(view.TOKEN, '4k');
    assert.equal(view.ANALYZE_TYPE, 'off');
    assert.equal(view.EMPTY_TRASH, true);
    assert.equal(view.FIX_MISMATCHED, true);
    assert.equal(view.REFRESH_METADATA, true);
    assert.equal(view.SCAN_METHOD, 'api');
    assert.deepEqual(view.REWRITE, [{ from: '^/data/', to: '/4k/' }]);
    // The relay-wide slice stays the relay's; nothing else of the relay's config comes along.
    assert.equal(view.SERVER_MAX_FILE_CHECKS, config.SERVER_MAX_FILE_CHECKS);
    assert.equal(view.RUN_COMMAND_AFTER_SCAN, config.RUN_COMMAND_AFTER_SCAN);
    assert.equal('SERVER_SCAN_DELAY' in view, false);
    // Defaults are plex_autoscan's, as for the top-level keys.
    const bare = plexTargetSchema.parse({ TYPE: 'plex' });
    assert.equal(bare.ANALYZE_TYPE, 'basic');
    assert.equal(bare.WAIT_FOR_EXTERNAL_SCANNERS, true);
    assert.equal(bare.URL, 'http://localhost:32400');
  });

  test('triggers name their targets: TARGETS (only these), EXCLUDE_TARGETS (all but these), DELAY', () => {
    const config = load({
      TARGETS: { jf: { TYPE: 'jellyfin', URL: 'http://jf' }, emby2: { TYPE: 'emby', URL: 'http://emby' } },
      SERVER_AUTOSCAN_TRIGGERS: { sonarr: { TARGETS: ['jf'], DELAY: 5 }, radarr: { EXCLUDE_TARGETS: ['jf'] }, lidarr: 3 },
    });
    assert.deepEqual(triggerRouting(config, config.SERVER_AUTOSCAN_TRIGGERS.sonarr as never), { targets: ['jf'], delay: 5 });
    assert.deepEqual(triggerRouting(config, config.SERVER_AUTOSCAN_TRIGGERS.radarr as never), { targets: ['plex', 'emby2'] });
    assert.deepEqual(triggerRouting(config, config.SERVER_AUTOSCAN_TRIGGERS.lidarr as never), {});
  });

  test("a trigger's ACTION goes with what it queues (scan is the default, and stored as none)", () => {
    const config = load({ SERVER_AUTOSCAN_TRIGGERS: { bazarr: { ACTION: 'refresh' }, tdarr: { ACTION: 'analyze' }, sonarr: { ACTION: 'scan' } }, A_TRAIN: { ACTION: 'refresh' } });
    assert.deepEqual(triggerRouting(config, config.SERVER_AUTOSCAN_TRIGGERS.bazarr as never), { action: 'refresh' });
    assert.deepEqual(triggerRouting(config, config.SERVER_AUTOSCAN_TRIGGERS.tdarr as never), { action: 'analyze' });
    assert.deepEqual(triggerRouting(config, config.SERVER_AUTOSCAN_TRIGGERS.sonarr as never), {});
    assert.deepEqual(triggerRouting(config, config.A_TRAIN), { action: 'refresh' });
    assert.match(refused({ SERVER_AUTOSCAN_TRIGGERS: { bazarr: { ACTION: 'rescan' } } }), /^config: SERVER_AUTOSCAN_TRIGGERS\.bazarr\.ACTION: .*"scan".*"refresh".*"analyze"/);
  });
});

describe('bad TARGETS config stops the start with one line naming the key (exit 2)', () => {
  test('an unknown TYPE', () => {
    assert.equal(refused({ TARGETS: { shelf: { TYPE: 'bookshelf', URL: 'http://x' } } }), 'config: TARGETS.shelf.TYPE: unknown TYPE "bookshelf": one of plex, jellyfin, emby, audiobookshelf, tdarr, fileflows, sonarr, radarr, command, relay');
    assert.match(refused({ TARGETS: { shelf: { URL: 'http://x' } } }), /^config: TARGETS\.shelf\.TYPE: missing: one of plex/);
  });

  test('two targets of one name: TARGETS.plex beside the PLEX_* keys, TARGETS.jellyfin beside JELLYFIN', () => {
    assert.match(refused({ TARGETS: { plex: { TYPE: 'plex' } } }), /^config: TARGETS\.plex: two targets are named "plex": this entry and the top-level PLEX_\* keys/);
    assert.match(refused({ JELLYFIN: { ENABLED: true, URL: 'http://jf' }, TARGETS: { jellyfin: { TYPE: 'jellyfin', URL: 'http://jf2' } } }), /^config: TARGETS\.jellyfin: two targets are named "jellyfin"/);
    // With the top-level Plex turned off, the name is free.
    assert.deepEqual([...load({ PLEX_ENABLED: false, TARGETS: { plex: { TYPE: 'plex' } } }).targets.keys()], ['plex']);
  });

  test('a trigger naming a target that does not exist', () => {
    assert.equal(refused({ SERVER_AUTOSCAN_TRIGGERS: { sonarr: { TARGETS: ['plex4k'] } } }), 'config: SERVER_AUTOSCAN_TRIGGERS.sonarr.TARGETS: no target is named "plex4k" (targets: plex)');
    assert.match(refused({ A_TRAIN: { EXCLUDE_TARGETS: ['jf'] } }), /^config: A_TRAIN\.EXCLUDE_TARGETS: no target is named "jf"/);
    assert.match(refused({ WATCH: { ENABLED: true, PATHS: [{ PATH: '/m', TARGETS: ['nope'] }] } }), /^config: WATCH\.PATHS\.0\.TARGETS: no target is named "nope"/);
    assert.match(refused({ GOOGLE: { TARGETS: ['nope'] } }), /^config: GOOGLE\.TARGETS: no target is named "nope"/);
    assert.match(refused({ A_TRAIN: { TARGETS: ['plex'], EXCLUDE_TARGETS: ['plex'] } }), /^config: A_TRAIN\.EXCLUDE_TARGETS: TARGETS and EXCLUDE_TARGETS: use one of them/);
  });

  test('a pattern RE2 refuses, in INCLUDE, EXCLUDE or REWRITE', () => {
    assert.match(refused({ TARGETS: { jf: { TYPE: 'jellyfin', URL: 'http://jf', INCLUDE: ['(?=lookahead)'] } } }), /^config: TARGETS\.jf\.INCLUDE\.0: invalid regular expression "\(\?=lookahead\)" \(RE2 syntax\)/);
    assert.match(refused({ TARGETS: { jf: { TYPE: 'jellyfin', URL: 'http://jf', EXCLUDE: ['(a'] } } }), /^config: TARGETS\.jf\.EXCLUDE\.0: invalid regular expression/);
    assert.match(refused({ TARGETS: { jf: { TYPE: 'jellyfin', URL: 'http://jf', REWRITE: [{ from: '\\1(x)', to: '' }] } } }), /^config: TARGETS\.jf\.REWRITE\.0\.from: invalid regular expression/);
  });

  test('a name a delivery cannot carry ("@" names a server on a shared queue)', () => {
    assert.match(refused({ TARGETS: { 'plex@4k': { TYPE: 'plex' } } }), /^config: TARGETS\.plex@4k: a target name is letters, digits/);
  });

  test('the real command exits 2 with the line on stderr', async () => {
    const dir = tempDir();
    const configPath = join(dir, 'config.json');
    writeFileSync(configPath, JSON.stringify({ SERVER_PASS: 'a-long-enough-secret-for-tests', SERVER_PORT: 0, TARGETS: { shelf: { TYPE: 'bookshelf' } } }));
    const out = await runCli(['--config', configPath, '--queuefile', join(dir, 'q.db'), 'server']);
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /TARGETS\.shelf\.TYPE: unknown TYPE "bookshelf"/);
  });
});
