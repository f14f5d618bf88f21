import { loadConfigFile } from '../../config/load.ts';
import type { settingsOf } from '../../cli/context.ts';

/** autopulse's pending scans into the queue the relay will use: the file, or the shared queue (SERVER_QUEUE_URL). */
export async function takeOverAutopulse(database: string, settings: ReturnType<typeof settingsOf>, replace?: boolean): Promise<string> {
  const [{ configIntake }, { importAutopulseQueue, describeAutopulseQueueImport, readAutopulseQueue }, { openCommandQueue }, { recordTakenOver }] = await Promise.all([
    import('../../queue/door.ts'),
    import('./queue-db.ts'),
    import('../../cli/queue-open.ts'),
    import('./holds.ts'),
  ]);
  const { config } = loadConfigFile(settings.config);
  // autopulse's rows first: a database that cannot be read leaves the relay's queue untouched (not even created).
  const queue = await readAutopulseQueue(database);
  const store = await openCommandQueue(settings, config, 'import-autopulse');
  try {
    const intake = configIntake(store, config);
    // The named targets (the one target model: TARGETS and the top-level PLEX_*, JELLYFIN, EMBY) a row may still go to.
    const targetNames = [...config.targets.keys()];
    const result = await importAutopulseQueue({ database, config, targetNames, intake, replace, queue });
    // autopulse's uuids stay answerable at /status/<uuid> (issue 48 item 3).
    await recordTakenOver(store.meta, result.taken);
    const said = describeAutopulseQueueImport(result);
    return store.shared ? `${said} (into the shared queue ${store.location})` : said;
  } finally {
    await store.close();
  }
}
