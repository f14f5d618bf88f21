import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import type { NotificationHealth } from '../../src/core/status.ts';
import { SqliteOutbox } from '../../src/queue/outbox.ts';
import { JsonReceiverFake } from '../fakes/notify-services.ts';
import { spawnRelay, waitFor, type RelayProcess } from '../helpers/relay.ts';

// Issue 52, item 8 (its last point): a destination's health (last success, events waiting, given up) shows on the
// dashboard, the JSON API and /metrics, not only in the log. A real relay; its events come from another writer
// on its queue file.

let relay: RelayProcess | undefined;
let sink: JsonReceiverFake | undefined;
after(async () => {
  await relay?.kill('SIGKILL');
  await sink?.stop();
  if (relay) rmSync(relay.dir, { recursive: true, force: true });
});

test('a failing destination and its recovery, on the dashboard, the JSON API and /metrics', async () => {
  sink = await new JsonReceiverFake().start();
  await sink.setMode('error503');
  relay = await spawnRelay({
    config: { PLEX_ENABLED: false, SERVER_ALLOW_MANUAL_SCAN: true, NOTIFICATIONS: { hook: { TYPE: 'json', URL: `${sink.url}/hook-secret-path`, BATCH_SECONDS: 0, GIVE_UP_AFTER: 1 } } },
  });
  const r = relay;
  const write = (folders: string[]) => {
    const db = new Database(r.queuefile);
    try {
      new SqliteOutbox(db).append(folders.map((folder) => ({ kind: 'scanned' as const, at: Date.now(), target: 'plex', folder })));
    } finally {
      db.close();
    }
  };
  const api = async (): Promise<NotificationHealth> => {
    const res = await fetch(`${r.base}/api/${r.secret}/notifications`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { notifications: NotificationHealth[] };
    assert.equal(body.notifications.length, 1);
    return body.notifications[0]!;
  };
  const page = async () => (await fetch(r.url)).text();
  const metrics = async () => (await fetch(`${r.base}/metrics`)).text();

  await waitFor(async () => (await api()).turn === 'here', 15_000, 'the sender holds its destination');
  write(['/m/one', '/m/two']);
  // Refused (503) for GIVE_UP_AFTER (1 s) since their first try: given up.
  const failing = (await waitFor(async () => {
    const h = await api();
    return h.givenUp === 2 ? h : undefined;
  }, 20_000, 'both events given up'))!;
  assert.equal(failing.name, 'hook');
  assert.equal(failing.type, 'json');
  assert.equal(failing.lastSuccessAt, null);
  assert.equal(failing.waiting, 0, 'what was given up no longer waits');
  assert.ok(failing.failingSince !== null && failing.lastGiveUpAt !== null);
  assert.match(failing.lastAnswer ?? '', /^503/);
  const html = await page();
  assert.match(html, /<li class="bad" data-notification="hook" data-waiting="\d+" data-given-up="2">.*nothing sent yet.*2 given up.*not taken for/);
  const m = await metrics();
  assert.match(m, /scanrelay_notification_events_given_up_total\{destination="hook"\} 2/);
  assert.match(m, /scanrelay_notification_failing\{destination="hook"\} 1/);
  for (const text of [html, m, JSON.stringify(failing)]) assert.ok(!text.includes('hook-secret-path'), 'the URL is never shown');

  await sink.setMode('up');
  write(['/m/three']);
  const ok = (await waitFor(async () => {
    const h = await api();
    return h.lastSuccessAt !== null && h.failingSince === null ? h : undefined;
  }, 20_000, 'the destination taking again'))!;
  assert.equal(ok.waiting, 0);
  assert.equal(ok.lastAnswer, null);
  assert.deepEqual(sink.taken.flatMap((c) => c.json.events.map((e: { folder: string }) => e.folder)), ['/m/three']);
  assert.match(await page(), /<li class="ok" data-notification="hook" data-waiting="0" data-given-up="2">.*last sent \d+ s ago, 0 waiting, 2 given up</);
  const after = await metrics();
  assert.match(after, /scanrelay_notification_failing\{destination="hook"\} 0/);
  assert.match(after, /scanrelay_notification_events_waiting\{destination="hook"\} 0/);
  const last = Number(/scanrelay_notification_last_success_timestamp_seconds\{destination="hook"\} ([\d.]+)/.exec(after)?.[1]);
  assert.ok(Math.abs(last * 1000 - ok.lastSuccessAt!) < 1, `${last}`);
});
