import { join } from 'node:path';
import type { Config } from '../src/config/schema.ts';
import { writeTokenFile } from '../src/google/token-file.ts';
import { silentLogger } from '../src/core/logger.ts';
import { QueueIntake } from '../src/queue/door.ts';
import { QueueStore } from '../src/queue/store.ts';
import { openDrive } from '../src/triggers/drive/index.ts';
import { DrivePoller } from '../src/triggers/drive/poller.ts';
import type { FakeGoogle } from '../test/fakes/google.ts';

/**
 * The real drive poller (client, watcher, cache) against the fake Google, with a token of the fake's, a queue
 * and a cache in `dir`; scans only queue (due in a minute). Seed the fake's existing items before calling.
 */
export function drivePollerOn(google: FakeGoogle, config: Config, dir: string) {
  const cachefile = join(dir, 'cache.db');
  const tokenfile = join(dir, 'token.json');
  writeTokenFile(tokenfile, google.issueToken());
  const store = new QueueStore(join(dir, 'queue.db'));
  const intake = new QueueIntake(store, [], () => ({ delayMs: 60_000, maxMs: 0 }));
  const log = silentLogger();
  const { watcher, cache } = openDrive(config, { cachefile, tokenfile }, log);
  const poller = new DrivePoller({ config, watcher, cache, store, intake, inPlex: () => false, log });
  return {
    poller,
    store,
    cachefile,
    async close(): Promise<void> {
      await poller.stop();
      cache.close();
      store.close();
    },
  };
}
