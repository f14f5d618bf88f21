// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/load.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { QueueIntake } from '../../src/queue/door.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { buildApp } from '../../src/server/app.ts';
import { scanView } from '../../src/server/dashboard/data.ts';
import { dashboardPlugin } from '../../src/server/dashboard/index.ts';
import { duration, renderQueue, renderStatus } from '../../src/server/dashboard/render.ts';
import { recognizeTest } from '../../src/triggers/manual/recognize.ts';
import { tempDir } from '../helpers/relay.ts';

function setup(extra: Record<string, unknown> = {}) {
  const { config } = parseConfig({ SERVER_PASS: 's3cret', SERVER_ALLOW_MANUAL_SCAN: true, ...extra });
  const store = new QueueStore(join(tempDir(), 'queue.db'));
  const intake = new QueueIntake(store, [], () => ({ delayMs: 60_000, maxMs: 180_000 }));
  return { config, store, intake, log: silentLogger(), recognizers: [recognizeTest] };
}

test('folder names and titles from requests are escaped, never markup', async () => {
  const deps = setup();
  await deps.intake.enqueue([{ folder: '/data/TV/<img src=x onerror=alert(1)>', source: 'Sonarr', title: '"><script>alert(2)</script>' }]);
  const html = renderQueue(deps.store.view.listOpen().map(scanView));
  assert.ok(!html.includes('<img'));
  assert.ok(!html.includes('<script>'));
  assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
  assert.match(html, /&lt;script&gt;alert\(2\)&lt;\/script&gt;/);
  deps.store.close();
});

test('the status strip says what is reachable, the drive state and the queue depth', () => {
  const html = renderStatus({
    targets: [{ name: 'plex', ok: false, error: 'Plex (GET /identity) unreachable: ECONNREFUSED' }],
    queue: { pending: 3, active: 1 },
    drive: { state: 'backoff', nextPollAt: 1_000_000 + 90_000, error: 'rate limited' },
  }, 1_000_000);
  assert.match(html, /plex<\/strong> unreachable.*ECONNREFUSED/);
  assert.match(html, /drive<\/strong> backing off, next try in 1 min 30 s: rate limited/);
  assert.match(html, /3 pending, 1 active/);
  assert.match(renderStatus({ targets: [], queue: { pending: 0, active: 0 }, drive: { state: 'off' } }), /drive<\/strong> off/);
});

// Issue 42 item 9: the first dashboard without Plex led with the scanner check's sudo failure, and the cause that
// blocks every scan (no PLEX_TOKEN) came second.
test('the status strip leads with the set-up problem that blocks scans, before a target\'s failed check', () => {
  const html = renderStatus({
    targets: [{ name: 'plex', ok: false, error: 'the Plex Media Scanner check cannot run sudo: not found on PATH' }],
    problems: [{ key: 'PLEX_TOKEN', message: 'PLEX_TOKEN is empty and this machine has no Plex Media Scanner' }],
    queue: { pending: 0, active: 0 },
    drive: { state: 'off' },
  });
  const items = [...html.matchAll(/<li[^>]*>(.*?)<\/li>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ''));
  assert.match(items[0]!, /^set-up PLEX_TOKEN is empty/, items.join(' | '));
  assert.ok(items.findIndex((i) => /sudo/.test(i)) > 0, 'the scanner check comes after it');
});

test('with a shared queue the drive state names the relay that polls: this one, or another (standby)', () => {
  const strip = (drive: Parameters<typeof renderStatus>[0]['drive']) => renderStatus({ targets: [], queue: { pending: 0, active: 0 }, drive }, 1_000_000);
  const standby = strip({ state: 'standby', polledBy: 'media<box>:3468', lastPollAt: 999_000, nextPollAt: 1_030_000 });
  assert.match(standby, /data-drive="standby"/);
  assert.match(standby, /class="ok"[^>]*data-drive/);
  assert.match(standby, /drive<\/strong> standby: polled by relay media&lt;box&gt;:3468</);
  assert.match(strip({ state: 'polling', polledBy: 'feeder:3468', nextPollAt: 1_060_000 }), /drive<\/strong> polling \(this relay, feeder:3468\), next in 1 min</);
  assert.match(strip({ state: 'polling', nextPollAt: 1_060_000 }), /drive<\/strong> polling, next in 1 min</);
});

test('durations read as people say them', () => {
  assert.equal(duration(4_400), '4 s');
  assert.equal(duration(250_000), '4 min 10 s');
  assert.equal(duration(180_000), '3 min');
  assert.equal(duration(7_500_000), '2 h 5 min');
});

test('without the dashboard plugin the bare manual page still answers; with it the dashboard does; manual scans off gives 401', async () => {
  const bare = await buildApp(setup());
  const page = await bare.inject({ url: '/s3cret', headers: { accept: 'text/html' } });
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /name="filepath"/);
  assert.ok(!page.body.includes('id="queue"'));

  const withDashboard = await buildApp({ ...setup(), plugins: [dashboardPlugin] });
  const dash = await withDashboard.inject({ url: '/s3cret' });
  assert.equal(dash.statusCode, 200);
  assert.match(dash.body, /<form method="post" action="" id="scan-form">/);
  assert.match(dash.body, /<input type="hidden" name="eventType" value="Manual">/);
  assert.match(dash.body, /id="queue"/);
  assert.equal((await withDashboard.inject({ url: '/wrong' })).statusCode, 404);
  const js = await withDashboard.inject({ url: '/s3cret/dashboard.js' });
  assert.equal(js.statusCode, 200);
  assert.match(js.headers['content-type'] as string, /javascript/);
  assert.equal((await withDashboard.inject({ url: '/wrong/dashboard.js' })).statusCode, 404);

  for (const plugins of [[], [dashboardPlugin]]) {
    const off = await buildApp({ ...setup({ SERVER_ALLOW_MANUAL_SCAN: false }), plugins });
    const res = await off.inject({ url: '/s3cret', headers: { accept: 'application/json' } });
    assert.equal(res.statusCode, 401);
    assert.match(res.json().error, /SERVER_ALLOW_MANUAL_SCAN/);
  }
});

test('an open dashboard refreshing does not use up SERVER_RATE_LIMIT; senders still are limited', async () => {
  const app = await buildApp({ ...setup({ SERVER_RATE_LIMIT: 3 }), plugins: [dashboardPlugin] });
  for (let i = 0; i < 6; i++) assert.equal((await app.inject({ url: '/s3cret/parts' })).statusCode, 200, `refresh ${i}`);
  const codes = [];
  for (let i = 0; i < 4; i++) codes.push((await app.inject({ method: 'POST', url: '/s3cret', payload: { eventType: 'Test' } })).statusCode);
  assert.deepEqual(codes, [200, 200, 200, 429]);
});
