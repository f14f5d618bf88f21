import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { FakePlex } from '../../fakes/plex.ts';
import { makePlexTarget, recordingLogger, runQueue, testConfig } from '../../helpers/plex-target.ts';
import { tempDir, waitFor } from '../../helpers/relay.ts';

/*
 * RUN_COMMAND_BEFORE_SCAN / RUN_COMMAND_AFTER_SCAN come in pairs, one scan at a time. plex_autoscan takes its
 * scan lock, runs the before-command, waits for Plex (PLEX_CHECK_BEFORE_SCAN), scans, then runs the
 * after-command and only then releases the lock (plex.py:133-232; the wait: plex.py:163-167, wait_plex_alive
 * plex.py:604-633). A folder in no section never got that far: start_scan refused it before queueing
 * (scan.py:115-118, utils.get_plex_section).
 */
describe('before/after commands: one scan holds Plex\'s turn from its before-command to its after-command', () => {
  let plex: FakePlex;
  beforeEach(async () => {
    plex = await new FakePlex().start();
  });
  afterEach(async () => plex.stop());

  const commands = (log: string) => ({
    RUN_COMMAND_BEFORE_SCAN: `echo "before $SCANRELAY_PATH" >> '${log}'`,
    RUN_COMMAND_AFTER_SCAN: `echo "after $SCANRELAY_PATH" >> '${log}'`,
  });
  const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);

  test('three scans queued while Plex is down: one before-command, then before/scan/after for each in turn once Plex is up', async () => {
    const log = join(tempDir(), 'commands.log');
    const config = testConfig({
      PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_FILE_CHECKS_ENABLED: false, PLEX_ANALYZE_TYPE: 'off',
      PLEX_CHECK_BEFORE_SCAN: true, PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, ...commands(log),
    });
    const { log: logger, lines: logLines } = recordingLogger();
    await plex.setMode('down');
    const q = runQueue([makePlexTarget(plex, config, { log: logger })]);
    try {
      const folders = ['/data/Movies/A (2001)', '/data/Movies/B (2002)', '/data/Movies/C (2003)'];
      q.store.enqueueMany(folders.map((folder) => ({ folder, files: [], source: 'Manual' as const, event: 'Manual', updateType: 'Modified' as const, priority: 0 })), { delayMs: 0, maxMs: 0 });
      q.scheduler.poke();
      await waitFor(() => logLines.filter((l) => l.key === 'PLEX_CHECK_BEFORE_SCAN' && /not ready/.test(l.msg)).length >= 4, 10_000, 'several waits for Plex');
      assert.deepEqual(lines(log), ['before /data/Movies/A (2001)'], 'only the scan holding the turn ran its before-command');
      assert.ok(
        logLines.filter((l) => l.key === 'PLEX_CHECK_BEFORE_SCAN' && /not ready/.test(l.msg)).every((l) => l.scan === logLines.find((x) => x.key === 'PLEX_CHECK_BEFORE_SCAN')!.scan),
        'the other scans did not start waiting for Plex on their own',
      );
      await plex.setMode('up');
      await waitFor(() => lines(log).length === 6, 15_000, 'three pairs of commands');
      await q.scheduler.afterStepsSettled();
      assert.deepEqual(lines(log), folders.flatMap((f) => [`before ${f}`, `after ${f}`]));
      assert.deepEqual(plex.refreshes().map((r) => r.path), folders);
    } finally {
      await plex.setMode('up');
      await q.close();
    }
  });

  test('a folder in no Plex section, with Plex answering: the scan fails at once and no command runs', async () => {
    const log = join(tempDir(), 'commands.log');
    const config = testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_FILE_CHECKS_ENABLED: false, PLEX_ANALYZE_TYPE: 'off', PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, ...commands(log) });
    const q = runQueue([makePlexTarget(plex, config)]);
    try {
      const id = q.enqueue('/elsewhere/Film (2004)');
      await waitFor(() => q.store.view.get(id)!.status === 'failed', 10_000, 'failed');
      assert.match(q.store.view.get(id)!.deliveries[0]!.last_error ?? '', /"\/elsewhere\/Film \(2004\)" is in no Plex section .*RUN_COMMAND_BEFORE_SCAN not run/);
      assert.deepEqual(lines(log), []);
    } finally {
      await q.close();
    }
  });

  test('a folder in no section found only after the before-command ran (Plex was down): the after-command still runs', async () => {
    const log = join(tempDir(), 'commands.log');
    const config = testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_FILE_CHECKS_ENABLED: false, PLEX_ANALYZE_TYPE: 'off', PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, ...commands(log) });
    await plex.setMode('down');
    const q = runQueue([makePlexTarget(plex, config)]);
    try {
      const id = q.enqueue('/elsewhere/Film (2005)');
      await waitFor(() => lines(log).length === 1, 10_000, 'the before-command');
      await plex.setMode('up');
      await waitFor(() => q.store.view.get(id)!.status === 'failed', 10_000, 'failed');
      assert.deepEqual(lines(log), ['before /elsewhere/Film (2005)', 'after /elsewhere/Film (2005)']);
      assert.match(q.store.view.get(id)!.deliveries[0]!.last_error ?? '', /is in no Plex section.*; after-scan command ok$/);
    } finally {
      await plex.setMode('up');
      await q.close();
    }
  });
});
