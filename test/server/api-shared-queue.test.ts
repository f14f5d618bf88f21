import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { configSchema, type Config, type FileConfig } from '../../src/config/schema.ts';
import { relayConfig } from '../../src/config/named-targets.ts';
import { scanRequestSchema } from '../../src/core/scan.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { QueueIntake } from '../../src/queue/door.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { buildApp } from '../../src/server/app.ts';
import { apiPlugin } from '../../src/server/dashboard/api.ts';
import { DEFAULT_RECOGNIZERS } from '../../src/server/run.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/relay.ts';

// plex_autoscan's cmd API (queue_count) and the JSON API (queue, history, retry, delete) answer from the queue
// whatever holds it: on a shared queue, relay A answers about scans relay B took and delivered.

const SECRET = 'api-secret';
let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

const req = (folder: string) => scanRequestSchema.parse({ folder, source: 'Sonarr' });

/** What relay A's API says after relay B (the same store on SQLite) queued three scans and delivered one. */
async function answers(a: QueueBackend, b: QueueBackend) {
  const config = relayConfig(configSchema.parse({ SERVER_PASS: SECRET }) as FileConfig);
  const app = await buildApp({ config, log: silentLogger(), intake: new QueueIntake(a, [], () => ({ delayMs: 600_000, maxMs: 0 })), store: a, recognizers: DEFAULT_RECOGNIZERS, plugins: [apiPlugin] });
  try {
    await b.enqueueMany([req('/data/Movies/Sent (2020)')], { delayMs: 0, maxMs: 0 }, Date.now() - 1000);
    await b.enqueueMany([req('/data/TV/Waiting/Season 1'), req('/data/TV/Dropped/Season 2')], { delayMs: 600_000, maxMs: 0 });
    await b.activateDue(['plex']);
    const [claimed] = await b.claimDeliveries(1, Date.now(), 'plex');
    await b.completeDelivery(claimed!.item.id, 'plex', { status: 'done' });
    const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => {
      const res = await app.inject({ method, url, ...(payload ? { payload: payload as Record<string, string> } : {}) });
      return { status: res.statusCode, body: res.json() };
    };
    const count = await call('POST', `/api/${SECRET}`, { cmd: 'queue_count' });
    const queue = await call('GET', `/api/${SECRET}/queue`);
    const history = await call('GET', `/api/${SECRET}/history`);
    const dropped = queue.body.items.find((i: { folder: string }) => i.folder === '/data/TV/Dropped/Season 2');
    const retried = await call('POST', `/api/${SECRET}/queue/${dropped.id}/retry`);
    const deleted = await call('DELETE', `/api/${SECRET}/queue/${dropped.id}`);
    const after = await call('POST', `/api/${SECRET}`, { cmd: 'queue_count' });
    return { count, queue, history, retried, deleted, after };
  } finally {
    await app.close();
  }
}

test('the API answers the same on a shared queue as on the file, and names the relay that delivered', async () => {
  const url = await cluster.createDatabase();
  const [a, b] = await Promise.all([PgQueueStore.open({ url, relayId: 'relay-a' }), PgQueueStore.open({ url, relayId: 'relay-b' })]);
  const onPg = await answers(a, b).finally(() => Promise.all([a.close(), b.close()]));
  const file = new QueueStore(join(tempDir(), 'queue.db'));
  const onFile = await answers(file, file).finally(() => file.close());

  for (const r of [onPg, onFile]) {
    assert.deepEqual(r.count, { status: 200, body: { queue_count: 2 } });
    assert.deepEqual(r.queue.body.items.map((i: { folder: string }) => i.folder).sort(), ['/data/TV/Dropped/Season 2', '/data/TV/Waiting/Season 1']);
    assert.deepEqual(r.history.body.items.map((i: { folder: string; status: string }) => [i.folder, i.status]), [['/data/Movies/Sent (2020)', 'done']]);
    assert.deepEqual([r.retried.status, r.retried.body.status], [200, 'retrying']);
    assert.deepEqual([r.deleted.status, r.deleted.body.status], [200, 'deleted']);
    assert.deepEqual(r.after.body, { queue_count: 1 });
  }
  assert.equal(onPg.history.body.items[0].deliveries[0].relay, 'relay-b', "relay A's history names relay B, which delivered it");
  assert.equal(onFile.history.body.items[0].deliveries[0].relay, null);
  const keys = (r: typeof onPg) => Object.keys(r.history.body.items[0]).concat(Object.keys(r.history.body.items[0].deliveries[0]));
  assert.deepEqual(keys(onPg), keys(onFile));
});
