import { startPgCluster } from '../test/helpers/postgres.ts';
import { PgQueueStore } from '../src/queue/pg/store.ts';
import { scanRequestSchema } from '../src/core/scan.ts';
const c = await startPgCluster({ durable: process.argv[2] === 'durable' });
const s = await PgQueueStore.open({ url: await c.createDatabase(), relayId: 'x' });
const mk = (i: number) => scanRequestSchema.parse({ folder: `/data/TV/Show ${i}`, files: [`/data/TV/Show ${i}/e.mkv`], source: 'Sonarr' });
for (const n of [1, 1, 50, 50]) {
  const t = Date.now();
  await s.enqueueMany(Array.from({ length: n }, (_, j) => mk(Math.random() * 1e9 | 0)), { delayMs: 60000, maxMs: 0 });
  console.log(n, Date.now() - t, 'ms');
}
const t = Date.now(); await s.countOpen(); console.log('one query', Date.now() - t, 'ms');
await s.close(); c.destroy();
