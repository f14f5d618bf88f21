import type { FastifyInstance } from 'fastify';
import { scanDelayMax, type Config } from '../config/schema.ts';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import { Metrics } from '../metrics/metrics.ts';
import { MountGuard, type MountGuardOptions } from '../paths/anchors.ts';
import { DiskSpaceGuard, distinctDisks, type DiskSpaceOptions, type WatchedDisk } from '../paths/disk-space.ts';
import { QueueIntake } from '../queue/door.ts';
import { relayRoutes } from '../queue/route.ts';
import { Scheduler, type SchedulerOptions } from '../queue/scheduler.ts';
import type { QueueBackend } from '../queue/backend.ts';
import { openQueue } from '../queue/open.ts';
import { hostname } from 'node:os';
import { buildTargets } from '../targets/index.ts';
import type { SetupProblem } from '../core/status.ts';
import { LibraryRoots } from '../targets/library-roots.ts';
import { FileGate } from '../queue/file-gate.ts';
import { diskLook, fileWaitPolicy } from './file-look.ts';
import { scannedWanted } from '../notify/message.ts';
import { ARR_RECOGNIZERS } from '../triggers/arr/index.ts';
import { recognizeManual, recognizeTest } from '../triggers/manual/recognize.ts';
import type { Recognizer } from '../intake/intent.ts';
import { importQueueAtStart } from '../peers/plex-autoscan/takeover.ts';
import type { BackoffOptions } from '../google/drive-client.ts';
import { buildApp } from './app.ts';
import { BurstSettler } from './settle.ts';
import type { AppDeps } from './deps.ts';
import { apiPlugin } from './dashboard/api.ts';
import { dashboardPlugin } from './dashboard/index.ts';
import { metricsPlugin } from './metrics.ts';
import { setupPlugin } from './setup-api.ts';
import { secretPath } from './secret-url.ts';
import { shortSecretUrl } from './redact.ts';
import { DEFAULT_AUTH_WARNING, isDefaultCredentials } from '../peers/autopulse/default-auth.ts';
import { UserError } from '../core/errors.ts';
import { describeTrustProxy } from '../config/trust-proxy.ts';
import { DiskFullMonitor } from '../db/disk-full.ts';
import { NotifySender, type SenderOptions } from '../notify/sender.ts';
import { notDiscordWebhooks, unknownNotificationTargets } from '../config/notifications.ts';

export interface RelayOptions {
  config: Config;
  log: Logger;
  queuefile: string;
  /** Drive monitoring files (`--cachefile`, `--tokenfile`); needed when GOOGLE.ENABLED. */
  cachefile?: string;
  tokenfile?: string;
  /** Drive API backoff override (tests). */
  driveBackoff?: BackoffOptions;
  scheduler?: SchedulerOptions;
  /** Folder watcher timing overrides (tests). */
  watch?: { writeSettleMs?: number; batchMs?: number };
  /** Mount guard timing override (tests). */
  mountGuard?: Pick<MountGuardOptions, 'intervalMs' | 'maxAgeMs'>;
  /** Disk space check overrides (tests: timing, and a statfs seam). */
  diskSpace?: Pick<DiskSpaceOptions, 'intervalMs' | 'maxAgeMs' | 'room'>;
  /** Overrides for tests: targets and extra recognizers. */
  targets?: Target[];
  recognizers?: Recognizer[];
  plugins?: AppDeps['plugins'];
  /** The drive monitor's state for the dashboard (absent: "off"). */
  driveStatus?: AppDeps['driveStatus'];
  /**
   * The starter file was just written: the full scan URL is logged (afterwards only a shortened form), and the
   * set-up gaps are the next steps (INFO), not surprises (WARN).
   */
  firstStart?: boolean;
  /** The config file, named where the shortened scan URL is logged. */
  configPath?: string;
  /** Notification sender timing overrides (tests). */
  notify?: Omit<SenderOptions, 'relayId'>;
}

export interface Relay {
  app: FastifyInstance;
  store: QueueBackend;
  scheduler: Scheduler;
  intake: QueueIntake;
  /** Counters other parts (the drive monitor) increment. */
  metrics: Metrics;
  url: string;
  close(): Promise<void>;
}

/**
 * Recognizers tried in order on POST /<secret>: manual requests, then the media managers' webhooks
 * (which answer their own Test with their name), then any other eventType=Test.
 */
export const DEFAULT_RECOGNIZERS: Recognizer[] = [recognizeManual, ...ARR_RECOGNIZERS, recognizeTest];

/** Wires trigger -> queue -> target and starts listening. */
export async function startRelay(opts: RelayOptions): Promise<Relay> {
  const { config, log } = opts;
  const store = await openRelayQueue(config, opts.queuefile, log);
  const trustNote = describeTrustProxy(config.SERVER_TRUST_PROXY);
  if (trustNote) log.info(trustNote);
  const targets = opts.targets ?? (await buildTargets(config, log));
  if (targets.length === 0 && store.shared) log.info('no target is enabled on this relay (PLEX_ENABLED false, no JELLYFIN/EMBY): it queues scans, and the relays sharing the queue that have targets deliver them');
  else if (targets.length === 0) log.warn('no target is enabled (PLEX_ENABLED false, no JELLYFIN/EMBY): scans will queue but go nowhere');
  // Created before the scheduler it wakes; started (first check) once the scheduler runs.
  let wake = () => {};
  const guard = config.SERVER_ANCHOR_FILES.length
    ? new MountGuard(config.SERVER_ANCHOR_FILES, log.child({ component: 'mount-guard' }), { ...opts.mountGuard, onRelease: () => wake() })
    : undefined;
  const disks = config.SERVER_DISK_MIN_FREE > 0 ? watchedDisks(config, store, opts.queuefile) : [];
  const diskSpace = disks.length
    ? new DiskSpaceGuard(disks, log.child({ component: 'disk-space' }), { ...opts.diskSpace, minFreeBytes: config.SERVER_DISK_MIN_FREE * 1e6, onChange: () => wake() })
    : undefined;
  const holdStatus =
    guard || diskSpace ? () => ({ ...(guard ? guard.status() : { held: false, missing: [] }), ...(diskSpace ? { fullDisks: diskSpace.status() } : {}) }) : undefined;
  const scanModes = () => targets.flatMap((t) => {
    const m = t.scanMode?.();
    return m ? [{ target: t.name, mode: m.mode }] : [];
  });
  // Reads the outbox the deliveries write; nothing on the delivery path waits for it. Started once the scheduler runs.
  const notifier = new NotifySender(store.outbox, config.NOTIFICATIONS ?? {}, log.child({ component: 'notify' }), { relayId: store.shared?.relayId ?? 'local', ...opts.notify });
  const notifications = () => notifier.status();
  const metrics = new Metrics(store.view, { held: holdStatus, scanModes, notifications, ...(store.shared ? { relay: store.shared.relayId } : {}) });
  const onDelivery = opts.scheduler?.onDelivery;
  const diskFull = new DiskFullMonitor(opts.queuefile, log);
  const libraries = new LibraryRoots(targets, log.child({ component: 'libraries' }));
  // SERVER_WAIT_FOR_FILES: no target gets a scan before its files are on this relay's disk (queue/file-wait.ts).
  const fileGate = config.SERVER_WAIT_FOR_FILES.ENABLED
    ? new FileGate(diskLook(config, libraries), fileWaitPolicy(config), log.child({ component: 'file-wait' }))
    : undefined;
  const scheduler = new Scheduler(store, targets, log.child({ component: 'queue' }), {
    ...(fileGate ? { fileGate } : {}),
    ...(guard ? { held: () => guard.held() } : {}),
    ...(diskSpace ? { fullDisks: () => diskSpace.fullDisks() } : {}),
    diskFull,
    // `scanned` carries the items the scan added only for a destination that takes it: the lookup costs Plex a listing.
    scannedItems: (target, trigger) => scannedWanted(Object.values(config.NOTIFICATIONS ?? {}), target, trigger),
    ...opts.scheduler,
    onDelivery: (event) => {
      metrics.delivery(event);
      onDelivery?.(event);
    },
  });
  const timing = { delayMs: config.SERVER_SCAN_DELAY * 1000, maxMs: scanDelayMax(config) * 1000 };
  // Where each request goes is decided once, here, and stored with its scan (queue/route.ts).
  const routes = relayRoutes(config, targets);
  const intake = new QueueIntake(
    store,
    routes,
    () => ({ ...timing, roots: libraries.known() }),
    (results, requests) => {
      metrics.committed(requests, results);
      if (results.length) scheduler.wakeBy(Math.min(...results.map((r) => r.dueAt)));
    },
  );
  // The migration to explicit routes: scans queued without one (before issue 49) get theirs now, before any is due.
  const routed = await intake.routeUnrouted();
  if (routed) log.info({ scans: routed }, 'queued scans from before routes were stored now name the targets they go to');
  // Loaded only when configured: the drive client, cache and poller cost memory a relay without them never needs.
  const inPlexCheck = config.GOOGLE.ENABLED
    ? (await import('../targets/plex/in-plex-check.ts')).openInPlexCheck(config, log.child({ component: 'drive' }))
    : undefined;
  // With a shared queue the cache and the page token are in PostgreSQL, and a lease picks the one relay that polls.
  const drive = config.GOOGLE.ENABLED
    ? await (await import('../triggers/drive/index.ts')).startDriveMonitor({
        inPlex: inPlexCheck?.inPlex,
        config,
        files: { cachefile: opts.cachefile ?? 'cache.db', tokenfile: opts.tokenfile ?? 'token.json' },
        store,
        intake,
        log,
        backoff: opts.driveBackoff,
        onPoll: (outcome) => metrics.drivePoll(outcome),
        onApiError: (kind) => metrics.driveApiError(kind),
        leaseMs: config.SERVER_QUEUE_LEASE * 1000,
      })
    : undefined;
  // What the Plex scan method needs, checked once at start (logged and shown on the dashboard).
  let setupProblems: SetupProblem[] = [];
  // autopulse's default pair: said at every start, and on the dashboard while it stays (issue 47 item 4).
  if (isDefaultCredentials(config.SERVER_AUTH_USER, config.SERVER_AUTH_PASS)) {
    setupProblems = [{ key: 'SERVER_AUTH_PASS', message: DEFAULT_AUTH_WARNING }];
    log.warn({ key: 'SERVER_AUTH_PASS' }, DEFAULT_AUTH_WARNING);
  }
  // Loaded only when configured: chokidar is not needed otherwise.
  const watcher = config.WATCH.ENABLED
    ? new (await import('../triggers/watch/index.ts')).FolderWatcher({ config, intake, log, ...opts.watch })
    : undefined;
  await watcher?.start();
  const app = await buildApp({
    drive: drive?.poller,
    config,
    log,
    intake,
    store,
    diskFull,
    recognizers: opts.recognizers ?? DEFAULT_RECOGNIZERS,
    targets,
    libraries,
    metrics,
    driveStatus: opts.driveStatus ?? (drive ? () => drive.poller.status() : undefined),
    holdStatus,
    notifications,
    onQueued: () => scheduler.poke(),
    setupProblems: () => setupProblems,
    plugins: [apiPlugin, dashboardPlugin, metricsPlugin, setupPlugin, ...(opts.plugins ?? [])],
    ...(opts.configPath ? { configPath: opts.configPath } : {}),
  });
  const settler = new BurstSettler(log).attach(app);
  // plex_autoscan's pending scans in the same queue file are taken over once, before delivery starts.
  await importQueueAtStart({ queuefile: opts.queuefile, config, intake, log });
  await listenOrExplain(app, config, async () => {
    await watcher?.close();
    await drive?.close();
    inPlexCheck?.close();
    await store.close();
  });
  wake = () => scheduler.poke();
  guard?.start();
  diskSpace?.start();
  await scheduler.start();
  for (const warning of [...unknownNotificationTargets(config.NOTIFICATIONS ?? {}, [...config.targets.keys()]), ...notDiscordWebhooks(config.NOTIFICATIONS ?? {})]) {
    log.warn({ key: 'NOTIFICATIONS' }, warning);
  }
  notifier.start();
  // Learn the library roots early, so scans queued before the first HTTP request (drive changes) are bounded too.
  void libraries.check([]).catch(() => undefined);
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.SERVER_PORT;
  const shownHost = config.SERVER_IP === '0.0.0.0' || config.SERVER_IP === '::' ? 'localhost' : config.SERVER_IP;
  const base = `http://${shownHost}:${port}`;
  const url = `${base}/${secretPath(config.SERVER_PASS)}`;
  // The full secret goes to the log once, when the starter file was just written; afterwards a shortened
  // form and where to find it, so a shared log does not hand out the relay.
  const shown = opts.firstStart ? url : shortSecretUrl(base, config.SERVER_PASS);
  const where = opts.firstStart ? '' : ` (the full secret is SERVER_PASS in ${opts.configPath ?? 'the config file'})`;
  log.info({ url: shown, port, queue: store.location, ...(store.shared ? { relay: store.shared.relayId } : {}) }, `scan URL: ${shown}${where}`);
  // What each target's set-up needs (Plex: its scan method), checked once at start against its own settings.
  const setupChecked = Promise.all(
    targets.map((target) =>
      target.setupProblems?.().then(
        (problems) => {
          setupProblems = [...setupProblems, ...problems];
          for (const p of problems) {
            if (opts.firstStart) log.info({ target: target.name, key: p.key }, `next step: ${p.message}`);
            else log.warn({ target: target.name, key: p.key }, p.message);
          }
        },
        (err: unknown) => log.warn({ target: target.name, err: (err as Error).message }, 'the set-up check failed'),
      ),
    ),
  );
  return {
    app,
    store,
    scheduler,
    intake,
    metrics,
    url,
    async close() {
      await setupChecked;
      settler.stop();
      await app.close();
      guard?.stop();
      diskSpace?.stop();
      await watcher?.close();
      await drive?.close();
      await scheduler.stop();
      await notifier.stop();
      await store.close();
    },
  };
}

/**
 * The disks SERVER_DISK_MIN_FREE watches: each anchor's (scans wait while one is full: a scan then may see files cut
 * short) and the SQLite queue file's (told only; docs/notifications.md says why). One per file system.
 */
function watchedDisks(config: Config, store: QueueBackend, queuefile: string): WatchedDisk[] {
  const media = config.SERVER_ANCHOR_FILES.map((file) => ({ file, holds: true, what: 'the media (SERVER_ANCHOR_FILES)' }));
  const queue = store.shared || store.location === ':memory:' ? [] : [{ file: queuefile, holds: false, what: 'the queue file' }];
  return distinctDisks([...media, ...queue]);
}

/** The queue (queue/open.ts), named in a shared queue by SERVER_RELAY_ID or <hostname>:<SERVER_PORT>. */
function openRelayQueue(config: Config, queuefile: string, log: Logger): Promise<QueueBackend> {
  const relayId = config.SERVER_RELAY_ID || `${hostname()}:${config.SERVER_PORT || process.pid}`;
  return openQueue(config, queuefile, { relayId, log: log.child({ component: 'queue' }), relay: true });
}

/** A busy port is a user's problem, told in one line (exit 2), not a stack trace. */
async function listenOrExplain(app: FastifyInstance, config: Config, cleanup: () => Promise<void>): Promise<void> {
  try {
    await app.listen({ host: config.SERVER_IP, port: config.SERVER_PORT });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const unknownHost = code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL';
    if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL' && !unknownHost) throw err;
    await app.close();
    await cleanup();
    if (code === 'EADDRINUSE') {
      throw new UserError(`port ${config.SERVER_PORT} (SERVER_PORT) is in use: another relay or plex_autoscan may be running`);
    }
    if (code === 'EACCES') throw new UserError(`port ${config.SERVER_PORT} (SERVER_PORT) needs privileges this user lacks: pick a port above 1023`);
    if (unknownHost) {
      throw new UserError(`SERVER_IP ${JSON.stringify(config.SERVER_IP)} is not an IP address or a host name this machine can resolve: use "0.0.0.0" (every address), "127.0.0.1" (this machine only) or one of this machine's addresses`);
    }
    throw new UserError(`address ${config.SERVER_IP} (SERVER_IP) is not an address of this machine`);
  }
}
