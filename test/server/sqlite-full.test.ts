import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { QueueStore } from '../../src/queue/store.ts';
import { FakePlex } from '../fakes/plex.ts';
import { postForm, waitFor } from '../helpers/relay.ts';
import { startRelayAgainst } from '../helpers/suite.ts';

/**
 * SQLite's own "database or disk is full" (SQLITE_FULL), without a full disk: `PRAGMA max_page_count` caps the
 * relay's queue file at the pages it has. test/e2e/disk-full.test.ts does the same on a real full tmpfs (as root).
 */
test('the queue file is full (SQLITE_FULL): requests get a clear 503 with Retry-After, nothing accepted or queued is lost, and room again takes requests', async () => {
  const plex = await new FakePlex().start();
  const lines: Array<Record<string, any>> = [];
  const log = pino({ level: 'debug', base: undefined }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  const relay = await startRelayAgainst(plex, { SERVER_PASS: 'full-secret', SERVER_ALLOW_MANUAL_SCAN: true, PLEX_ANALYZE_TYPE: 'off' }, { log });
  const db = (relay.store as QueueStore).db;
  const scan = async (name: string) => {
    const res = await fetch(relay.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ eventType: 'Manual', filepath: `/movies/${name}/film.mkv` }).toString(),
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { error?: string; status?: string } };
  };
  const accepted: string[] = [];
  try {
    for (const name of ['Heat (1995)', 'Dune (2021)', 'Alien (1979)']) {
      assert.equal((await scan(name)).status, 200);
      accepted.push(`/data/Movies/${name}`);
    }
    db.pragma('incremental_vacuum');
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);

    // Requests are taken while the file's free pages last, then refused: never a 500, never a lost 200.
    let refused: Awaited<ReturnType<typeof scan>> | undefined;
    for (let i = 0; i < 5000 && !refused; i++) {
      const answer = await scan(`Filler ${i} (2000)`);
      if (answer.status === 200) accepted.push(`/data/Movies/Filler ${i} (2000)`);
      else refused = answer;
    }
    assert.ok(refused, 'the capped file refused a request');
    for (const answer of [refused, await scan('Refused A (2000)'), await scan('Refused B (2000)')]) {
      assert.equal(answer.status, 503);
      assert.equal(answer.retryAfter, '60');
      assert.match(String(answer.body.error), /^the queue file's disk is full \(.*queue\.db\): nothing was queued; free some space there, then send again \(try in 60 s\)$/);
    }
    assert.ok(!lines.some((l) => l.msg === 'internal error while handling a request'), 'no 500');
    assert.equal(lines.filter((l) => / is full: scan requests are answered 503/.test(l.msg)).length, 1, 'one log line for every refused request');

    const queued = () => new Set(db.prepare<[], { folder: string }>(`SELECT folder FROM scans`).all().map((r) => r.folder));
    for (const folder of accepted) assert.ok(queued().has(folder), `${folder} was answered 200 and is queued`);
    assert.ok(!queued().has('/data/Movies/Refused A (2000)'));

    // Queued scans still go out and are recorded while the file is full (an update needs no new page).
    db.prepare(`UPDATE scans SET due_at = 0 WHERE folder IN ('/data/Movies/Heat (1995)', '/data/Movies/Dune (2021)')`).run();
    relay.scheduler.poke();
    await waitFor(() => plex.refreshes().length === 2, 15_000, 'the due scans sent');
    await waitFor(() => (db.prepare(`SELECT count(*) AS n FROM scans WHERE status = 'done'`).get() as { n: number }).n === 2, 15_000, 'both recorded as done');
    assert.equal(plex.refreshes().length, 2, 'each sent once');

    // Room again: the refused request, sent again, is taken.
    db.pragma('max_page_count = 1073741823');
    const again = await scan('Refused A (2000)');
    assert.equal(again.status, 200);
    assert.ok(queued().has('/data/Movies/Refused A (2000)'));
  } finally {
    await relay.close();
    await plex.stop();
  }
});
