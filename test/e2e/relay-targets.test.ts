import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakePlex } from '../fakes/plex.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { postForm, postJson, runCli, spawnRelay, waitFor, type RelayProcess } from '../helpers/relay.ts';

// Relay processes with one SERVER_QUEUE_URL and different targets, against a real PostgreSQL and fake Plex
// servers that say who they are as Plex does (GET /identity: machineIdentifier; GET /: friendlyName).
// Two relays beside the same Plex: test/e2e/shared-queue.test.ts (each scan reaches it once).

const MAPPINGS = { '/data/TV/': ['/tv/'] };

let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

function relayConfig(url: string, relayId: string, plex: FakePlex | undefined, extra: Record<string, unknown> = {}) {
  return {
    ...(plex ? { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token } : { PLEX_ENABLED: false }),
    SERVER_PATH_MAPPINGS: MAPPINGS,
    SERVER_QUEUE_URL: url,
    SERVER_RELAY_ID: relayId,
    SERVER_QUEUE_LEASE: 5,
    SERVER_SCAN_DELAY: 0,
    PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false,
    SERVER_ALLOW_MANUAL_SCAN: true,
    ...extra,
  };
}

const send = (relay: RelayProcess, folder: string) => postForm(relay.url, { eventType: 'Manual', filepath: `/tv/${folder}/episode.mkv` });
const queueCount = async (relay: RelayProcess) => (await postJson(`${relay.base}/api/${relay.secret}`, { cmd: 'queue_count' })).body.queue_count as number;
const scanned = (plex: FakePlex) => plex.refreshes().map((r) => r.path);

interface ApiDelivery {
  target: string;
  name: string;
  status: string;
  relay: string | null;
  unserved: boolean;
}
async function history(relay: RelayProcess): Promise<Array<{ folder: string; deliveries: ApiDelivery[] }>> {
  return ((await fetch(`${relay.base}/api/${relay.secret}/history?limit=100`).then((r) => r.json())) as { items: Array<{ folder: string; deliveries: ApiDelivery[] }> }).items;
}
async function openScans(relay: RelayProcess): Promise<Array<{ folder: string; status: string; waiting: string | null; deliveries: ApiDelivery[] }>> {
  return ((await fetch(`${relay.base}/api/${relay.secret}/queue`).then((r) => r.json())) as { items: Array<{ folder: string; status: string; waiting: string | null; deliveries: ApiDelivery[] }> }).items;
}

describe('relays with different targets, one PostgreSQL queue', () => {
  test('a feeder relay with Plex disabled takes the webhooks, the relay beside Plex delivers every scan once', async () => {
    const plex = await new FakePlex({ friendlyName: 'Media Box' }).start();
    const url = await cluster.createDatabase();
    const feeder = await spawnRelay({ config: relayConfig(url, 'feeder', undefined) });
    let media: RelayProcess | undefined;
    try {
      // Nothing can deliver yet: the scans wait, pending, and the queue says why.
      for (let i = 0; i < 3; i++) assert.equal((await send(feeder, `Early ${i}`)).status, 200);
      // Said once, with the count when it began to wait (a log line per look would flood the log).
      await feeder.waitForLog((e) => /^no relay with a target is running; 1 scan waits$/.test(e.msg), 15_000);
      await waitFor(async () => (await openScans(feeder)).every((s) => s.waiting), 15_000, 'the three to show as waiting');
      const waiting = await openScans(feeder);
      assert.deepEqual(waiting.map((s) => [s.status, s.waiting]), Array(3).fill(['pending', 'no relay with a target is running']));
      const page = () => fetch(feeder.url, { headers: { accept: 'text/html' } }).then((r) => r.text());
      const early = await page();
      assert.match(early, /<strong>relays<\/strong> feeder: no target<span class="why">: due scans wait for a relay with a target<\/span>/);
      assert.match(early, /waiting: no relay with a target is running/);
      assert.match(early, /<strong>targets<\/strong> none on this relay/);
      // scanrelay queue, from any machine that reaches the database, says it too.
      const cli = await runCli(['--config', feeder.configPath, '--queuefile', feeder.queuefile, 'queue']);
      assert.equal(cli.code, 0, cli.stderr);
      assert.match(cli.stdout, /\/data\/TV\/Early 0\n {4}due \S+ \([^)]*\), waiting: no relay with a target is running, 0 attempt\(s\)\n/);

      media = await spawnRelay({ config: relayConfig(url, 'media', plex) });
      for (let i = 0; i < 5; i++) assert.equal((await send(feeder, `Fed ${i}`)).status, 200);
      const want = [...[0, 1, 2].map((i) => `/data/TV/Early ${i}`), ...[0, 1, 2, 3, 4].map((i) => `/data/TV/Fed ${i}`)].sort();
      await waitFor(async () => want.every((p) => scanned(plex).includes(p)) && (await queueCount(feeder)) === 0, 60_000, 'the 8 scans delivered');
      assert.deepEqual(scanned(plex).sort(), want, 'each once');
      assert.equal(feeder.events().filter((e) => /no relay with a target is running/.test(e.msg)).length, 1);
      assert.match(await page(), /<strong>relays<\/strong> feeder: no target; media: plex \(Media Box\)<\/li>/);
      assert.match(await page(), /<strong title="plex@[0-9a-f]{40}">plex \(Media Box\)<\/strong> done, 1 attempt, by relay media/);
      const cliHistory = await runCli(['--config', feeder.configPath, '--queuefile', feeder.queuefile, 'queue', '--history']);
      assert.match(cliHistory.stdout, /\/data\/TV\/Fed 0\n {4}done \S+ \([^)]*\), 1 attempt\(s\)\n {4}plex \(Media Box\) delivered by relay media\n/);
      for (const item of await history(feeder)) {
        assert.deepEqual(
          item.deliveries.map((d) => [d.target, d.name, d.status, d.relay]),
          [[`plex@${plex.machineIdentifier}`, 'plex (Media Box)', 'done', 'media']],
        );
      }
    } finally {
      await feeder.kill();
      await media?.kill();
      await plex.stop();
    }
  });

  test('two relays, each beside its own Plex: every scan reaches both; one killed with kill -9 gets its share when it is back', async () => {
    const north = await new FakePlex({ friendlyName: 'North' }).start();
    const south = await new FakePlex({ friendlyName: 'South' }).start();
    const url = await cluster.createDatabase();
    // A lease long enough that South's relay still counts as running when the scans sent after its kill are due.
    const lease = { SERVER_QUEUE_LEASE: 60 };
    const a = await spawnRelay({ config: relayConfig(url, 'relay-north', north, lease) });
    let b = await spawnRelay({ config: relayConfig(url, 'relay-south', south, lease) });
    try {
      const both = Array.from({ length: 6 }, (_, i) => `Both ${i}`);
      for (const [i, f] of both.entries()) assert.equal((await send(i % 2 ? a : b, f)).status, 200);
      const want = (names: string[]) => names.map((f) => `/data/TV/${f}`).sort();
      // Finished everywhere before the kill: a delivery in flight at a kill -9 may be sent again (at least once).
      await waitFor(async () => want(both).every((p) => scanned(north).includes(p) && scanned(south).includes(p)) && (await queueCount(a)) === 0, 60_000, 'both Plex servers to scan the 6');
      assert.deepEqual(scanned(north).sort(), want(both));
      assert.deepEqual(scanned(south).sort(), want(both));

      await b.kill('SIGKILL');
      const later = Array.from({ length: 3 }, (_, i) => `While South Down ${i}`);
      for (const f of later) assert.equal((await send(a, f)).status, 200);
      await waitFor(() => want(later).every((p) => scanned(north).includes(p)), 30_000, 'North to scan the 3');
      // South's deliveries wait for its relay: not failed, not sent elsewhere.
      const open = await openScans(a);
      assert.deepEqual(open.map((s) => s.folder).sort(), want(later));
      for (const s of open) {
        assert.equal(s.status, 'active');
        assert.deepEqual(s.deliveries.map((d) => [d.name, d.status]).sort(), [['plex (North)', 'done'], ['plex (South)', 'waiting']]);
      }
      assert.equal(scanned(south).length, 6);

      b = await spawnRelay({ dir: b.dir, configPath: b.configPath });
      // South's Plex turn may still be held by the killed process's row (its lease is 60 s). The relay restarted
      // from the same folder is the same install (queue/instance.ts): it takes that row at once, asks Plex whether a
      // scan runs, and sends (docs/postgres.md, a restarted relay). Less than the lease: it never waits it out.
      await waitFor(async () => want(later).every((p) => scanned(south).includes(p)) && (await queueCount(a)) === 0, 45_000, 'South to scan the 3 once its relay is back');
      assert.deepEqual(scanned(north).sort(), want([...both, ...later]), 'North: each scan once');
      assert.deepEqual(scanned(south).sort(), want([...both, ...later]), 'South: each scan once');
      const item = (await history(a)).find((h) => h.folder === '/data/TV/Both 0')!;
      assert.deepEqual(item.deliveries.map((d) => [d.name, d.relay]).sort(), [['plex (North)', 'relay-north'], ['plex (South)', 'relay-south']]);
    } finally {
      await a.kill();
      await b.kill();
      await north.stop();
      await south.stop();
    }
  });

  test("relay A with Plex only, relay B with Jellyfin only: a webhook to A reaches both servers; A's Plex EXCLUDE leaves Plex out, not Jellyfin", async () => {
    const plex = await new FakePlex({ friendlyName: 'A Plex' }).start();
    const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key', name: 'B Jellyfin' }).start();
    const url = await cluster.createDatabase();
    const b = await spawnRelay({ config: relayConfig(url, 'relay-b', undefined, { JELLYFIN: { ENABLED: true, URL: jellyfin.url, API_KEY: 'jf-key' } }) });
    let a: RelayProcess | undefined;
    try {
      // B has recorded its Jellyfin before A opens the queue (A reads the others' targets then, and at each renewal).
      const page = (relay: RelayProcess) => fetch(relay.url, { headers: { accept: 'text/html' } }).then((r) => r.text());
      await waitFor(async () => /relay-b: jellyfin \(B Jellyfin\)/.test(await page(b)), 15_000, 'B to record its Jellyfin');
      const plexEntry = { TYPE: 'plex', URL: plex.url, TOKEN: plex.token, WAIT_FOR_EXTERNAL_SCANNERS: false, EXCLUDE: ['/Concerts/'] };
      a = await spawnRelay({ config: relayConfig(url, 'relay-a', undefined, { TARGETS: { plex: plexEntry } }) });
      assert.equal((await send(a, 'Both Servers')).status, 200);
      assert.equal((await send(a, 'Concerts/Live')).status, 200);
      const updated = () => jellyfin.updates.map((u) => u.path).sort();
      const want = ['/data/TV/Both Servers/episode.mkv', '/data/TV/Concerts/Live/episode.mkv'];
      await waitFor(async () => updated().length >= 2 && scanned(plex).length >= 1 && (await queueCount(a!)) === 0, 60_000, 'both scans delivered');
      assert.deepEqual(scanned(plex), ['/data/TV/Both Servers']);
      assert.deepEqual(updated(), want);
      const delivered = async (folder: string) => (await history(a!)).find((h) => h.folder === folder)?.deliveries.map((d) => [d.name, d.status, d.relay]).sort();
      assert.deepEqual(await delivered('/data/TV/Both Servers'), [['jellyfin (B Jellyfin)', 'done', 'relay-b'], ['plex (A Plex)', 'done', 'relay-a']]);
      assert.deepEqual(await delivered('/data/TV/Concerts/Live'), [['jellyfin (B Jellyfin)', 'done', 'relay-b']]);
    } finally {
      await a?.kill();
      await b.kill();
      await plex.stop();
      await jellyfin.stop();
    }
  });
});
