import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { FakePlex } from '../fakes/plex.ts';
import { postForm, postJson, spawnRelay, tempDir, waitFor, waitForQueueDrained } from '../helpers/relay.ts';

const MAPPINGS = { '/data/Movies/': ['/movies/'], '/data/TV/': ['/tv/'] };

function config(plex: FakePlex, extra: Record<string, unknown> = {}) {
  return { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_PATH_MAPPINGS: MAPPINGS, ...extra };
}

describe('queue behaviour through the real server process', () => {
  test('200 POSTs over 5 folders within a second give exactly 5 refresh calls', async () => {
    const plex = await new FakePlex().start();
    // Each scan shows on /activities for a moment, as Plex's own do; Plex gets them one at a time.
    plex.scanActivityMs = 200;
    const relay = await spawnRelay({ config: config(plex, { SERVER_SCAN_DELAY: 2 }) });
    try {
      const folders = ['/movies/A (2001)', '/movies/B (2002)', '/tv/Show C/Season 01', '/tv/Show D/Season 02', '/tv/Show E'];
      const posts = Array.from({ length: 200 }, (_, i) =>
        postForm(relay.url, { eventType: 'Manual', filepath: `${folders[i % 5]}/file ${i}.mkv` }),
      );
      const answers = await Promise.all(posts);
      assert.ok(answers.every((a) => a.status === 200));
      assert.equal(answers.filter((a) => a.body.status === 'queued').length, 5);
      assert.equal(answers.filter((a) => a.body.status === 'merged').length, 195);
      await waitFor(() => plex.refreshes().length >= 5, 60_000, '5 refreshes');
      await waitForQueueDrained(relay.queuefile);
      const paths = plex.refreshes().map((r) => r.path).sort();
      assert.deepEqual(paths, folders.map((f) => f.replace('/movies', '/data/Movies').replace('/tv', '/data/TV')).sort());
    } finally {
      await relay.kill();
      await plex.stop();
    }
  });

  test('while Plex is down scans stay queued and are all delivered once it is back', async () => {
    const plex = await new FakePlex().start();
    await plex.setMode('down');
    const relay = await spawnRelay({ config: config(plex, { SERVER_SCAN_DELAY: 0 }) });
    try {
      for (const f of ['/movies/A (2001)/a.mkv', '/movies/B (2002)/b.mkv', '/tv/C/Season 01/c.mkv']) {
        assert.equal((await postForm(relay.url, { eventType: 'Manual', filepath: f })).status, 200);
      }
      await relay.waitForLog((e) => e.msg === 'scan not delivered yet; will retry' && /unreachable/.test(e.error));
      await plex.setMode('error503');
      await relay.waitForLog((e) => e.msg === 'scan not delivered yet; will retry' && /503/.test(e.error));
      assert.equal(plex.refreshes().length, 0);
      await plex.setMode('up');
      await waitFor(() => plex.refreshes().length >= 3, 30_000, 'deliveries after Plex returned');
      assert.deepEqual(plex.refreshes().map((r) => r.path).sort(), ['/data/Movies/A (2001)', '/data/Movies/B (2002)', '/data/TV/C/Season 01']);
      await waitFor(async () => (await postJson(`${relay.base}/api/${relay.secret}`, { cmd: 'queue_count' })).body.queue_count === 0, 5000, 'empty queue');
    } finally {
      await relay.kill();
      await plex.stop();
    }
  });

  // plex_autoscan drops a request whose path is in no Plex section on its own (scan.py:115-118) and leaves the
  // queue alone. A folder above the libraries must not absorb (and lose) the pending scans below it.
  test('a folder above the libraries is refused with a 400 naming the library roots; pending scans stay and are delivered', async () => {
    const plex = await new FakePlex().start();
    // Long enough that the two scans still wait when the queue is counted, six requests later (0.05 s here).
    const relay = await spawnRelay({ config: config(plex, { SERVER_SCAN_DELAY: 1.5, SERVER_ALLOW_MANUAL_SCAN: true }) });
    try {
      for (const f of ['/movies/A (2001)/a.mkv', '/tv/C/Season 01/c.mkv']) {
        assert.equal((await postForm(relay.url, { eventType: 'Manual', filepath: f })).status, 200);
      }
      const viaApi = await postJson(`${relay.base}/api/${relay.secret}/scan`, { path: '/' });
      assert.equal(viaApi.status, 400);
      assert.match(viaApi.body.error, /in no library/);
      assert.match(viaApi.body.error, /\/data\/Movies/);
      assert.match(viaApi.body.error, /\/data\/TV/);
      const viaForm = await postForm(relay.url, { eventType: 'Manual', filepath: '/data/' });
      assert.equal(viaForm.status, 400);
      assert.match(viaForm.body.error, /library roots: .*\/data\/Movies/);
      const outside = await postForm(relay.url, { eventType: 'Manual', filepath: '/x/Film/film.mkv' });
      assert.equal(outside.status, 400, 'a path in no section is refused, not queued to fail later');
      assert.equal((await postJson(`${relay.base}/api/${relay.secret}`, { cmd: 'queue_count' })).body.queue_count, 2, 'nothing queued, nothing absorbed');
      await waitFor(() => plex.refreshes().length >= 2, 20_000, 'both pending scans delivered');
      assert.deepEqual(plex.refreshes().map((r) => r.path).sort(), ['/data/Movies/A (2001)', '/data/TV/C/Season 01']);
    } finally {
      await relay.kill();
      await plex.stop();
    }
  });

  test('kill -9 with 1,000 folders queued: none is lost, and delivery resumes after restart', async () => {
    const plex = await new FakePlex().start();
    plex.scanActivityMs = 100;
    const dir = tempDir();
    // Sending the 1,000 takes 1.3 s here: most are still queued at the crash, and due by the time the relay is back.
    const cfg = config(plex, { SERVER_SCAN_DELAY: 2, SERVER_SCAN_DELAY_MAX: 2 });
    let relay = await spawnRelay({ dir, config: cfg });
    const folders = Array.from({ length: 1000 }, (_, i) => `/movies/Film ${String(i).padStart(4, '0')} (2000)`);
    try {
      for (let i = 0; i < folders.length; i += 50) {
        const batch = folders.slice(i, i + 50).map((f) => postForm(relay.url, { eventType: 'Manual', filepath: `${f}/film.mkv` }));
        for (const a of await Promise.all(batch)) assert.equal(a.status, 200);
      }
      await relay.kill('SIGKILL');
      // On a slow machine the first folders may already be due; the rest must survive the crash.
      const deliveredBefore = plex.refreshes().length;
      assert.ok(deliveredBefore < 500, `most scans are still queued at the crash (${deliveredBefore} delivered)`);
      relay = await spawnRelay({ dir, configPath: join(dir, 'config.json') });
      const resumed = await relay.waitForLog((e) => e.msg === 'resuming queued scans');
      assert.ok(resumed.scans >= 1000 - deliveredBefore, `resumed ${resumed.scans}`);
      // Plex gets one scan at a time, so draining all 1,000 takes minutes: check that every folder is either
      // delivered or still queued in the file, and that delivery goes on after the restart.
      await waitFor(() => plex.refreshes().length >= deliveredBefore + 5, 60_000, 'deliveries after the restart');
      const queued = new Set<string>();
      const db = new Database(join(dir, 'queue.db'), { readonly: true });
      try {
        for (const r of db.prepare<[], { folder: string }>(`SELECT folder FROM scans WHERE status IN ('pending', 'active')`).all()) queued.add(r.folder);
      } finally {
        db.close();
      }
      const delivered = new Set(plex.refreshes().map((r) => r.path));
      // At least once, and no more than that: only the one scan Plex was being sent at the crash is sent
      // again (Plex gets one scan at a time); none that had finished.
      const twice = plex.refreshes().length - delivered.size;
      assert.ok(twice <= 1, `${twice} folders were scanned twice`);
      for (const f of folders) {
        const folder = f.replace('/movies', '/data/Movies');
        assert.ok(delivered.has(folder) || queued.has(folder), `${folder} is delivered or still queued`);
      }
    } finally {
      await relay.kill();
      await plex.stop();
    }
  });
});

describe('first start and pages', () => {
  test('with no config file the relay writes one, keeps running and logs the scan URL', async () => {
    const dir = tempDir();
    const configPath = join(dir, 'conf', 'config.json');
    const relay = await spawnRelay({ dir, configPath, env: { SERVER_PORT: '0', SERVER_IP: '"127.0.0.1"' } });
    try {
      assert.ok(existsSync(configPath));
      const written = JSON.parse(readFileSync(configPath, 'utf8'));
      assert.match(written.SERVER_PASS, /^[0-9a-f]{32}$/);
      assert.equal(written.SERVER_PORT, 3468);
      assert.equal(written.SERVER_IP, '0.0.0.0');
      assert.equal(written.SERVER_ALLOW_MANUAL_SCAN, true);
      assert.ok(Object.keys(written.SERVER_PATH_MAPPINGS).length > 0);
      assert.equal(relay.secret, written.SERVER_PASS);
      // The starter file was just written: the full scan URL is shown this once (issue 23).
      assert.ok(relay.events().some((e) => e.msg === `scan URL: http://127.0.0.1:${relay.port}/${written.SERVER_PASS}`));
      assert.ok(relay.events().some((e) => /wrote a new one/.test(e.msg ?? '')));
      const page = await fetch(relay.url, { headers: { accept: 'text/html' } });
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /<form method="post"/);
      assert.match(html, /name="filepath"/);
      assert.match(html, /name="eventType" value="Manual"/);
      assert.doesNotMatch(html, /https?:\/\//, 'no CDN links: the page renders offline');
      const health = await fetch(`${relay.base}/healthz`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: 'ok' });
    } finally {
      await relay.kill();
    }
  });

  test('with SERVER_ALLOW_MANUAL_SCAN false the page answers 401; a browser POST gets an HTML answer', async () => {
    const plex = await new FakePlex().start();
    const relay = await spawnRelay({ config: config(plex, { SERVER_ALLOW_MANUAL_SCAN: false, SERVER_SCAN_DELAY: 60 }) });
    try {
      assert.equal((await fetch(relay.url)).status, 401);
      const res = await fetch(relay.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        body: 'eventType=Manual&filepath=%2Fmovies%2FA%20(2001)%2Fa.mkv',
      });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /<code>\/data\/Movies\/A \(2001\)\/a\.mkv<\/code> was added to the scan queue/);
      const again = await fetch(relay.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        body: 'eventType=Manual&filepath=%2Fmovies%2FA%20(2001)%2Fb.mkv',
      });
      assert.match(await again.text(), /merged with a pending scan/);
      const line = await relay.waitForLog((e) => e.msg === 'scan request');
      assert.equal(line.received[0], '/movies/A (2001)/a.mkv');
      assert.equal(line.mapped[0], '/data/Movies/A (2001)/a.mkv');
      assert.ok(line.client);
    } finally {
      await relay.kill();
      await plex.stop();
    }
  });
});
