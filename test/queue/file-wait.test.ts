import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { scanRequestSchema, type ScanRequest } from '../../src/core/scan.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { FileGate, type FileLook } from '../../src/queue/file-gate.ts';
import { decideFileWait, nextLookAt, type FileWaitCheck, type FileWaitPolicy } from '../../src/queue/file-wait.ts';
import { Scheduler } from '../../src/queue/scheduler.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { diskLook, fileWaitPolicy } from '../../src/server/file-look.ts';
import { startRelay } from '../../src/server/run.ts';
import { importAutopulse } from '../../src/peers/autopulse/import.ts';
import { parseConfig } from '../../src/config/load.ts';
import { LibraryRoots } from '../../src/targets/library-roots.ts';
import { buildTargets } from '../../src/targets/index.ts';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { bothStores } from '../helpers/both-stores.ts';
import { recordingLogger, testConfig } from '../helpers/plex-target.ts';
import { tempDir, waitFor } from '../helpers/relay.ts';

/*
 * Issue 48 item 1: autopulse's opts.check_path holds for every target. autopulse sends a row to no target before
 * its file was found: update_found_status looks for each pending row's file (crates/service/src/runner.rs:37-48)
 * and update_process_status takes only found rows (runner.rs:159-167), every second (manager.rs:286-309); it never
 * gives up, deleting rows still not found after cleanup_days (runner.rs:332-347). Here the looks back off and a
 * scan whose files never appear fails, told as a failed delivery (SERVER_WAIT_FOR_FILES).
 */

const req = (folder: string, extra: Partial<ScanRequest> = {}) => scanRequestSchema.parse({ folder, source: 'Sonarr', event: 'Download', ...extra });
const POLICY: FileWaitPolicy = { firstMs: 1000, maxMs: 60_000, giveUpMs: 86_400_000 };

describe('the rule (queue/file-wait.ts)', () => {
  test('looks start about 1 s apart and back off (doubling) to MAX_CHECK_DELAY, the last one at the bound', () => {
    const since = 0;
    const at: number[] = [];
    let now = since;
    for (let i = 0; i < 10; i++) at.push((now = nextLookAt(since, now, POLICY)));
    assert.deepEqual(at, [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 124_000, 184_000, 244_000]);
    assert.equal(nextLookAt(0, 86_390_000, POLICY), 86_400_000, 'never past the give-up time');
  });

  test('a scan goes once every file is there; waits while one is missing; at the bound fails when none appeared, goes when some did', () => {
    const row = { id: 7, removal: 0, update_type: 'Created', last_at: 5, files_wait_since: null };
    const check = (missing: string[], looked = 2, lastAt = 5): FileWaitCheck => ({ policy: POLICY, verdicts: new Map([[7, { lastAt, looked, missing, outside: [] }]]) });
    assert.deepEqual(decideFileWait(row, undefined, 0), { kind: 'go' }, 'off: as before');
    assert.deepEqual(decideFileWait(row, check([]), 0), { kind: 'go' });
    assert.deepEqual(decideFileWait(row, check(['/a']), 100), { kind: 'wait', at: 1100, since: 100 });
    assert.deepEqual(decideFileWait(row, check(['/a'], 2, 6), 100), { kind: 'unlooked' }, 'a request merged in since the look: looked at again');
    assert.deepEqual(decideFileWait({ ...row, id: 8 }, check(['/a']), 100), { kind: 'unlooked' });
    const old = { ...row, files_wait_since: 0 };
    assert.deepEqual(decideFileWait(old, check(['/a']), POLICY.giveUpMs), { kind: 'go' }, 'one of two appeared: its folder is scanned');
    const gone = decideFileWait(old, check(['/a', '/b']), POLICY.giveUpMs);
    assert.equal(gone.kind, 'give up');
    assert.match((gone as { reason: string }).reason, /did not appear on the relay's disk within 1 day \(SERVER_WAIT_FOR_FILES.GIVE_UP_AFTER\): \/a, \/b/);
    // What is gone can never appear: a removal scan and a scan of deletions go as they are.
    assert.deepEqual(decideFileWait({ ...row, removal: 1 }, check(['/a', '/b']), 100), { kind: 'go' });
    assert.deepEqual(decideFileWait({ ...row, update_type: 'Deleted' }, check(['/a', '/b']), 100), { kind: 'go' });
  });
});

describe('SERVER_WAIT_FOR_FILES: no target gets a scan before its files are on disk', () => {
  const { stores } = bothStores();
  const running: Array<() => Promise<void>> = [];
  after(async () => {
    for (const stop of running) await stop().catch(() => undefined);
  });

  /** A Jellyfin (the fake) whose library is <dir>/tv, and a command target that writes each run's arguments to a file. */
  async function setUp(store: QueueBackend, wait: Record<string, number>, extra: Record<string, unknown> = {}) {
    const dir = tempDir('file-wait-');
    mkdirSync(join(dir, 'tv', 'Show'), { recursive: true });
    const runs = join(dir, 'runs.txt');
    const prog = join(dir, 'hook.sh');
    writeFileSync(prog, `#!/bin/sh\nprintf '%s\\n' "$@" >> "${runs}"\n`);
    chmodSync(prog, 0o755);
    const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
    jellyfin.virtualFolders = [{ Name: 'TV', Locations: [join(dir, 'tv')] }];
    const config = testConfig({
      PLEX_ENABLED: false,
      JELLYFIN: { ENABLED: true, URL: jellyfin.url, API_KEY: 'jf-key' },
      TARGETS: { hook: { TYPE: 'command', COMMAND: [prog] } },
      SERVER_WAIT_FOR_FILES: { ENABLED: true, ...wait },
      ...extra,
    });
    const { log, lines } = recordingLogger();
    const targets = await buildTargets(config, log);
    const looks: Array<{ at: number; path: string }> = [];
    const base = diskLook(config, new LibraryRoots(targets, log));
    // Each look at the disk, recorded (the gate's own answers are unchanged).
    const counted: FileLook = async (route) => {
      const at = await base(route);
      return async (path) => {
        looks.push({ at: Date.now(), path });
        return at(path);
      };
    };
    const scheduler = new Scheduler(store, targets, log, { fileGate: new FileGate(counted, fileWaitPolicy(config), log), retryBaseMs: 50, retryMaxMs: 200 });
    running.push(async () => {
      await scheduler.stop();
      await jellyfin.stop();
    });
    const ran = () => (existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').filter(Boolean) : []);
    return { dir, jellyfin, scheduler, looks, ran, lines };
  }

  for (const [name, open] of stores) {
    test(`${name}: Jellyfin and a command target get nothing until the file exists; looks back off; then both get it`, async () => {
      const store = await open();
      // Looks from 20 ms, doubling to 100 ms apart: a fixed pace of 20 ms would look 5 times in 100 ms.
      const t = await setUp(store, { FIRST_CHECK_DELAY: 0.02, MAX_CHECK_DELAY: 0.1, GIVE_UP_AFTER: 3600 });
      const folder = join(t.dir, 'tv', 'Show');
      const file = join(folder, 'Show - S01E01.mkv');
      const [queued] = await store.enqueueMany([req(folder, { files: [file], updateType: 'Created' })], { delayMs: 0, maxMs: 0 });
      await t.scheduler.start();
      await waitFor(() => t.looks.length >= 6, 15_000, 'six looks at the missing file');
      assert.equal(t.jellyfin.updates.length, 0, 'Jellyfin was told of no file');
      assert.deepEqual(t.ran(), [], 'the command never ran');
      const entry = await store.view.get(queued!.id);
      assert.equal(entry?.status, 'pending');
      assert.deepEqual(entry?.deliveries, [], 'no target has a delivery yet');
      assert.equal(entry?.waiting, 'its files are not on disk yet (SERVER_WAIT_FOR_FILES)');
      // Backing off: the looks after the first are at least 20, 20, 40, 80 and 100 ms apart (a timer never fires
      // early); a fixed 20 ms pace would take 100 ms for the same six looks.
      const span = t.looks[5]!.at - t.looks[0]!.at;
      assert.ok(span >= 240, `six looks took ${span} ms`);
      assert.ok(t.looks.every((l) => l.path === file));
      assert.ok(t.lines.some((l) => l.msg === 'scan waits for its files to appear on disk before any target gets it (SERVER_WAIT_FOR_FILES)' && l.scan === queued!.id));

      writeFileSync(file, 'video');
      await waitFor(() => t.jellyfin.updates.length > 0 && t.ran().length > 0, 15_000, 'both targets to get the file');
      await waitFor(async () => (await store.view.get(queued!.id))?.status === 'done', 15_000, 'the scan to end done');
      assert.deepEqual(t.jellyfin.updates.map((u) => u.path), [file]);
      assert.deepEqual(t.ran(), [file]);
      assert.ok(t.lines.some((l) => l.msg === 'its files appeared: the scan goes to its targets'));
    });

    test(`${name}: a file that never appears: the scan fails after GIVE_UP_AFTER, a failed event for each target; no target ran`, async () => {
      const store = await open();
      const t = await setUp(store, { FIRST_CHECK_DELAY: 0.02, MAX_CHECK_DELAY: 0.05, GIVE_UP_AFTER: 0.4 });
      const folder = join(t.dir, 'tv', 'Show');
      const file = join(folder, 'Show - S01E02.mkv');
      const started = Date.now();
      const [queued] = await store.enqueueMany([req(folder, { files: [file], updateType: 'Created' })], { delayMs: 0, maxMs: 0 });
      await t.scheduler.start();
      const entry = await waitFor(async () => {
        const e = await store.view.get(queued!.id);
        return e?.status === 'failed' ? e : undefined;
      }, 15_000, 'the scan to fail').then((e) => e!);
      assert.ok(Date.now() - started >= 400, 'not before the bound');
      assert.deepEqual(t.jellyfin.updates, []);
      assert.deepEqual(t.ran(), []);
      const reason = /^its files did not appear on the relay's disk within 400 ms \(SERVER_WAIT_FOR_FILES.GIVE_UP_AFTER\): .*S01E02\.mkv$/;
      assert.deepEqual(entry.deliveries.map((d) => [d.target.split('@')[0], d.status]).sort(), [['hook', 'failed'], ['jellyfin', 'failed']]);
      for (const d of entry.deliveries) assert.match(d.last_error ?? '', reason);
      const events = (await store.outbox.after(0, 100)).filter((e) => e.scan === queued!.id);
      assert.deepEqual(events.map((e) => [e.kind, e.target]).sort(), [['failed', 'hook'], ['failed', 'jellyfin']]);
      for (const e of events) {
        assert.match(e.reason ?? '', reason);
        assert.deepEqual(e.files, [file]);
        assert.equal(e.folder, folder);
      }
    });

    test(`${name}: a path outside every library folder the relay knows is never looked at; it waits, then fails naming why`, async () => {
      const store = await open();
      const t = await setUp(store, { FIRST_CHECK_DELAY: 0.02, MAX_CHECK_DELAY: 0.05, GIVE_UP_AFTER: 0.3 });
      const elsewhere = join(t.dir, 'elsewhere');
      mkdirSync(elsewhere);
      const file = join(elsewhere, 'there.mkv');
      // The file is there, but neither Jellyfin's library nor a SERVER_FILE_EXIST_PATH_MAPPINGS key holds it.
      writeFileSync(file, 'video');
      const [queued] = await store.enqueueMany([req(elsewhere, { files: [file], updateType: 'Created' })], { delayMs: 0, maxMs: 0 });
      await t.scheduler.start();
      const entry = await waitFor(async () => {
        const e = await store.view.get(queued!.id);
        return e?.status === 'failed' ? e : undefined;
      }, 15_000, 'the scan to fail').then((e) => e!);
      assert.deepEqual(t.ran(), []);
      assert.match(entry.deliveries[0]!.last_error ?? '', /never looked at, outside every library folder the relay knows \(add the folder to SERVER_FILE_EXIST_PATH_MAPPINGS\): .*there\.mkv/);
    });

    test(`${name}: a command target alone, its folder named in SERVER_FILE_EXIST_PATH_MAPPINGS: it runs once the file exists`, async () => {
      const store = await open();
      const t = await setUp(store, { FIRST_CHECK_DELAY: 0.02, MAX_CHECK_DELAY: 0.05, GIVE_UP_AFTER: 3600 });
      const media = join(t.dir, 'media');
      mkdirSync(media);
      // A relay with only the command target: the mapping's key is the library folder it may look in.
      const config = testConfig({ PLEX_ENABLED: false, TARGETS: { hook: { TYPE: 'command', COMMAND: [join(t.dir, 'hook.sh')] } }, SERVER_FILE_EXIST_PATH_MAPPINGS: { [media]: [media] }, SERVER_WAIT_FOR_FILES: { ENABLED: true, FIRST_CHECK_DELAY: 0.02, MAX_CHECK_DELAY: 0.05 } });
      const log = silentLogger();
      const targets = await buildTargets(config, log);
      let looked = 0;
      const base = diskLook(config, new LibraryRoots(targets, log));
      const counted: FileLook = async (route) => {
        const at = await base(route);
        return async (p) => (looked++, at(p));
      };
      const scheduler = new Scheduler(store, targets, log, { fileGate: new FileGate(counted, fileWaitPolicy(config), log) });
      running.push(() => scheduler.stop());
      const file = join(media, 'film.mkv');
      const [queued] = await store.enqueueMany([req(media, { files: [file], updateType: 'Created' })], { delayMs: 0, maxMs: 0 });
      await scheduler.start();
      await waitFor(() => looked >= 3, 15_000, 'three looks');
      assert.deepEqual(t.ran(), []);
      writeFileSync(file, 'video');
      await waitFor(async () => (await store.view.get(queued!.id))?.status === 'done', 15_000, 'the command to run');
      assert.deepEqual(t.ran(), [file]);
    });
  }
});

describe('import-autopulse with opts.check_path, then a relay started from what it wrote', () => {
  test('a manual request for a file not there yet: neither the Jellyfin nor the command target gets it until it exists', async () => {
    const dir = tempDir('file-wait-relay-');
    const library = join(dir, 'tv');
    mkdirSync(join(library, 'Show'), { recursive: true });
    const runs = join(dir, 'runs.txt');
    const prog = join(dir, 'hook.sh');
    writeFileSync(prog, `#!/bin/sh\nprintf '%s\\n' "$@" >> "${runs}"\n`);
    chmodSync(prog, 0o755);
    const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
    jellyfin.virtualFolders = [{ Name: 'TV', Locations: [library] }];
    // A config as autopulse's settings read it (settings/opts.rs:40-42 check_path; targets/jellyfin.rs, command.rs).
    const yaml = [
      'auth:\n  username: user\n  password: a-long-password',
      'opts:\n  check_path: true',
      'triggers:\n  my_manual:\n    type: manual',
      `targets:\n  my_jellyfin:\n    type: jellyfin\n    url: ${jellyfin.url}\n    token: jf-key\n  hook:\n    type: command\n    path: ${prog}`,
    ].join('\n');
    const imported = importAutopulse(yaml, 'config.yaml', {});
    assert.deepEqual(imported.config.SERVER_WAIT_FOR_FILES, { ENABLED: true, FIRST_CHECK_DELAY: 1, MAX_CHECK_DELAY: 60, GIVE_UP_AFTER: 864_000 });
    // The test's clock is shorter; the behaviour is the same.
    const { config } = parseConfig({
      ...imported.config,
      SERVER_WAIT_FOR_FILES: { ...(imported.config.SERVER_WAIT_FOR_FILES as object), FIRST_CHECK_DELAY: 0.02, MAX_CHECK_DELAY: 0.05 },
      SERVER_IP: '127.0.0.1',
      SERVER_PORT: 0,
      SERVER_SCAN_DELAY: 0,
      SERVER_PASS: 'test-secret',
    });
    const relay = await startRelay({ config, log: silentLogger(), queuefile: join(dir, 'queue.db') });
    try {
      const file = join(library, 'Show', 'Show - S01E03.mkv');
      const auth = { authorization: `Basic ${Buffer.from('user:a-long-password').toString('base64')}` };
      const res = await fetch(`${relay.url.replace(/\/[^/]*$/, '')}/triggers/my_manual?path=${encodeURIComponent(file)}`, { headers: auth });
      assert.equal(res.status, 200, await res.text());
      const waiting = await waitFor(async () => (await relay.store.view.listOpen()).find((e) => e.waiting === 'its files are not on disk yet (SERVER_WAIT_FOR_FILES)'), 15_000, 'the scan to wait for its file').then((e) => e!);
      assert.deepEqual(waiting.deliveries, []);
      assert.equal(jellyfin.updates.length, 0);
      assert.equal(existsSync(runs), false);
      writeFileSync(file, 'video');
      await waitFor(() => jellyfin.updates.length > 0 && existsSync(runs), 15_000, 'both targets to get the file');
      assert.deepEqual(jellyfin.updates.map((u) => u.path), [file]);
      assert.deepEqual(readFileSync(runs, 'utf8').split('\n').filter(Boolean), [file]);
    } finally {
      await relay.close();
      await jellyfin.stop();
    }
  });
});
