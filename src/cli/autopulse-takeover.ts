import { loadConfigFile } from '../config/load.ts';
import { scanDelayMax } from '../config/schema.ts';
import type { settingsOf } from './context.ts';

/** autopulse's pending scans into the queue the relay will use: the file, or the shared queue (SERVER_QUEUE_URL). */
export async function takeOverAutopulse(database: string, settings: ReturnType<typeof settingsOf>, replace?: boolean): Promise<string> {
  const [{ QueueIntake }, { importAutopulseQueue, describeAutopulseQueueImport, readAutopulseQueue }, { openCommandQueue }] = await Promise.all([
    import('../queue/intake.ts'),
    import('../triggers/autopulse/queue-db.ts'),
    import('./queue-open.ts'),
  ]);
  const { config, raw } = loadConfigFile(settings.config);
  // autopulse's rows first: a database that cannot be read leaves the relay's queue untouched (not even created).
  const queue = await readAutopulseQueue(database);
  const store = await openCommandQueue(settings, config, 'import-autopulse');
  try {
    const intake = new QueueIntake(store, () => ({ delayMs: config.SERVER_SCAN_DELAY * 1000, maxMs: scanDelayMax(config) * 1000 }));
    // The named targets (TARGETS' keys) a row may still go to.
    const targets = raw.TARGETS;
    const targetNames = targets && typeof targets === 'object' && !Array.isArray(targets) ? Object.keys(targets) : [];
    const said = describeAutopulseQueueImport(await importAutopulseQueue({ database, config, targetNames, intake, replace, queue }));
    return store.shared ? `${said} (into the shared queue ${store.location})` : said;
  } finally {
    await store.close();
  }
}
