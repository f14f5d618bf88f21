import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HoldTracker } from '../../src/queue/events.ts';
import { RetryLog } from '../../src/queue/retry-log.ts';

// Issue 52 item 8, the bookkeeping alone, with a clock of the test's: one line per target per minute, and a hold
// told when it is due whether or not an attempt lands then.

test('RetryLog: the first failure is told, the next ones counted until a minute has passed; each target on its own', () => {
  const log = new RetryLog(60_000);
  assert.deepEqual(log.failed('jf', 1, 0), { failedAttempts: 1, scans: 1, overMs: 0 });
  for (let i = 0; i < 300; i++) assert.equal(log.failed('jf', 1 + (i % 20), 100 + i * 100), undefined);
  // Another target is told on its own first failure.
  assert.deepEqual(log.failed('tdarr', 5, 500), { failedAttempts: 1, scans: 1, overMs: 0 });
  assert.deepEqual(log.failed('jf', 7, 60_000), { failedAttempts: 301, scans: 20, overMs: 60_000 });
  assert.equal(log.failed('jf', 7, 61_000), undefined);
  assert.deepEqual(log.answered('jf', 70_000), { failedAttempts: 1, scans: 1, overMs: 10_000 });
  // Answered: the next failure is told at once again; nothing counted is nothing told.
  assert.deepEqual(log.failed('jf', 9, 80_000), { failedAttempts: 1, scans: 1, overMs: 0 });
  assert.equal(log.answered('jf', 80_001), undefined);
});

test('HoldTracker.due: `waiting` once the hold lasted afterMs, once; never for a hold that ended', () => {
  const holds = new HoldTracker(60_000);
  assert.equal(holds.held('jf', 'jf does not answer', 1000, 'jf'), undefined);
  assert.equal(holds.due('jf', 60_999), undefined);
  assert.deepEqual(holds.due('jf', 61_000), { kind: 'waiting', at: 61_000, target: 'jf', reason: 'jf does not answer', requestedAt: 1000 });
  assert.equal(holds.due('jf', 62_000), undefined);
  assert.equal(holds.held('jf', 'jf does not answer', 63_000, 'jf'), undefined);
  assert.ok(holds.clear('jf', 64_000, 'jf'));
  assert.equal(holds.due('jf', 200_000), undefined);
});
