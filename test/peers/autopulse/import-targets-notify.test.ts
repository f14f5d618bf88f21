import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { importAutopulse } from '../../../src/peers/autopulse/import.ts';
import { configSchema, scanDelayMax, type Config, type FileConfig } from '../../../src/config/schema.ts';
import { relayConfig } from '../../../src/config/named-targets.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { QueueIntake } from '../../../src/queue/door.ts';
import { relayRoutes } from '../../../src/queue/route.ts';
import { QueueStore } from '../../../src/queue/store.ts';
import { buildApp } from '../../../src/server/app.ts';
import { DEFAULT_RECOGNIZERS } from '../../../src/server/run.ts';
import { LibraryRoots } from '../../../src/targets/library-roots.ts';
import { createTarget } from '../../../src/targets/registry.ts';
import { FolderWatcher } from '../../../src/triggers/watch/index.ts';
import { FakeMediaServer } from '../../fakes/jellyfin.ts';
import { FakeRelayPeer } from '../../fakes/relay-peer.ts';
import { scanItem } from '../../helpers/plex-target.ts';
import { tempDir, waitFor } from '../../helpers/relay.ts';

/*
 * Issue 48 item 7: what autopulse's targets and notify trigger promise, carried by import-autopulse. Configs are
 * written from autopulse's settings code (dan-online/autopulse 55124fd): settings/targets/autopulse.rs:11-27,
 * settings/targets/emby.rs:22-58, settings/triggers/notify.rs:47-73.
 */

const AUTH = { authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` };
const log = silentLogger();
let closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

const imported = (yaml: string) => relayConfig(configSchema.parse({ ...importAutopulse(yaml, 'config.yaml', {}).config, SERVER_PASS: 'test-secret', SERVER_QUEUE_URL: undefined }) as FileConfig);

describe('the forward (autopulse) target passes the hash on (targets/autopulse.rs:51-52)', () => {
  test("a manual request's hash goes with its file to the next autopulse, and with no other file", async () => {
    const peer = await new FakeRelayPeer('autopulse', { user: 'admin', pass: 'up-pw' }).start();
    closers.push(() => peer.stop());
    const config = imported(`
triggers:
  manual:
    type: manual
targets:
  upstream:
    type: autopulse
    url: ${peer.url}
    auth: { username: admin, password: up-pw }
`);
    const store = new QueueStore(join(tempDir('forward-hash-'), 'queue.db'));
    closers.push(() => store.close());
    const timing = { delayMs: config.SERVER_SCAN_DELAY * 1000, maxMs: scanDelayMax(config) * 1000 };
    const app = await buildApp({ config, log, intake: new QueueIntake(store, relayRoutes(config), () => timing), store, recognizers: DEFAULT_RECOGNIZERS });
    closers.push(() => app.close());
    const hash = 'a'.repeat(64);
    const folder = '/media/movies/Heat (1995)';
    // opts.check_path off (autopulse's default): the hash is kept with the row and passed on (triggers.rs:150-153).
    const first = await app.inject({ method: 'GET', url: `/triggers/manual?path=${encodeURIComponent(`${folder}/Heat.mkv`)}&hash=${hash}`, headers: AUTH });
    assert.equal(first.statusCode, 200, first.body);
    const second = await app.inject({ method: 'GET', url: `/triggers/manual?path=${encodeURIComponent(`${folder}/Heat.srt`)}`, headers: AUTH });
    assert.equal(second.statusCode, 200, second.body);
    // /status shows each file's own hash, as autopulse's row keeps its file_hash (models.rs:77-119).
    const status = async (id: string) => (await app.inject({ method: 'GET', url: `/status/${id}`, headers: AUTH })).json();
    assert.equal((await status(first.json().id)).file_hash, hash);
    assert.equal((await status(second.json().id)).file_hash, null);
    const [entry] = store.view.listOpen();
    assert.ok(entry);
    const target = await createTarget('upstream', config.TARGETS!.upstream!, log, config);
    const full = store.view.get(entry.id)!;
    const result = await target.deliver(scanItem({ id: full.id, folder: full.folder, files: full.files, ids: full.ids }));
    assert.equal(result.outcome, 'done', JSON.stringify(result));
    const calls = peer.callsTo('GET', '/triggers/manual').map((c) => [c.query.get('path'), c.query.get('hash')]);
    assert.deepEqual(calls.sort(), [
      [`${folder}/Heat.mkv`, hash],
      [`${folder}/Heat.srt`, null],
    ]);
  });
});

describe("Jellyfin's path_match is carried (emby.rs:44-58, 167-170)", () => {
  test('case_insensitive: a library folder holds a path whatever its ASCII case, for the intake check and for refreshes', async () => {
    const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
    closers.push(() => jellyfin.stop());
    jellyfin.virtualFolders = [{ Name: 'tv', Locations: ['//NAS/Media/TV'] }];
    jellyfin.items = [{ Id: 'ep1', Path: '//nas/media/tv/Dark/S1/e1.mkv', library: 'tv' }];
    const yaml = (match: string) => `
targets:
  jf:
    type: jellyfin
    url: ${jellyfin.url}
    token: jf-key
    path_match: ${match}
`;
    const result = importAutopulse(yaml('case_insensitive'), 'config.yaml', {});
    assert.equal((result.config.TARGETS as Record<string, Record<string, unknown>>).jf!.PATH_MATCH, 'case_insensitive');
    assert.ok(result.carried.some((l) => /path_match -> PATH_MATCH "case_insensitive"/.test(l)), result.carried.join('\n'));
    assert.ok(!result.notCarried.some((l) => /path_match/.test(l)), 'no longer printed as a refresh-mode setting');
    const insensitive = imported(yaml('case_insensitive'));
    const sensitive = imported(yaml('case_sensitive'));
    const folder = '//nas/media/tv/Dark/S1';
    const outside = async (c: Config) => (await new LibraryRoots([await createTarget('jf', c.TARGETS!.jf!, log, c)], log).check([folder])).outside;
    assert.deepEqual(await outside(insensitive), []);
    assert.deepEqual(await outside(sensitive), [folder], 'compared as written by default, as autopulse');
    const target = await createTarget('jf', { ...insensitive.TARGETS!.jf!, REFRESH_METADATA: true } as never, log, insensitive);
    assert.equal((await target.deliver(scanItem({ folder, files: [`${folder}/e1.mkv`] }))).outcome, 'done');
    assert.deepEqual(jellyfin.itemRefreshes.map((r) => r.id), ['ep1'], 'the library that holds the file is searched');
  });
});

describe("the notify trigger's recursive, debounce, timer and excludes (notify.rs:47-73) and its polling interval (notify.rs:156)", () => {
  const NOTIFY = (root: string) => `
opts:
  default_timer_wait: 5
triggers:
  downloads:
    type: notify
    paths: ["${root}"]
    recursive: false
    debounce: 4
    backend: polling
    timer: { wait: 30 }
    excludes: [jf]
targets:
  plex1: { type: plex, url: "http://plex:32400", token: t }
  jf: { type: jellyfin, url: "http://jellyfin:8096", token: t }
`;

  test('carried onto its WATCH.PATHS entry, and the printout says so', () => {
    const r = importAutopulse(NOTIFY('/watch'), 'config.yaml', {});
    const watch = r.config.WATCH as Record<string, unknown>;
    assert.deepEqual(watch.PATHS, [{ PATH: '/watch', RECURSIVE: false, DELAY: 30, EXCLUDE_TARGETS: ['jf'] }]);
    assert.equal(watch.POLL, true);
    assert.equal(watch.POLL_INTERVAL, 10, "autopulse's polling backend looks every 10 s");
    assert.equal(watch.SETTLE, 4);
    assert.equal(r.config.SERVER_SCAN_DELAY_MAX, 30, 'the longest wait bounds the scans');
    assert.ok(!r.notCarried.some((l) => /recursive|debounce|timer\.wait|excludes/.test(l)), r.notCarried.join('\n'));
    assert.ok(r.carried.some((l) => /every 10 s/.test(l)));
    const parsed = imported(NOTIFY('/watch'));
    assert.equal(parsed.WATCH.SETTLE, 4);
  });

  test('the watcher honours them: a file in a sub-folder is left alone, one in the folder is queued with its delay and route', async () => {
    const root = tempDir('notify-recursive-');
    mkdirSync(join(root, 'sub'));
    const config = relayConfig(configSchema.parse({ ...importAutopulse(NOTIFY(root), 'config.yaml', {}).config, SERVER_PASS: 'test-secret', SERVER_QUEUE_URL: undefined, WATCH: { ...(importAutopulse(NOTIFY(root), 'config.yaml', {}).config.WATCH as object), POLL: false } }) as FileConfig);
    const store = new QueueStore(join(tempDir('notify-queue-'), 'queue.db'));
    closers.push(() => store.close());
    const timing = { delayMs: 5000, maxMs: 30_000 };
    const watcher = new FolderWatcher({ config, intake: new QueueIntake(store, relayRoutes(config), () => timing), log, writeSettleMs: 50, batchMs: 20 });
    await watcher.start();
    closers.push(() => watcher.close());
    writeFileSync(join(root, 'sub', 'deep.mkv'), 'x');
    writeFileSync(join(root, 'top.mkv'), 'x');
    await waitFor(() => store.view.listOpen().length > 0, 10_000);
    // The deep file's event came first or with the top one; once the top one is queued, give a late one a bounded chance.
    const open = store.view.listOpen();
    assert.deepEqual(open.map((e) => e.folder), [root]);
    assert.deepEqual(open[0]!.targets, ['plex1'], 'excludes: jf');
    assert.ok(open[0]!.dueAt - open[0]!.firstAt >= 30_000 - 1, 'timer.wait 30 s, not SERVER_SCAN_DELAY');
    assert.deepEqual(open[0]!.files, [join(root, 'top.mkv')]);
  });
});
