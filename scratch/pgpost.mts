import { startPgCluster } from '../test/helpers/postgres.ts';
import { spawnRelay, postForm } from '../test/helpers/relay.ts';
import { FakeMediaServer } from '../test/fakes/jellyfin.ts';
const c = await startPgCluster();
const jf = await new FakeMediaServer({ name: 'jellyfin' }).start();
const r = await spawnRelay({ config: { PLEX_ENABLED: false, JELLYFIN: { ENABLED: true, URL: jf.url, API_KEY: jf.apiKey }, SERVER_QUEUE_URL: await c.createDatabase(), SERVER_RELAY_ID: 'x', SERVER_SCAN_DELAY: 3600, SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'] } } });
for (let i = 0; i < 6; i++) {
  const t = Date.now();
  const a = await postForm(r.url, { eventType: 'Manual', filepath: `/movies/F${i}/f.mkv` });
  console.log(a.status, Date.now() - t, 'ms');
}
console.log(r.logs.slice(-8).map((l) => l.slice(0, 250)).join('\n'));
await r.kill(); await jf.stop(); c.destroy();
