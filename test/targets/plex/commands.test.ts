import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { runScanCommand } from '../../../src/targets/plex/commands.ts';
import { FakePlex } from '../../fakes/plex.ts';
import { makePlexTarget, mediaTree, recordingLogger, runQueue, testConfig } from '../../helpers/plex-target.ts';
import { tempDir, waitFor } from '../../helpers/relay.ts';

describe('RUN_COMMAND_BEFORE_SCAN / RUN_COMMAND_AFTER_SCAN', () => {
  test('the path and section come in $SCANRELAY_PATH and $SCANRELAY_SECTION, never spliced into the command', async () => {
    const dir = tempDir();
    const out = join(dir, 'out.txt');
    const evil = join(dir, 'pwned');
    const { log } = recordingLogger();
    const result = await runScanCommand('RUN_COMMAND_BEFORE_SCAN', `printf '%s|%s' "$SCANRELAY_PATH" "$SCANRELAY_SECTION" > '${out}'`, { path: `/data/Movies/$(touch ${evil})`, section: '1' }, log, 5_000);
    assert.deepEqual(result, { ok: true, code: 0 });
    assert.equal(readFileSync(out, 'utf8'), `/data/Movies/$(touch ${evil})|1`);
    assert.equal(existsSync(evil), false);
  });

  // plex_autoscan ran the command with its own environment (utils.py:137, Popen without env); the relay's
  // may hold SERVER_PASS and PLEX_TOKEN as environment overrides, so a command gets a clean one instead.
  test('the command gets no secret of the relay: a clean environment with PATH, HOME, the locale and SCANRELAY_* (issue 35, item 13)', async () => {
    const dir = tempDir();
    const out = join(dir, 'env.txt');
    const saved = { SERVER_PASS: process.env.SERVER_PASS, PLEX_TOKEN: process.env.PLEX_TOKEN, LC_TIME: process.env.LC_TIME, GOOGLE: process.env.GOOGLE };
    Object.assign(process.env, { SERVER_PASS: '"relay-secret"', PLEX_TOKEN: '"plex-token-xyz"', LC_TIME: 'C', GOOGLE: '{"CLIENT_SECRET":"s3cret"}' });
    try {
      const { log } = recordingLogger();
      const result = await runScanCommand('RUN_COMMAND_AFTER_SCAN', `env > '${out}'`, { path: '/data/Movies/Heat (1995)', section: '2' }, log, 5_000);
      assert.deepEqual(result, { ok: true, code: 0 });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    const text = readFileSync(out, 'utf8');
    const env = new Map(text.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const));
    for (const secret of ['relay-secret', 'plex-token-xyz', 's3cret']) assert.ok(!text.includes(secret), `${secret} reached the command`);
    assert.equal(env.get('SCANRELAY_PATH'), '/data/Movies/Heat (1995)');
    assert.equal(env.get('SCANRELAY_SECTION'), '2');
    assert.equal(env.get('PATH'), process.env.PATH);
    assert.equal(env.get('HOME'), process.env.HOME);
    assert.equal(env.get('LC_TIME'), 'C');
    // What the shell adds itself (PWD, SHLVL, _) aside, nothing else came from the relay.
    const fromRelay = [...env.keys()].filter((k) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(k));
    const allowed = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'SCANRELAY_PATH', 'SCANRELAY_SECTION']);
    assert.deepEqual(fromRelay.filter((k) => !allowed.has(k) && !k.startsWith('LC_')), []);
  });

  test('safety: a failing, a hanging and a missing command are logged and never throw', async () => {
    const { log, lines } = recordingLogger();
    assert.deepEqual(await runScanCommand('RUN_COMMAND_AFTER_SCAN', 'echo boom >&2; exit 3', { path: '/x', section: '1' }, log, 5_000), { ok: true, code: 3 });
    assert.ok(lines.some((l) => l.output === 'boom'));
    const hung = await runScanCommand('RUN_COMMAND_AFTER_SCAN', 'sleep 30', { path: '/x', section: '1' }, log, 200);
    assert.deepEqual(hung, { ok: false, error: 'timed out after 0 s' });
    const missing = await runScanCommand('RUN_COMMAND_AFTER_SCAN', 'no-such-command-here-xyz', { path: '/x', section: '1' }, log, 5_000);
    assert.equal(missing!.ok && missing!.code, 127);
    assert.ok(lines.filter((l) => l.key === 'RUN_COMMAND_AFTER_SCAN' && /failed; the scan goes on/.test(l.msg)).length >= 3);
    // Two characters or fewer is no command, as in plex_autoscan.
    assert.equal(await runScanCommand('RUN_COMMAND_AFTER_SCAN', 'ls', { path: '/x', section: '1' }, log, 5_000), undefined);
  });

  describe('around a real scan', () => {
    let plex: FakePlex;
    beforeEach(async () => {
      plex = await new FakePlex().start();
    });
    afterEach(async () => plex.stop());

    test('the before command runs before the scan, the after command after it; a failing before command does not stop the scan', async () => {
      const tree = mediaTree();
      tree.put('/data/Movies/Cmd (2000)/c.mkv');
      const log = join(tree.root, 'commands.log');
      const config = testConfig({
        PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings, PLEX_ANALYZE_TYPE: 'off',
        RUN_COMMAND_BEFORE_SCAN: `echo "before $SCANRELAY_SECTION $SCANRELAY_PATH" >> '${log}'; exit 1`,
        RUN_COMMAND_AFTER_SCAN: `echo "after $SCANRELAY_SECTION $SCANRELAY_PATH" >> '${log}'`,
      });
      const q = runQueue([makePlexTarget(plex, config)]);
      try {
        const before = plex.refreshes().length;
        const id = q.enqueue('/data/Movies/Cmd (2000)', ['/data/Movies/Cmd (2000)/c.mkv']);
        await waitFor(() => /after-scan command ok/.test(q.store.view.get(id)!.deliveries[0]?.detail ?? ''), 10_000, 'after command');
        assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n'), ['before 1 /data/Movies/Cmd (2000)', 'after 1 /data/Movies/Cmd (2000)']);
        assert.equal(plex.refreshes().length, before + 1);
      } finally {
        await q.close();
      }
    });

    // plex_autoscan runs RUN_COMMAND_BEFORE_SCAN after the wait for other scanners and before it waits for
    // Plex to answer (plex.py:158-167), once per scan; it might be what brings Plex up.
    test('the before command runs before the wait for Plex, once, even while Plex stays down', async () => {
      const tree = mediaTree();
      tree.put('/data/Movies/Wake (2000)/w.mkv');
      const log = join(tree.root, 'before.log');
      const config = testConfig({
        PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings, PLEX_ANALYZE_TYPE: 'off',
        PLEX_CHECK_BEFORE_SCAN: true, PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false,
        RUN_COMMAND_BEFORE_SCAN: `echo "before $SCANRELAY_PATH" >> '${log}'`,
      });
      const { log: logger, lines } = recordingLogger();
      await plex.setMode('down');
      const q = runQueue([makePlexTarget(plex, config, { log: logger })]);
      try {
        const id = q.enqueue('/data/Movies/Wake (2000)', ['/data/Movies/Wake (2000)/w.mkv']);
        await waitFor(() => lines.filter((l) => l.key === 'PLEX_CHECK_BEFORE_SCAN' && /not ready/.test(l.msg)).length >= 2, 10_000, 'two waits for Plex');
        assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n'), ['before /data/Movies/Wake (2000)'], 'ran before the wait, and once');
        await plex.setMode('up');
        await waitFor(() => q.store.view.get(id)!.status === 'done', 10_000, 'scanned once Plex is up');
        assert.equal(readFileSync(log, 'utf8').trim().split('\n').length, 1);
      } finally {
        await plex.setMode('up');
        await q.close();
      }
    });

    test('RUN_COMMAND_TIMEOUT (seconds) kills a command that runs longer; the scan goes on', async () => {
      const tree = mediaTree();
      tree.put('/data/Movies/Slow (2000)/s.mkv');
      const config = testConfig({
        PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings, PLEX_ANALYZE_TYPE: 'off',
        PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, RUN_COMMAND_BEFORE_SCAN: 'sleep 30', RUN_COMMAND_TIMEOUT: 1,
      });
      assert.equal(testConfig({}).RUN_COMMAND_TIMEOUT, 3600, 'default: one hour');
      const { log: logger, lines } = recordingLogger();
      const q = runQueue([makePlexTarget(plex, config, { log: logger })]);
      try {
        const id = q.enqueue('/data/Movies/Slow (2000)', ['/data/Movies/Slow (2000)/s.mkv']);
        await waitFor(() => q.store.view.get(id)!.status === 'done', 15_000, 'scanned after the timeout');
        assert.ok(lines.some((l) => l.key === 'RUN_COMMAND_BEFORE_SCAN' && l.error === 'timed out after 1 s'));
      } finally {
        await q.close();
      }
    });
  });
});
