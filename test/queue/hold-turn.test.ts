// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DeliveryResult, Target } from '../../src/core/scan.ts';
import { runQueue } from '../helpers/plex-target.ts';
import { waitFor } from '../helpers/relay.ts';

/** A serial target whose first `holds` answers for /data/A are "retry, keep the turn". */
function holdingTarget(holds: number): Target & { seen: string[]; serial: true } {
  let left = holds;
  const target: Target & { seen: string[]; serial: true } = {
    name: 'plex',
    serial: true,
    seen: [],
    async deliver(item): Promise<DeliveryResult> {
      target.seen.push(item.folder);
      if (item.folder === '/data/A' && left-- > 0) return { outcome: 'retry', error: 'waiting for Plex to answer', retryAfterMs: 20, countsAsAttempt: false, holdTurn: true };
      return { outcome: 'done' };
    },
    available: async () => ({ ok: true }),
  };
  return target;
}

// plex_autoscan waits for Plex while holding its scan lock (plex.py:134-167): the scheduler's holdTurn.
describe('holdTurn: a serial target\'s scan keeps the turn while it waits', () => {
  test('no other scan of the target is delivered until the holding scan ends', async () => {
    const target = holdingTarget(3);
    const q = runQueue([target]);
    try {
      const base = { files: [] as string[], source: 'Manual' as const, event: 'Manual', updateType: 'Modified' as const, priority: 0 };
      q.store.enqueueMany(['/data/A', '/data/B', '/data/C'].map((folder) => ({ ...base, folder })), { delayMs: 0, maxMs: 0 });
      q.scheduler.poke();
      await waitFor(() => target.seen.length === 6, 10_000, 'six deliveries');
      assert.deepEqual(target.seen, ['/data/A', '/data/A', '/data/A', '/data/A', '/data/B', '/data/C']);
    } finally {
      await q.close();
    }
  });

  test('safety: stopping while a scan holds the turn records it as a retry, so it is delivered after a restart', async () => {
    const target = holdingTarget(Infinity);
    const q = runQueue([target]);
    const id = q.enqueue('/data/A');
    await waitFor(() => target.seen.length >= 2, 10_000, 'held');
    await q.scheduler.stop();
    const delivery = q.store.view.get(id)!.deliveries[0]!;
    assert.equal(delivery.status, 'waiting');
    assert.equal(delivery.last_error, 'waiting for Plex to answer');
    q.store.close();
  });
});
