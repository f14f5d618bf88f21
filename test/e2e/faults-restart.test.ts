import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { NotifyEvent } from '../../src/core/events.ts';
import { JsonReceiverFake, type NotifyCall } from '../fakes/notify-services.ts';
import { FakePlex } from '../fakes/plex.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { postForm, processAlive, type RelayProcess, spawnRelay, tempDir, waitFor } from '../helpers/relay.ts';

// Issue 52 items 2 and 4 through a real relay process: `kill -9` and SIGTERM while Plex scans a folder the relay
// recorded as sent (its `scanned` is told after the restart, once Plex no longer scans, never early and never lost),
// and SIGTERM and `kill -9` while a command target's program hangs (the relay stops, the program and its children
// do not outlive it).

const scanned = (calls: NotifyCall[], folder: string): NotifyEvent[] =>
  calls.filter((c) => c.status === 200).flatMap((c) => (c.json as { events: NotifyEvent[] }).events).filter((e) => e.kind === 'scanned' && e.folder === folder);


let cluster: PgCluster | undefined;
after(() => cluster?.destroy());

const STORES: Array<[string, () => Promise<Record<string, unknown>>]> = [
  ['SQLite', async () => ({})],
  ['PostgreSQL', async () => ({ SERVER_QUEUE_URL: await (cluster ??= await startPgCluster()).createDatabase(), SERVER_RELAY_ID: 'relay-faults' })],
];

// The three groups share nothing (each has its own Plex, receiver, relays and queue), and mostly wait on the relay's
// own timers (a SIGTERM's 5 s grace, 1 s looks): they run side by side. The cases of a group share its Plex and run
// in turn.
describe('faults and restarts through a real relay', { concurrency: true }, () => {
  for (const [name, queueKeys] of STORES) {
    describe(`a scan Plex was scanning when the relay stopped (${name})`, { concurrency: 1 }, () => {
      let plex: FakePlex;
      let json: JsonReceiverFake;
      before(async () => {
        plex = await new FakePlex().start();
        // Plex scans until the test ends the scan (stopScans): the relay is stopped in the middle.
        plex.scanActivityMs = 3_600_000;
        json = await new JsonReceiverFake('json-token').start();
      });
      after(async () => {
        await plex?.stop();
        await json?.stop();
      });

      for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
        test(`${signal}: nothing is told before Plex ended the scan; after the restart it is told once Plex no longer scans, once`, async () => {
          const dir = tempDir();
          const folder = `/data/Movies/${signal} ${name} (2000)`;
          const config = {
            PLEX_LOCAL_URL: plex.url,
            PLEX_TOKEN: plex.token,
            SERVER_ALLOW_MANUAL_SCAN: true,
            SERVER_SCAN_DELAY: 0,
            NOTIFICATIONS: { hook: { TYPE: 'json', URL: `${json.url}/hook`, TOKEN: 'json-token', BATCH_SECONDS: 0 } },
            ...(await queueKeys()),
          };
          let relay: RelayProcess = await spawnRelay({ dir, config });
          try {
            assert.equal((await postForm(relay.url, { eventType: 'Manual', filepath: `${folder}/film.mkv` })).status, 200);
            await relay.waitForLog((e) => e.msg === 'scan delivered' && e.folder === folder, 60_000);
            await waitFor(() => plex.scans.find((s) => s.path === folder && s.startedAt !== undefined) || undefined, 60_000, 'Plex scanning the folder');
            await relay.kill(signal);
            assert.deepEqual(scanned(json.calls, folder), [], 'not told while Plex still scans');
            relay = await spawnRelay({ dir, configPath: join(dir, 'config.json') });
            await relay.waitForLog((e) => /not confirmed yet/.test(e.msg ?? ''), 60_000);
            // Plex is asked and still scans: the relay waits (two looks at /activities after the restart).
            const looks = () => plex.calls.filter((c) => c.path === '/activities').length;
            const before = looks();
            await waitFor(() => looks() >= before + 2 || undefined, 60_000, 'the relay asking Plex again');
            assert.deepEqual(scanned(json.calls, folder), [], 'not told while Plex still scans, after the restart either');
            plex.stopScans();
            const told = await waitFor(() => (scanned(json.calls, folder).length ? scanned(json.calls, folder) : undefined), 60_000, 'scanned told after the restart');
            assert.equal(told?.length, 1);
            assert.match(told![0]!.detail ?? '', /scanrelay stopped before the server confirmed the scan; at the next start the server no longer scanned/);
            // Told once: a later look finds nothing more to tell.
            await relay.waitForLog((e) => e.msg === 'told the end of a scan sent before scanrelay stopped' && e.folder === folder, 60_000);
          } finally {
            await relay.kill();
            plex.stopScans();
          }
        });
      }
    });
  }

  describe('a command target whose program hangs, through a real relay', { skip: process.platform === 'win32', concurrency: 1 }, () => {
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      test(`${signal}: the relay ends, and the program and its children do not outlive it`, async () => {
        const dir = tempDir();
        const pids = join(dir, 'pids');
        const prog = join(dir, 'hang.sh');
        writeFileSync(prog, `#!/bin/sh\necho $$ >> "${pids}"\nsleep 3600 &\necho $! >> "${pids}"\nwait\n`);
        chmodSync(prog, 0o755);
        const pidList = () => (existsSync(pids) ? readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number) : []);
        const relay = await spawnRelay({
          dir,
          config: { PLEX_ENABLED: false, SERVER_ALLOW_MANUAL_SCAN: true, SERVER_SCAN_DELAY: 0, TARGETS: { hook: { TYPE: 'command', COMMAND: [prog], TIMEOUT: 3600 } } },
        });
        try {
          for (let i = 0; i < 3; i++) assert.equal((await postForm(relay.url, { eventType: 'Manual', filepath: `/data/Movies/Hang ${i}/film.mkv` })).status, 200);
          await waitFor(() => pidList().length === 6 || undefined, 60_000, 'three programs running, each with a child');
          relay.proc.kill(signal);
          // A stop that hangs fails here rather than holding the test.
          await waitFor(() => relay.proc.exitCode !== null || relay.proc.signalCode !== null || undefined, 60_000, 'the relay ended');
          await waitFor(() => pidList().every((p) => !processAlive(p)) || undefined, 30_000, 'the programs and their children gone');
        } finally {
          await relay.kill('SIGKILL');
          for (const p of pidList()) if (processAlive(p)) process.kill(p, 'SIGKILL');
        }
      });
    }
  });
});
