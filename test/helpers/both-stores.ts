import { after, before } from 'node:test';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { startPgCluster, type PgCluster } from './postgres.ts';

/** Opens a fresh store; PostgreSQL's takes a relay id and an existing database's URL (a second relay on it). */
export type OpenStore = (relay?: string, url?: string) => Promise<QueueBackend & { url?: string }>;

/**
 * The two queue stores, for a test file that holds both to the same answers: SQLite in memory, and PostgreSQL in a
 * fresh database of a cluster the file starts before its tests and removes after them, once every store opened
 * here (or pushed to `opened`) is closed.
 */
export function bothStores(): { stores: Array<[string, OpenStore]>; cluster: () => PgCluster; opened: QueueBackend[] } {
  let cluster: PgCluster;
  const opened: QueueBackend[] = [];
  before(async () => {
    cluster = await startPgCluster();
  });
  after(async () => {
    for (const s of opened) await s.close();
    cluster?.destroy();
  });
  const stores: Array<[string, OpenStore]> = [
    ['SQLite', async () => new QueueStore(':memory:')],
    [
      'PostgreSQL',
      async (relay = 'relay-a', url?: string) => {
        const u = url ?? (await cluster.createDatabase());
        const s = Object.assign(await PgQueueStore.open({ url: u, relayId: relay }), { url: u });
        opened.push(s);
        return s;
      },
    ],
  ];
  return { stores, cluster: () => cluster, opened };
}
