import { test } from 'node:test';
import pg from 'pg';
import { startPgCluster } from './helpers/postgres.ts';
import { PgQueueStore } from '../src/queue/pg/store.ts';
test('count', async () => {
  const cluster = await startPgCluster();
  const url = await cluster.createDatabase();
  const stores = [];
  for (let i = 0; i < 3; i++) stores.push(await PgQueueStore.open({ url, relayId: 'r' + i }));
  for (const s of stores) { await s.enqueueMany([{ folder: '/m/A' + Math.random(), source: 'Manual' } as never], { delayMs: 0, maxMs: 0 }); await s.activateDue(['plex']); await s.claimDeliveries(5, Date.now(), 'plex'); }
  await new Promise((r) => setTimeout(r, 3000));
  const c = new pg.Client({ connectionString: url }); await c.connect();
  const { rows } = await c.query(`SELECT application_name, count(*) FROM pg_stat_activity WHERE datname = current_database() GROUP BY 1 ORDER BY 1`);
  console.log(JSON.stringify(rows));
  await c.end();
  for (const s of stores) await s.close();
  const c2 = new pg.Client({ connectionString: url }); await c2.connect();
  console.log(JSON.stringify((await c2.query(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()`)).rows));
  await c2.end();
  cluster.destroy();
});
