import type { FastifyInstance } from 'fastify';
import { scanDelayMax, type Config } from '../config/schema.ts';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../log.ts';
import { QueueIntake } from '../queue/intake.ts';
import { Scheduler, type SchedulerOptions } from '../queue/scheduler.ts';
import { QueueStore } from '../queue/store.ts';
import { buildTargets } from '../targets/index.ts';
import { ARR_RECOGNIZERS } from '../triggers/arr/index.ts';
import { recognizeManual, recognizeTest } from '../triggers/manual/recognize.ts';
import type { Recognizer } from '../triggers/intent.ts';
import { buildApp, type AppDeps } from './app.ts';

export interface RelayOptions {
  config: Config;
  log: Logger;
  queuefile: string;
  scheduler?: SchedulerOptions;
  /** Overrides for tests: targets and extra recognizers. */
  targets?: Target[];
  recognizers?: Recognizer[];
  plugins?: AppDeps['plugins'];
}

export interface Relay {
  app: FastifyInstance;
  store: QueueStore;
  scheduler: Scheduler;
  intake: QueueIntake;
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
  const scheduler = new Scheduler(store, targets, log.child({ component: 'queue' }), opts.scheduler);
  const timing = { delayMs: config.SERVER_SCAN_DELAY * 1000, maxMs: scanDelayMax(config) * 1000 };
  const intake = new QueueIntake(store, () => timing, () => scheduler.poke());
  const app = await buildApp({
    config,
    log,
    intake,
    store,
    recognizers: opts.recognizers ?? DEFAULT_RECOGNIZERS,
    plugins: opts.plugins,
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
    url,
    async close() {
      await app.close();
      await scheduler.stop();
      store.close();
    },
  };
}
