import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { formatQueue, queueLine } from '../../src/cli/queue.ts';
import { scanRequestSchema, type DeliveryResult, type ScanItem, type Target } from '../../src/core/scan.ts';
import { Scheduler } from '../../src/queue/scheduler.ts';
import { scanView } from '../../src/server/dashboard/data.ts';
import { renderQueue } from '../../src/server/dashboard/render.ts';
import { tempDir, waitFor } from '../helpers/relay.ts';
import { bothStores } from '../helpers/both-stores.ts';

const { stores } = bothStores();

// Issue 42 item 5. The user queues a scan before PLEX_TOKEN is set; it fails and waits out its 5 min back-off
// (README: a setting to change is retried every 5 min). They set the token and restart: the README says queued
// scans resume at once, and they must, since the start read the config again.

const NO_TOKEN = 'PLEX_TOKEN is empty and this machine has no Plex Media Scanner (PLEX_SCANNER /usr/lib/plexmediaserver/Plex Media Scanner): no scan can run; set PLEX_TOKEN';

/** A Plex target as the relay's: serial, answering each delivery with `answer`, recording the folders. */
function target(answer: () => DeliveryResult): Target & { delivered: string[] } {
  const delivered: string[] = [];
  return {
    name: 'plex',
    serial: true,
    delivered,
    async deliver(item: ScanItem) {
      const result = answer();
      if (result.outcome === 'done') delivered.push(item.folder);
      return result;
    },
    async available() {
      return { ok: true };
    },
  };
}

for (const [storeName, openStore] of stores) test(`a scan that failed for want of a token shows "waiting to retry (reason)", and is delivered at once after a restart with the token set (${storeName})`, async () => {
  const file = join(tempDir(), 'queue.db');
  const log = pino({ level: 'silent' });
  const store = await openStore();
  const [queued] = await store.enqueueMany([scanRequestSchema.parse({ folder: '/data/Movies/Heat (1995)', source: 'Manual' })], { delayMs: 0, maxMs: 0 });

  // Before the token: the target answers as the Plex target does without one (slow: the 5 min back-off).
  const before = target(() => ({ outcome: 'retry', error: NO_TOKEN, slow: true }));
  let tried = false;
  const first = new Scheduler(store, [before], log, { retryMaxMs: 5 * 60_000, onDelivery: () => (tried = true) });
  await first.start();
  // Polled, not awaited as a bare promise: the scheduler's timer is unref'd (it never holds a relay open), so an
  // in-process SQLite store leaves the event loop nothing to wait on, and node's runner cancels the test.
  await waitFor(() => tried, 20_000, 'the first delivery');
  await first.stop();

  const entry = (await store.view.get(queued!.id))!;
  assert.ok(entry.deliveries[0]!.next_at > Date.now() + 60_000, 'it waits out the back-off');
  // The dashboard, the API and `scanrelay queue` say it waits to retry, and why; not "in progress".
  const view = scanView(entry);
  assert.equal(view.state, 'waiting to retry');
  assert.equal(view.stateText, 'waiting to retry (PLEX_TOKEN is empty and this machine has no Plex Media Scanner (PLEX_SCANNER /usr/lib/plexmediaserver/Plex Media Scanner))');
  assert.match(renderQueue([view]), /<span class="badge active">waiting to retry<\/span>/);
  assert.match(renderQueue([view]), /<span data-state="waiting to retry">waiting to retry \(PLEX_TOKEN is empty/);
  assert.equal(queueLine(entry).stateText, view.stateText);
  const listed = formatQueue(file, await store.view.counts(), await store.view.listOpen(), Date.now());
  assert.match(listed, /\n {4}waiting to retry \(PLEX_TOKEN is empty and this machine has no Plex Media Scanner \(PLEX_SCANNER [^)]*\)\), next try \S+ \(in 5 min\), 1 attempt\(s\)/, listed);
  assert.doesNotMatch(listed, /in progress/);

  // The restart, with the token set: the scan goes at once, not in 5 min.
  const after = target(() => ({ outcome: 'done' }));
  const second = new Scheduler(store, [after], log, { retryMaxMs: 5 * 60_000 });
  try {
    await second.start();
    await waitFor(async () => (await store.view.get(queued!.id))!.status === 'done', 20_000, 'the scan delivered after the restart');
    assert.deepEqual(after.delivered, ['/data/Movies/Heat (1995)']);
  } finally {
    await second.stop();
  }
});
