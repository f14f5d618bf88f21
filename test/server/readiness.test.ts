import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Target } from '../../src/core/scan.ts';
import { notReadyReason } from '../../src/server/readiness.ts';
import { mapPreview } from '../../src/server/dashboard/data.ts';
import { testConfig } from '../helpers/plex-target.ts';

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

test("the dashboard's map preview asks the first target with sections, in its own path", async () => {
  const asked: string[] = [];
  const plex4k: Target = {
    ...target('plex4k', true),
    toTargetPath: (p) => p.replace(/^\/mnt\//, '/4k/'),
    sections: {
      find: async (folder) => {
        asked.push(folder);
        return { id: '7', title: 'Movies 4K', location: '/4k/Movies' };
      },
    },
  };
  const config = testConfig({ PLEX_ENABLED: false });
  const out = await mapPreview('/mnt/Movies/Up (2009)/up.mkv', { config, targets: [target('hook', false), plex4k] });
  assert.deepEqual(out.section, { target: 'plex4k', id: '7', title: 'Movies 4K', location: '/4k/Movies' });
  assert.deepEqual(asked, ['/mnt/Movies/Up (2009)'], 'given the relay\'s folder: the target rewrites it itself');
  const none = await mapPreview('/mnt/Movies/Up (2009)/up.mkv', { config, targets: [target('hook', false)] });
  assert.equal(none.sectionError, 'no Plex target is enabled');
});
