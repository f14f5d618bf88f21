import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { configSchema, scanDelayMax, type Config, type FileConfig } from '../../src/config/schema.ts';
import { relayConfig } from '../../src/config/named-targets.ts';
import { silentLogger, type Logger } from '../../src/core/logger.ts';
import type { FolderProbe } from '../../src/paths/folder.ts';
import { QueueIntake } from '../../src/queue/door.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { buildApp } from '../../src/server/app.ts';
import type { AppDeps } from '../../src/server/deps.ts';
import { DEFAULT_RECOGNIZERS } from '../../src/server/run.ts';
import { tempDir } from './relay.ts';

export const SECRET = 'test-secret';

export interface TestApp {
  app: FastifyInstance;
  store: QueueStore;
  config: Config;
  close(): Promise<void>;
}

/**
 * The relay's HTTP app wired as startRelay wires it (a real QueueStore on a temp file, the default
 * recognizers) but without targets or a scheduler, for fast `app.inject()` tests: scans stay queued.
 */
export async function buildTestApp(
  config: Record<string, unknown> = {},
  extra: { probe?: FolderProbe; drive?: AppDeps['drive']; log?: Logger; plugins?: AppDeps['plugins'] } = {},
): Promise<TestApp> {
  const dir = tempDir('scanrelay-app-');
  const parsed = relayConfig(configSchema.parse({ SERVER_PASS: SECRET, SERVER_SCAN_DELAY: 60, ...config }) as FileConfig);
  const store = new QueueStore(join(dir, 'queue.db'));
  const timing = { delayMs: parsed.SERVER_SCAN_DELAY * 1000, maxMs: scanDelayMax(parsed) * 1000 };
  const intake = new QueueIntake(store, [], () => timing);
  const { log = silentLogger(), ...rest } = extra;
  const app = await buildApp({ config: parsed, log, intake, store, recognizers: DEFAULT_RECOGNIZERS, ...rest });
  await app.ready();
  return {
    app,
    store,
    config: parsed,
    async close() {
      await app.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
