import type { FastifyInstance } from 'fastify';
import { scanDelayMax, type Config } from '../config/schema.ts';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../log.ts';
import { Metrics } from '../metrics/metrics.ts';
import { QueueIntake } from '../queue/intake.ts';
import { Scheduler, type SchedulerOptions } from '../queue/scheduler.ts';
import { QueueStore } from '../queue/store.ts';
import { buildTargets } from '../targets/index.ts';
import { ARR_RECOGNIZERS } from '../triggers/arr/index.ts';
import { recognizeManual, recognizeTest } from '../triggers/manual/recognize.ts';
import type { Recognizer } from '../triggers/intent.ts';
import { startDriveMonitor } from '../triggers/drive/index.ts';
import type { BackoffOptions } from '../drive/client.ts';
import { buildApp, type AppDeps } from './app.ts';
import { apiPlugin } from './dashboard/api.ts';
import { dashboardPlugin } from './dashboard/index.ts';
import { metricsPlugin } from './metrics.ts';

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
  /** Overrides for tests: targets and extra recognizers. */
  targets?: Target[];
  recognizers?: Recognizer[];
  plugins?: AppDeps['plugins'];
  /** The drive monitor's state for the dashboard (absent: "off"). */
  driveStatus?: AppDeps['driveStatus'];
}

export interface Relay {
  app: FastifyInstance;
  store: QueueStore;
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
  const store = new QueueStore(opts.queuefile);
  const targets = opts.targets ?? buildTargets(config, log);
  if (targets.length === 0) log.warn('no target is enabled (PLEX_ENABLED false, no JELLYFIN/EMBY): scans will queue but go nowhere');
  const metrics = new Metrics(store);
  const onDelivery = opts.scheduler?.onDelivery;
  const scheduler = new Scheduler(store, targets, log.child({ component: 'queue' }), {
    ...opts.scheduler,
    onDelivery: (event) => {
      metrics.delivery(event);
      onDelivery?.(event);
    },
  });
  const timing = { delayMs: config.SERVER_SCAN_DELAY * 1000, maxMs: scanDelayMax(config) * 1000 };
  const intake = new QueueIntake(store, () => timing, (results, requests) => {
    metrics.committed(requests, results);
    scheduler.poke();
  });
  const drive = config.GOOGLE.ENABLED
    ? startDriveMonitor({
        config,
        files: { cachefile: opts.cachefile ?? 'cache.db', tokenfile: opts.tokenfile ?? 'token.json' },
        store,
        intake,
        log,
        backoff: opts.driveBackoff,
        onPoll: (outcome) => metrics.drivePoll(outcome),
        onApiError: (kind) => metrics.driveApiError(kind),
      })
    : undefined;
  const app = await buildApp({
    drive: drive?.poller,
    config,
    log,
    intake,
    store,
    recognizers: opts.recognizers ?? DEFAULT_RECOGNIZERS,
    targets,
    metrics,
    driveStatus: opts.driveStatus ?? (drive ? () => drive.poller.status() : undefined),
    onQueued: () => scheduler.poke(),
    plugins: [apiPlugin, dashboardPlugin, metricsPlugin, ...(opts.plugins ?? [])],
  });
  scheduler.start();
  await app.listen({ host: config.SERVER_IP, port: config.SERVER_PORT });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.SERVER_PORT;
  const shownHost = config.SERVER_IP === '0.0.0.0' || config.SERVER_IP === '::' ? 'localhost' : config.SERVER_IP;
  const url = `http://${shownHost}:${port}/${config.SERVER_PASS}`;
  log.info({ url, port, queuefile: opts.queuefile }, `scan URL: ${url}`);
  return {
    app,
    store,
    scheduler,
    intake,
    metrics,
    url,
    async close() {
      await app.close();
      await drive?.close();
      await scheduler.stop();
      store.close();
    },
  };
}
