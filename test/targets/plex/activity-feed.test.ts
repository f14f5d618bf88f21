import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ActivityFeed } from '../../../src/targets/plex/activity-feed.ts';
import type { PlexActivity } from '../../../src/targets/plex/api.ts';

function fakeApi() {
  const calls: number[] = [];
  let fail = false;
  let answer: PlexActivity[] = [{ type: 'library.update.section', sectionId: '1' }];
  return {
    calls,
    setFail: (f: boolean) => (fail = f),
    setAnswer: (a: PlexActivity[]) => (answer = a),
    activities: async () => {
      calls.push(Date.now());
      await new Promise((r) => setTimeout(r, 5));
      if (fail) throw new Error('Plex unreachable');
      return answer;
    },
  };
}

test('many scans reading /activities at once share one request', async () => {
  const api = fakeApi();
  const feed = new ActivityFeed(api, 1000);
  const results = await Promise.all(Array.from({ length: 500 }, () => feed.current()));
  assert.equal(api.calls.length, 1);
  assert.ok(results.every((r) => r.length === 1 && r[0]!.sectionId === '1'));
  await feed.current();
  assert.equal(api.calls.length, 1, 'a snapshot younger than maxAge is reused');
});

test('an old snapshot is read again; a failure is not cached', async () => {
  const api = fakeApi();
  const feed = new ActivityFeed(api, 1000);
  await feed.current(0);
  api.setAnswer([]);
  assert.deepEqual(await feed.current(Date.now() + 5000), []);
  assert.equal(api.calls.length, 2);
  api.setFail(true);
  await assert.rejects(feed.current(Date.now() + 10_000), /unreachable/);
  api.setFail(false);
  assert.deepEqual(await feed.current(Date.now() + 10_000), []);
  assert.equal(api.calls.length, 4);
});
