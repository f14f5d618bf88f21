// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ActivityFeed } from '../../../src/targets/plex/activity-feed.ts';
import type { PlexActivity, PlexSection } from '../../../src/targets/plex/api.ts';

function fakeApi() {
  const calls: number[] = [];
  let fail = false;
  let sectionsFail = false;
  let answer: PlexActivity[] = [{ type: 'library.update.section', sectionId: '1', uuid: 'u1' }];
  let sections: PlexSection[] = [{ id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'], refreshing: false }];
  return {
    calls,
    setFail: (f: boolean) => (fail = f),
    setSectionsFail: (f: boolean) => (sectionsFail = f),
    setAnswer: (a: PlexActivity[]) => (answer = a),
    setSections: (s: PlexSection[]) => (sections = s),
    activities: async () => {
      calls.push(Date.now());
      await new Promise((r) => setTimeout(r, 5));
      if (fail) throw new Error('Plex unreachable');
      return answer;
    },
    sections: async () => {
      if (sectionsFail || fail) throw new Error('Plex unreachable');
      return sections;
    },
  };
}

test('many scans reading at once share one read', async (t) => {
  // The snapshot's age is read from the test's clock: on a loaded machine the 500 reads may take longer than maxAge.
  t.mock.timers.enable({ apis: ['Date'], now: 1_700_000_000_000 });
  const api = fakeApi();
  const feed = new ActivityFeed(api, 1000);
  const results = await Promise.all(Array.from({ length: 500 }, () => feed.current()));
  assert.equal(api.calls.length, 1);
  assert.ok(results.every((r) => r.length === 1 && r[0]!.sectionId === '1' && r[0]!.uuid === 'u1'));
  t.mock.timers.tick(999);
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

test('a section that is refreshing counts as a running scan, also when /activities is missing (old servers)', async () => {
  const api = fakeApi();
  api.setAnswer([{ type: 'media.generate.bif', uuid: 'x' }]);
  api.setSections([{ id: '2', title: 'TV', type: 'show', locations: ['/data/TV'], refreshing: true }]);
  const feed = new ActivityFeed(api, 0);
  assert.deepEqual(await feed.current(), [{ sectionId: '2', title: 'TV (refreshing)' }], 'other activity types are not scans');
  api.activities = async () => {
    throw new Error('Plex activities: HTTP 404');
  };
  assert.deepEqual(await feed.current(), [{ sectionId: '2', title: 'TV (refreshing)' }]);
  api.setSectionsFail(true);
  await assert.rejects(feed.current(), /404/, 'neither read answered: the caller cannot tell');
});
