import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakePlex } from '../fakes/plex.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { postForm, postJson, runCli, spawnRelay, tempDir, waitFor, type RelayProcess } from '../helpers/relay.ts';

// Several relay processes with one SERVER_QUEUE_URL, against a real PostgreSQL and a fake Plex.

const MAPPINGS = { '/data/TV/': ['/tv/'] };
/**
 * How long each scan shows on Plex's /activities: a scan sent while another shows is two scans at once. The relay
 * learns a scan ended from Plex's notification stream, so a short scan costs the test only its own length.
 */
const SCAN_MS = 100;

let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

function relayConfig(plex: FakePlex, url: string, relayId: string, extra: Record<string, unknown> = {}) {
  return {
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    SERVER_PATH_MAPPINGS: MAPPINGS,
    SERVER_QUEUE_URL: url,
    SERVER_RELAY_ID: relayId,
    SERVER_QUEUE_LEASE: 5,
    // Only the shared turn keeps the relays from scanning at once (plex_autoscan's wait for other scans would hide a gap).
    PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false,
    ...extra,
  };
}

/** Refreshes Plex received while the scan of an earlier refresh still showed. */
function overlaps(plex: FakePlex): Array<[string, string]> {
  const refreshes = plex.calls.filter((c) => c.status === 200 && /\/refresh$/.test(c.path) && c.query.path).sort((a, b) => a.at - b.at);
  const out: Array<[string, string]> = [];
  for (let i = 1; i < refreshes.length; i++) {
    if (refreshes[i]!.at < refreshes[i - 1]!.at + SCAN_MS) out.push([refreshes[i - 1]!.query.path!, refreshes[i]!.query.path!]);
  }
  return out;
}

const send = (relay: RelayProcess, folder: string) => postForm(relay.url, { eventType: 'Manual', filepath: `/tv/${folder}/episode.mkv` });
const queueCount = async (relay: RelayProcess) => (await postJson(`${relay.base}/api/${relay.secret}`, { cmd: 'queue_count' })).body.queue_count as number;

describe('two relays, one PostgreSQL queue', () => {
  // Each case has its own database, Plex and relays, and mostly waits on the relays' timers (the scan delay, the
  // lease, the 5 s queue poll): the three run side by side. PostgreSQL lost, below, stops the cluster they share, so
  // it runs after them.
  describe('relays that start, stop and die', { concurrency: true }, () => {
    test('20 folders three times through both, 15 through A, A killed with kill -9 and back from an empty folder, 5 more: all delivered once, one scan at a time', async () => {
      const plex = await new FakePlex().start();
      plex.scanActivityMs = SCAN_MS;
      const url = await cluster.createDatabase();
      // Long enough that the requests after the first folder's last one (36: 0.1 s here) are all in before that
      // folder is due, on a busy machine too.
      const delay = { SERVER_SCAN_DELAY: 5 };
      // Started together: the queue's migration runs under an advisory lock, as for relays a host starts at once.
      const started = await Promise.all([spawnRelay({ config: relayConfig(plex, url, 'relay-a', delay) }), spawnRelay({ config: relayConfig(plex, url, 'relay-b', delay) })]);
      let a = started[0];
      const b = started[1];
      try {
        const first = Array.from({ length: 20 }, (_, i) => `Shared ${i}`);
        for (let round = 0; round < 3; round++) {
          for (const [i, folder] of first.entries()) assert.equal((await send((i + round) % 2 ? a : b, folder)).status, 200);
        }
        const onlyA = Array.from({ length: 15 }, (_, i) => `Only A ${i}`);
        for (const folder of onlyA) assert.equal((await send(a, folder)).status, 200);
        // Every request was committed before its answer: 35 folders wait in the shared queue, whichever relay took them.
        assert.equal(await queueCount(b), 35);
        assert.equal(plex.refreshes().length, 0, 'nothing was due yet');
        await a.kill('SIGKILL');

        // B delivers all 35 alone, A's 15 included.
        const want = (names: string[]) => names.map((f) => `/data/TV/${f}`);
        await waitFor(() => want([...first, ...onlyA]).every((p) => plex.refreshes().some((r) => r.path === p)), 90_000, 'B to deliver the 35');
        // B's log line follows Plex's answer through a pipe: wait for the lines, then read who sent what.
        const byB = () => b.events().filter((e) => e.msg === 'scan delivered').map((e) => e.folder as string);
        await waitFor(() => want(onlyA).every((p) => byB().includes(p)), 15_000, "relay-b's log lines for A's 15").catch(() => {});
        for (const p of want(onlyA)) assert.ok(byB().includes(p), `${p} delivered by relay-b while relay-a was down`);

        // A comes back from an empty folder (a new config file, the same queue) and takes 5 more, due at once: both
        // relays are up, and each is sent whichever relay takes the turn first.
        a = await spawnRelay({ dir: tempDir(), config: relayConfig(plex, url, 'relay-a', { SERVER_SCAN_DELAY: 0 }) });
        const last = Array.from({ length: 5 }, (_, i) => `After ${i}`);
        for (const folder of last) assert.equal((await send(a, folder)).status, 200);
        await waitFor(() => want(last).every((p) => plex.refreshes().some((r) => r.path === p)), 60_000, 'the last 5');
        await waitFor(async () => (await queueCount(a)) === 0 && (await queueCount(b)) === 0, 30_000, 'queue_count 0 on both relays');

        const paths = plex.refreshes().map((r) => r.path);
        assert.deepEqual([...new Set(paths)].sort(), want([...first, ...onlyA, ...last]).sort(), 'all 40 folders scanned');
        assert.equal(paths.length, 40, `none scanned twice: ${paths.length - 40} repeats`);
        assert.deepEqual(overlaps(plex), [], 'Plex never got two scans at once');
        assert.deepEqual(plex.scans.filter((s) => s.whileBusy).map((s) => s.path), [], 'Plex never got a scan while it scanned another');
        // The history says which relay sent each.
        const history = (await fetch(`${b.base}/api/${b.secret}/history?limit=100`).then((r) => r.json())) as { items: Array<{ folder: string; deliveries: Array<{ relay: string }> }> };
        assert.equal(history.items.length, 40);
        for (const item of history.items.filter((h) => want(onlyA).includes(h.folder))) assert.equal(item.deliveries[0]!.relay, 'relay-b');
      } finally {
        await a.kill();
        await b.kill();
        await plex.stop();
      }
    });

    test('a relay killed in the middle of a delivery: the other sends it again once the lease runs out, with Plex one scan at a time', async () => {
      const plex = await new FakePlex().start();
      plex.scanActivityMs = SCAN_MS;
      // Plex is slow to answer a refresh, so relay-a is killed while its refresh request is open (its other calls,
      // at start and for the library roots, answer at once).
      plex.latencyFor = (method, path) => (/\/refresh$/.test(path) ? 3000 : undefined);
      const url = await cluster.createDatabase();
      // A short lease: relay-a's claim and turn have run out by relay-b's first look after its start (its queue poll, every
      // 5 s), which takes them over then.
      const lease = { SERVER_SCAN_DELAY: 0, SERVER_QUEUE_LEASE: 2 };
      const a = await spawnRelay({ config: relayConfig(plex, url, 'relay-a', lease) });
      let b: RelayProcess | undefined;
      try {
        assert.equal((await send(a, 'In Flight')).status, 200);
        // The refresh request is on its way (Plex takes 3 s to answer it).
        await a.waitForLog((e) => e.msg === 'requesting Plex partial scan', 30_000);
        await a.kill('SIGKILL');
        plex.latencyFor = undefined;
        b = await spawnRelay({ config: relayConfig(plex, url, 'relay-b', lease) });
        await waitFor(() => plex.refreshes().some((r) => r.path === '/data/TV/In Flight'), 30_000, 'relay-b to send the claimed scan again');
        await waitFor(async () => (await queueCount(b!)) === 0, 15_000, 'queue_count 0');
        // The log line follows Plex's answer through a pipe: wait for it rather than read it at once.
        const delivered = await b.waitForLog((e) => e.msg === 'scan delivered', 15_000);
        assert.equal(delivered.relay, 'relay-b');
        assert.ok(delivered.attempt >= 2, 'the second attempt of the delivery relay-a had claimed');
      } finally {
        await a.kill();
        // kill -9: a clean stop waits out the after-scan steps of relay-b's first scan (up to 2 s), which nothing here reads.
        await b?.kill('SIGKILL');
        await plex.stop();
      }
    });

    test('kill -9 of the relay whose Plex scan still runs: the other takes the turn over after its lease, asks Plex, and sends only once that scan ended', async () => {
      const plex = await new FakePlex().start();
      // The first scan runs on Plex until the test ends it; the others are short.
      plex.scanMsFor = (path) => (path.includes('Long Scan') ? 600_000 : SCAN_MS);
      const url = await cluster.createDatabase();
      const a = await spawnRelay({ config: relayConfig(plex, url, 'relay-a', { SERVER_SCAN_DELAY: 0, SERVER_QUEUE_LEASE: 2 }) });
      let b: RelayProcess | undefined;
      try {
        assert.equal((await send(a, 'Long Scan')).status, 200);
        await waitFor(() => plex.activities.length > 0, 30_000, 'the long scan to run on Plex');
        b = await spawnRelay({ config: relayConfig(plex, url, 'relay-b', { SERVER_SCAN_DELAY: 0, SERVER_QUEUE_LEASE: 2 }) });
        assert.equal((await send(b, 'Next Scan')).status, 200);
        await a.kill('SIGKILL');
        // relay-b gets the turn once relay-a's lease ran out, and finds Plex still scanning relay-a's folder.
        await b.waitForLog((e) => typeof e.msg === 'string' && e.msg.startsWith('took the one-at-a-time turn over'), 30_000);
        assert.deepEqual(plex.refreshes().map((r) => r.path), ['/data/TV/Long Scan'], 'nothing sent while the scan of the dead relay runs');
        plex.stopScans();
        await waitFor(() => plex.refreshes().some((r) => r.path === '/data/TV/Next Scan'), 30_000, 'relay-b to send once Plex is idle');
        assert.deepEqual(plex.scans.filter((s) => s.whileBusy).map((s) => s.path), [], 'Plex never got a scan while it scanned another');
      } finally {
        await a.kill();
        // kill -9: a clean stop waits out the after-scan steps of relay-b's first scan (up to 2 s), which nothing here reads.
        await b?.kill('SIGKILL');
        await plex.stop();
      }
    });
  });

  test('PostgreSQL lost while running: intake answers 503 (nothing queued), what was accepted is delivered once it is back', async () => {
    const plex = await new FakePlex().start();
    const url = await cluster.createDatabase();
    const relay = await spawnRelay({ config: relayConfig(plex, url, 'relay-a', { SERVER_SCAN_DELAY: 2 }) });
    try {
      assert.equal((await send(relay, 'Before Loss')).status, 200);
      cluster.stopNow();
      const lost = await fetch(relay.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ eventType: 'Manual', filepath: '/tv/During Loss/episode.mkv' }).toString(),
      });
      assert.equal(lost.status, 503);
      assert.equal(lost.headers.get('retry-after'), '5');
      assert.match(String(((await lost.json()) as { error: string }).error), /queue database cannot be reached: nothing was queued/);
      const health = await fetch(`${relay.base}/healthz`);
      assert.equal(health.status, 503);
      cluster.start();
      // The sender retries, as the *arrs do after a 503.
      await waitFor(async () => (await send(relay, 'During Loss')).status === 200, 30_000, 'intake to accept again');
      await waitFor(() => ['/data/TV/Before Loss', '/data/TV/During Loss'].every((p) => plex.refreshes().some((r) => r.path === p)), 30_000, 'both delivered');
      await waitFor(async () => (await queueCount(relay)) === 0, 15_000, 'queue_count 0');
      assert.equal(relay.proc.exitCode, null, 'the relay kept running');
    } catch (err) {
      console.error(relay.logs.slice(-30).join('\n'));
      throw err;
    } finally {
      cluster.start();
      await relay.kill();
      await plex.stop();
    }
  });

  test('PostgreSQL unreachable at start: one line naming the URL without its password, exit 2', async () => {
    const dir = tempDir();
    const { writeFileSync } = await import('node:fs');
    const config = `${dir}/config.json`;
    writeFileSync(config, JSON.stringify({ SERVER_PORT: 0, SERVER_IP: '127.0.0.1', SERVER_PASS: 'test-secret', PLEX_ENABLED: false }));
    const url = `postgres://relay:hunter2@127.0.0.1:${cluster.port + 1}/scans`;
    const run = await runCli(['--config', config, '--queuefile', `${dir}/queue.db`, 'server'], { cwd: dir, env: { SERVER_QUEUE_URL: url } });
    assert.equal(run.code, 2);
    const out = run.stdout + run.stderr;
    assert.match(out, /cannot reach the queue database at postgres:\/\/relay:\*\*\*@127\.0\.0\.1:\d+\/scans \(SERVER_QUEUE_URL\)/);
    assert.doesNotMatch(out, /hunter2/);
  });
});
