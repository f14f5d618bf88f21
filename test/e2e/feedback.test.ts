// Issue 35 item 4: feedback while work waits, seen as a user sees it: the answer, the log line, `scanrelay queue`,
// the page with manual scans off.
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { postForm, runCli, spawnRelay, tempDir, waitFor } from '../helpers/relay.ts';

const MOVIE = '/data/Movies/Heat (1995)/Heat.mkv';

test('a scan answer and its log line say when the scan is due; `scanrelay queue` lists it, then its failed attempt, without the secret', async () => {
  const dir = tempDir();
  let listedDue = 0;
  // Plex is down (nothing listens on port 9): the scan is tried when due, fails, and waits for its next try.
  const relay = await spawnRelay({ dir, config: { SERVER_SCAN_DELAY: 30, SERVER_SCAN_DELAY_MAX: 60, PLEX_TOKEN: 'token', PLEX_LOCAL_URL: 'http://127.0.0.1:9', SERVER_ALLOW_MANUAL_SCAN: true } });
  try {
    const before = Date.now();
    const answer = await postForm(relay.url, { eventType: 'Manual', filepath: MOVIE });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.status, 'queued');
    const due = Date.parse(answer.body.due);
    assert.ok(due >= before + 29_000 && due <= Date.now() + 31_000, `due ${answer.body.due} is SERVER_SCAN_DELAY (30 s) away`);
    assert.ok(answer.body.dueIn >= 29 && answer.body.dueIn <= 30, `dueIn ${answer.body.dueIn}`);
    assert.equal(answer.body.scans[0].due, answer.body.due);
    const line = await relay.waitForLog((e) => e.msg === 'scan request');
    assert.equal(line.due, answer.body.due);
    assert.equal(line.dueIn, answer.body.dueIn);

    // Plex being down is no reason to warn every request: it may be back any moment (the start-up check said it once).
    await relay.waitForLog((e) => e.key === 'PLEX_LOCAL_URL');
    const later = await postForm(relay.url, { eventType: 'Manual', filepath: MOVIE });
    assert.equal(later.body.status, 'merged');
    assert.equal(later.body.warning, undefined);

    // The browser's answer page says it too.
    const html = await fetch(relay.url, { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ eventType: 'Manual', filepath: MOVIE }) }).then((r) => r.text());
    assert.match(html, /merged with a pending scan of the same folder\. It is due in \d+ s \(\d{4}-\d\d-\d\dT/);

    // Only the config (or queue file) is needed: no URL, no secret, no curl.
    const listed = await runCli(['--queuefile', relay.queuefile, 'queue'], { cwd: dir });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${relay.queuefile}: 1 pending, 0 active \\(being sent or waiting to retry\\), 0 done, 0 failed\\n`));
    assert.match(listed.stdout, /\n {2}\/data\/Movies\/Heat \(1995\)\n {4}due \S+ \(in \d+ s\), 0 attempt\(s\)\n$/);
    assert.doesNotMatch(listed.stdout, /test-secret/);
    const json = JSON.parse((await runCli(['--queuefile', relay.queuefile, 'queue', '--json'], { cwd: dir })).stdout);
    assert.deepEqual(json.counts, { pending: 1, active: 0, done: 0, failed: 0 });
    // The second request (the page's) merged into the scan and moved its due time (the debounce).
    assert.deepEqual(json.scans, [{ folder: '/data/Movies/Heat (1995)', status: 'pending', due: json.scans[0].due, attempts: 0, lastError: null, finished: null, deliveries: [], waiting: null, action: 'scan', targets: null, state: 'pending', stateText: 'pending' }]);
    assert.equal(json.queue, relay.queuefile);
    assert.equal(json.queuefile, relay.queuefile);
    assert.ok(Date.parse(json.scans[0].due) >= due);
    listedDue = Date.parse(json.scans[0].due);
  } finally {
    await relay.kill();
  }

  // 30 s later (the queue file's clock moved on): the relay tries the scan, Plex is down, it waits for the next try.
  const db = new Database(relay.queuefile);
  db.prepare('UPDATE scans SET due_at = due_at - 60000, first_at = first_at - 60000').run();
  db.close();
  const again = await spawnRelay({ dir, configPath: relay.configPath });
  try {
    await again.waitForLog((e) => e.msg === 'scan not delivered yet; will retry', 30_000);
  } finally {
    await again.kill();
  }
  const listed = JSON.parse((await runCli(['--queuefile', relay.queuefile, 'queue', '--json'], { cwd: dir })).stdout);
  assert.equal(listed.counts.pending + listed.counts.active, 1, JSON.stringify(listed));
  const [scan] = listed.scans;
  assert.ok(scan.attempts >= 1, JSON.stringify(scan));
  assert.match(scan.lastError, /^plex: .*(ECONNREFUSED|connect|unreachable|down)/i);
  // Due at its next try (after the failed one), not at the due time it had (moved 60 s back above).
  assert.ok(Date.parse(scan.due) > listedDue - 60_000 + 1_000, `due at the next try: ${scan.due}`);
  const text = (await runCli(['--queuefile', relay.queuefile, 'queue'], { cwd: dir })).stdout;
  // Between its attempts it says so, and why (issue 42 item 5), not that it is due or in progress.
  assert.equal(scan.state, 'waiting to retry');
  assert.match(text, /\n {4}waiting to retry \(.*\), next try \S+ \((in \d+ (s|min)|\d+ s ago)\), \d+ attempt\(s\), last error: plex: /);
});

test('`scanrelay queue` with no queue file says so instead of creating one', async () => {
  const dir = tempDir();
  const r = await runCli(['--queuefile', `${dir}/queue.db`, 'queue'], { cwd: dir });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^scanrelay: no queue file at .*queue\.db: the relay has not run with this config yet/);
  const { existsSync } = await import('node:fs');
  assert.ok(!existsSync(`${dir}/queue.db`));
});

test('with no token and no scanner, a manual scan is still queued but its answer says no media server can scan yet, and why', async () => {
  // An empty PATH and the default PLEX_SCANNER (not installed here): the start-up check finds no way to scan.
  const relay = await spawnRelay({ config: { SERVER_ALLOW_MANUAL_SCAN: true, PLEX_TOKEN: '' }, env: { PATH: tempDir() } });
  try {
    await relay.waitForLog((e) => e.key === 'PLEX_TOKEN');
    const answer = await postForm(relay.url, { eventType: 'Manual', filepath: MOVIE });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.status, 'queued');
    assert.match(answer.body.warning, /^no media server can scan yet, so the scan waits in the queue: PLEX_TOKEN is empty/);
    const html = await fetch(relay.url, { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ eventType: 'Manual', filepath: MOVIE }) }).then((r) => r.text());
    assert.match(html, /class="note error">no media server can scan yet/);
  } finally {
    await relay.kill();
  }
});

test('a relay whose Plex is ready answers without a warning', async () => {
  const { FakePlex } = await import('../fakes/plex.ts');
  const plex = await new FakePlex({ token: 'token', sections: [{ id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] }] }).start();
  const relay = await spawnRelay({ config: { SERVER_ALLOW_MANUAL_SCAN: true, PLEX_TOKEN: 'token', PLEX_LOCAL_URL: plex.url, SERVER_SCAN_DELAY: 30 } });
  try {
    await waitFor(async () => (await fetch(`${relay.base}/healthz`)).ok, 10_000, 'health');
    const answer = await postForm(relay.url, { eventType: 'Manual', filepath: MOVIE });
    assert.equal(answer.body.status, 'queued');
    assert.equal(answer.body.warning, undefined);
  } finally {
    await relay.kill();
    await plex.stop();
  }
});

// plex_autoscan: GET /<pass> answers 401 with manual scans off (scan.py:279-282); POST /<pass> (scan.py:313) and
// /api/<pass> (scan.py:242) keep working.
test('with SERVER_ALLOW_MANUAL_SCAN false the 401 page says the webhooks and the JSON API still work, and where', async () => {
  const relay = await spawnRelay({ config: { SERVER_ALLOW_MANUAL_SCAN: false, PLEX_TOKEN: 'token', PLEX_LOCAL_URL: 'http://127.0.0.1:9' } });
  try {
    const page = await fetch(relay.url, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 401);
    const text = (await page.text()).replace(/<[^>]+>/g, '');
    assert.match(text, /the manual scan page is off \(SERVER_ALLOW_MANUAL_SCAN is false; set it to true to use this page\)/);
    assert.match(text, /webhooks and scripts that POST to \/test-secret \(Sonarr, Radarr, Lidarr, Readarr/);
    assert.match(text, /the JSON API under \/api\/test-secret\/ \(queue, history, scan, map\)/);
    // What it names works.
    const queue = await fetch(`${relay.base}/api/test-secret/queue`);
    assert.equal(queue.status, 200);
    const posted = await postForm(relay.url, { eventType: 'Manual', filepath: MOVIE });
    assert.equal(posted.status, 200, posted.text);
    const json = await fetch(relay.url);
    assert.equal(json.status, 401);
    assert.match((await json.json()).error, /Still working: webhooks/);
  } finally {
    await relay.kill();
  }
});
