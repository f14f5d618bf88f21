import type { Config } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import type { QueueBackend } from './backend.ts';
import { QueueStore } from './store.ts';
import { instanceFile, RelayInstance } from './instance.ts';

/**
 * The queue a config describes: PostgreSQL when SERVER_QUEUE_URL is set (shared with every relay that has the
 * same URL; the driver is loaded only then), otherwise the SQLite file. The relay and every command that reads
 * or writes the queue open it here, so they never disagree on where it is. An unreachable database is a
 * one-line UserError naming the URL without its password (exit status 2).
 */
export async function openQueue(
  config: Pick<Config, 'SERVER_QUEUE_URL'> & Partial<Pick<Config, 'SERVER_QUEUE_LEASE' | 'SERVER_QUEUE_POOL'>>,
  queuefile: string,
  opts: { relayId: string; log?: Logger; readOnly?: boolean; relay?: boolean },
): Promise<QueueBackend> {
  if (!config.SERVER_QUEUE_URL) {
    const store = new QueueStore(queuefile, opts.log);
    // The relay's own file: move-queue refuses to move scans from under it.
    if (opts.relay) store.holdRelayLock();
    return store;
  }
  const { PgQueueStore } = await import('./pg/store.ts');
  // The relay's own id from its folder: a restart after kill -9 knows the turns its dead process left.
  const instance = opts.relay ? relayInstance(queuefile, opts.log) : undefined;
  try {
    return await PgQueueStore.open({ url: config.SERVER_QUEUE_URL, relayId: opts.relayId,
      ...(config.SERVER_QUEUE_LEASE ? { leaseMs: config.SERVER_QUEUE_LEASE * 1000 } : {}),
      ...(instance ? { instance } : {}),
      ...(config.SERVER_QUEUE_POOL ? { poolSize: config.SERVER_QUEUE_POOL } : {}),
      ...(opts.readOnly ? { readOnly: true } : {}),
      ...(opts.log ? { log: opts.log } : {}) });
  } catch (err) {
    instance?.release();
    throw err;
  }
}

/**
 * Makes or upgrades the shared queue's tables at `url`, as a relay does at its start: what else keeps its state
 * in that database (the drive cache, its lease) needs them. PostgreSQL's code is loaded only then.
 */
export async function migrateSharedQueue(url: string, application: string, log?: Logger): Promise<void> {
  const { connectAndMigrate } = await import('./pg/connection.ts');
  await connectAndMigrate(url, application, { log });
}

/** This folder's relay instance; none (turns wait out their lease after a restart) when another relay runs from it. */
function relayInstance(queuefile: string, log?: Logger): RelayInstance | undefined {
  try {
    const instance = RelayInstance.take(queuefile);
    if (!instance) log?.warn({ file: instanceFile(queuefile) }, 'another relay runs from this folder: after a restart this one waits out the lease of its old Plex turn (SERVER_QUEUE_LEASE)');
    return instance;
  } catch (err) {
    log?.warn({ err: (err as Error).message }, 'cannot keep this relay\'s id beside the queue file: after a restart it waits out the lease of its old Plex turn (SERVER_QUEUE_LEASE)');
    return undefined;
  }
}
