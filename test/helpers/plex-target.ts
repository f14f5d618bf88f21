import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import pino from 'pino';
import { configSchema, type Config, type FileConfig } from '../../src/config/schema.ts';
import { legacyPlexTarget, namedTargets } from '../../src/config/named-targets.ts';
import { plexSettings, type PlexSettings } from '../../src/targets/plex/settings.ts';
import type { ScanItem, Target } from '../../src/core/scan.ts';
import type { Logger } from '../../src/core/logger.ts';
import { Scheduler } from '../../src/queue/scheduler.ts';
import { QueueStore } from '../../src/queue/store.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { PlexApiBackend } from '../../src/targets/plex/backends/api.ts';
import { PlexDatabase } from '../../src/targets/plex/database.ts';
import { RcloneRc } from '../../src/targets/plex/rclone-rc.ts';
import { PlexTarget, type PlexSteps, type PlexTimings } from '../../src/targets/plex/target.ts';
import { plexApiFor } from '../../src/targets/plex/tls-policy.ts';
import { FakePlex } from '../fakes/plex.ts';
import { tempDir } from './relay.ts';

/**
 * A config as loading a file would give it (plex_autoscan defaults for everything not set): the relay's `targets`,
 * and the file's keys beside them, so a test can spread a PLEX_* key over it for makePlexTarget / plexSettingsOf.
 */
export type TestConfig = FileConfig & Config;

export function testConfig(overrides: Record<string, unknown> = {}): TestConfig {
  const file = configSchema.parse({ SERVER_PASS: 'test-secret', ...overrides }) as FileConfig;
  return { ...file, targets: namedTargets(file) };
}

/** The settings of the Plex target a config's PLEX_* keys stand for (`plex`), as loading builds them. */
export function plexSettingsOf(config: FileConfig): PlexSettings {
  return plexSettings(legacyPlexTarget({ ...config, PLEX_ENABLED: true })!, config);
}

/** Fast waits for tests; the behaviour is the same, only the clock is shorter. */
export const FAST_TIMINGS: Partial<PlexTimings> = {
  externalScanPollMs: 50,
  aliveRetryMs: 50,
  aliveRetryMaxMs: 200,
  // Tests change Plex's activities between two calls: no snapshot reuse (concurrent reads still share one).
  activitiesMaxAgeMs: 0,
  completionPollMs: 30,
  completionAppearMs: 150,
  completionFallbackMs: 50,
  externalScanStreamPollMs: 50,
  streamBackoffMs: 100,
  streamBackoffMaxMs: 400,
  lookupTries: 3,
  lookupDelayMs: 30,
  emptyTrashTries: 2,
  emptyTrashRetryMs: 30,
};

/** A logger that keeps every line as an object, so tests can assert what a user would read in the log. */
export function recordingLogger(): { log: Logger; lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = [];
  const log = pino({ level: 'debug', base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines };
}

/**
 * A fake Plex of this test's own, stopped when the test ends. A fake shared by several tests carries one test's
 * scans (shown as running library scans), streams and counters into the next, which then waits for "another Plex
 * library scan" or counts calls it did not make.
 */
export async function ownPlex(t: TestContext, opts?: ConstructorParameters<typeof FakePlex>[0]): Promise<FakePlex> {
  const plex = await new FakePlex(opts).start();
  t.after(() => plex.stop());
  return plex;
}

export function makePlexTarget(
  plex: FakePlex,
  config: FileConfig,
  opts: { timings?: Partial<PlexTimings>; log?: Logger; notifications?: PlexSteps['notifications']; t?: TestContext; name?: string } = {},
): PlexTarget {
  const settings = plexSettingsOf(config);
  const api = plexApiFor({ ...settings, URL: plex.url });
  const refresh = config.RCLONE.RC_CACHE_REFRESH;
  const log = opts.log ?? pino({ level: 'silent' });
  const target = new PlexTarget(new PlexApiBackend(api), log, {
    settings,
    api,
    db: new PlexDatabase(settings.DATABASE_PATH),
    rclone: refresh.ENABLED ? new RcloneRc(refresh, log) : undefined,
    timings: { ...FAST_TIMINGS, ...opts.timings },
    notifications: opts.notifications,
  }, opts.name);
  // Given the test: its notification stream closes when the test ends, instead of reconnecting for the rest of the file.
  opts.t?.after(() => target.close());
  return target;
}

/** A ScanItem as the queue hands it over. */
export function scanItem(partial: Partial<ScanItem> & Pick<ScanItem, 'folder'>): ScanItem {
  return {
    id: 1,
    files: [],
    moreFiles: 0,
    source: 'Manual',
    event: 'Manual',
    title: null,
    ids: {},
    updateType: 'Modified',
    priority: 0,
    requests: 1,
    upgrade: false,
    firstAt: Date.now(),
    attempt: 1,
    fileChecks: 0,
    ...partial,
  };
}

/** An in-memory queue with a running scheduler over the given targets (fast retries). */
export function runQueue(targets: Target[], opts: { concurrency?: number; log?: Logger } = {}): { store: QueueStore; scheduler: Scheduler; enqueue: (folder: string, files?: string[], extra?: Record<string, unknown>) => number; close: () => Promise<void> } {
  const store = new QueueStore(':memory:');
  const scheduler = new Scheduler(store, targets, opts.log ?? pino({ level: 'silent' }), { concurrency: opts.concurrency ?? 4, retryBaseMs: 50, retryMaxMs: 200 });
  scheduler.start();
  return {
    store,
    scheduler,
    enqueue(folder, files = [], extra = {}) {
      const [r] = store.enqueueMany([{ folder, files, source: 'Manual', event: 'Manual', updateType: 'Modified', priority: 0, ...extra } as any], { delayMs: 0, maxMs: 0 });
      scheduler.poke();
      return r!.id;
    },
    async close() {
      await scheduler.stop();
      store.close();
    },
  };
}

/**
 * runQueue over any store (SQLite or PostgreSQL, from bothStores()): a running scheduler, and an enqueue that
 * answers with the scan's id once it is queued. The caller's bothStores() closes a PostgreSQL store.
 */
export async function runQueueOn(
  store: QueueBackend,
  targets: Target[],
  opts: { concurrency?: number; log?: Logger } = {},
): Promise<{ store: QueueBackend; scheduler: Scheduler; enqueue: (folder: string, files?: string[], extra?: Record<string, unknown>) => Promise<number>; close: () => Promise<void> }> {
  const scheduler = new Scheduler(store, targets, opts.log ?? pino({ level: 'silent' }), { concurrency: opts.concurrency ?? 4, retryBaseMs: 50, retryMaxMs: 200 });
  await scheduler.start();
  return {
    store,
    scheduler,
    async enqueue(folder, files = [], extra = {}) {
      const [r] = await store.enqueueMany([{ folder, files, source: 'Manual', event: 'Manual', updateType: 'Modified', priority: 0, ...extra } as any], { delayMs: 0, maxMs: 0 });
      scheduler.poke();
      return r!.id;
    },
    async close() {
      await scheduler.stop();
    },
  };
}

/** A media tree in a temp dir: `local` is where scanrelay sees `/data`, for SERVER_FILE_EXIST_PATH_MAPPINGS. */
export function mediaTree(): { root: string; local: string; put: (plexPath: string, content?: string) => string; mappings: Record<string, string[]> } {
  const root = tempDir('scanrelay-media-');
  const local = join(root, 'mnt');
  mkdirSync(local, { recursive: true });
  const toLocal = (plexPath: string) => join(local, plexPath.replace(/^\/data\/?/, ''));
  return {
    root,
    local,
    put(plexPath, content = 'video') {
      const file = toLocal(plexPath);
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, content);
      return file;
    },
    mappings: { [`${local}/`]: ['/data/'] },
  };
}
