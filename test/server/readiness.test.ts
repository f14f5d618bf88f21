import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Target } from '../../src/core/scan.ts';
import { notReadyReason } from '../../src/server/readiness.ts';

// Issue 49 item 3: readiness asks the Target contract (setupProblems), never which class a target is.
const target = (name: string, withCheck: boolean): Target => ({
  name,
  deliver: async () => ({ outcome: 'done' }),
  available: async () => ({ ok: true }),
  ...(withCheck ? { setupProblems: async () => [] } : {}),
});

test('a target with a set-up check and problems holds the answer back; one without a check is taken as able', () => {
  const problems = () => [{ key: 'PLEX_TOKEN', message: 'PLEX_TOKEN is empty' }];
  assert.equal(notReadyReason({ targets: [target('plex4k', true)], setupProblems: problems }), 'no media server can scan yet, so the scan waits in the queue: PLEX_TOKEN is empty');
  assert.equal(notReadyReason({ targets: [target('plex4k', true), target('hook', false)], setupProblems: problems }), undefined);
  // A server that is down (its URL key) may come back at any time: not told with every scan.
  assert.equal(notReadyReason({ targets: [target('plex4k', true)], setupProblems: () => [{ key: 'PLEX_LOCAL_URL', message: 'down' }] }), undefined);
  assert.match(notReadyReason({ targets: [] })!, /^no media server is enabled/);
});
