import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import pino from 'pino';
import type { PlexScanBackend } from '../../../src/targets/plex/backends/backend.ts';
import { containerLookupCommand, runningScanner, scannerProcessName } from '../../../src/targets/plex/scanner-process.ts';
import { PlexTarget } from '../../../src/targets/plex/target.ts';
import { FAST_TIMINGS, plexSettingsOf, scanItem, testConfig } from '../../helpers/plex-target.ts';
import { tempDir } from '../../helpers/relay.ts';

/** A backend that records the scans it is asked for (the wait under test happens before it is called). */
function recordingBackend(): PlexScanBackend & { scans: string[] } {
  const scans: string[] = [];
  return {
    method: 'scanner',
    scans,
    resolveSection: async (folder) => ({ id: '1', title: 'Movies', location: folder }),
    knownLocations: async () => ['/data/Movies'],
    scan: async (_id, folder) => (scans.push(folder), {}),
    analyze: async () => {},
    describeScan: (id, folder) => `scan ${id} ${folder}`,
    available: async () => ({ ok: true }),
  };
}

// plex_autoscan, without a token, waits while a process named like PLEX_SCANNER's last part runs
// (plex.py:137-147, utils.py:86-132); with USE_DOCKER only one in the DOCKER_NAME container counts.
describe('PLEX_WAIT_FOR_EXTERNAL_SCANNERS without PLEX_TOKEN: the Plex Media Scanner process', () => {
  const dir = tempDir('scanrelay-proc-');
  // A program whose process is named like the real scanner (comm holds its first 15 characters). The process
  // table is the machine's: a name of this run's own keeps other test files and other runs on the same machine
  // from seeing this scanner, and this test from seeing theirs.
  const name = `Plex Media Scanner ${randomBytes(4).toString('hex')}`;
  const exe = join(dir, name);
  symlinkSync('/bin/sleep', exe);
  // Each test starts its own scanner and stops it when it ends.
  let child: ChildProcess;
  beforeEach(async () => {
    child = spawn(exe, ['60'], { stdio: 'ignore' });
    await once(child, 'spawn');
  });
  afterEach(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  });
  const config = (o: Record<string, unknown> = {}) =>
    plexSettingsOf(testConfig({ PLEX_TOKEN: '', PLEX_SCANNER: `${dir.replace(/ /g, '\\ ')}/${name.replace(/ /g, '\\ ')}`, SERVER_FILE_CHECKS_ENABLED: false, PLEX_ANALYZE_TYPE: 'off', ...o }));

  test('the name comes from PLEX_SCANNER without its shell escapes', () => {
    assert.equal(scannerProcessName('/usr/lib/plexmediaserver/Plex\\ Media\\ Scanner'), 'Plex Media Scanner');
  });

  test('no scan is sent while the scanner runs; the scan goes once it has ended', async () => {
    const found = await runningScanner(config());
    assert.equal(found?.pid, child.pid);
    assert.equal(found?.name, name);
    const backend = recordingBackend();
    const target = new PlexTarget(backend, pino({ level: 'silent' }), { settings: config(), timings: FAST_TIMINGS });
    const held = await target.deliver(scanItem({ folder: '/data/Movies/Up' }));
    assert.equal(held.outcome, 'retry');
    assert.match((held as { error: string }).error, /another Plex library scan/);
    assert.deepEqual(backend.scans, []);
    const off = await new PlexTarget(backend, pino({ level: 'silent' }), { settings: config({ PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false }), timings: FAST_TIMINGS }).deliver(scanItem({ folder: '/data/Movies/Up' }));
    assert.equal(off.outcome, 'done');
    backend.scans.length = 0;
    // Reaped (the exit event), the process has left the process table.
    child.kill('SIGKILL');
    await once(child, 'exit');
    assert.equal(await runningScanner(config()), undefined);
    assert.equal((await target.deliver(scanItem({ folder: '/data/Movies/Up' }))).outcome, 'done');
    assert.deepEqual(backend.scans, ['/data/Movies/Up']);
  });

  test('USE_DOCKER: only a scanner in the DOCKER_NAME container counts, found with plex_autoscan\'s docker inspect line', async () => {
    assert.equal((await runningScanner(config()))?.pid, child.pid);
    const lines: string[] = [];
    const other = await runningScanner(config({ USE_DOCKER: true, DOCKER_NAME: 'plex' }), { shell: async (l) => (lines.push(l), 'sonarr\n') });
    assert.equal(other, undefined);
    assert.ok(lines.includes(`docker inspect --format '{{.Name}}' "$(cat /proc/${child.pid}/cgroup |head -n 1 |cut -d / -f 3)" | sed 's/^\\///'`), lines.join('\n'));
    assert.equal(containerLookupCommand(42), `docker inspect --format '{{.Name}}' "$(cat /proc/42/cgroup |head -n 1 |cut -d / -f 3)" | sed 's/^\\///'`);
    const mine = await runningScanner(config({ USE_DOCKER: true, DOCKER_NAME: 'Plex' }), { shell: async () => 'plex\n' });
    assert.equal(mine?.container, 'plex');
  });
});
