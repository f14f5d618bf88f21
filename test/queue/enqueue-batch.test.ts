import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { scanRequestSchema } from '../../src/core/scan.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { tempDir } from '../helpers/relay.ts';
import { bothStores } from '../helpers/both-stores.ts';

const { stores } = bothStores();

// One enqueue transaction merges in memory and writes each pending scan once (EnqueueBatch). Whatever a
// burst holds, the queue must end exactly as if every request had been committed on its own.

const folders = ['/tv/Dark', '/tv/Dark/Season 01', '/tv/Dark/Season 02', '/tv/Dark/Season 01/Extras', '/tv/Darkness', '/tv', '/movies/Heat (1995)'];
const requestArb = fc.record({
  folder: fc.constantFrom(...folders),
  file: fc.option(fc.constantFrom('a.mkv', 'b.mkv'), { nil: undefined }),
  priority: fc.integer({ min: 0, max: 3 }),
  updateType: fc.constantFrom('Created', 'Modified', 'Deleted'),
  title: fc.option(fc.constantFrom('Dark', 'Heat'), { nil: undefined }),
  id: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
});

const normalize = (r: { folder: string; file?: string; priority: number; updateType: string; title?: string; id?: number }) =>
  scanRequestSchema.parse({
    folder: r.folder,
    files: r.file ? [`${r.folder}/${r.file}`] : [],
    source: 'Sonarr',
    event: 'Download',
    priority: r.priority,
    updateType: r.updateType,
    title: r.title,
    ids: r.id === undefined ? undefined : { tvdbId: r.id },
  });

test('a burst committed in one transaction leaves the queue as one commit per request would', () => {
  const timing = { delayMs: 10_000, maxMs: 30_000 };
  fc.assert(
    fc.property(fc.array(fc.array(requestArb, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }), (bursts) => {
      const batched = new QueueStore(join(tempDir('scanrelay-batch-'), 'queue.db'));
      const single = new QueueStore(join(tempDir('scanrelay-single-'), 'queue.db'));
      try {
        bursts.forEach((burst, i) => {
          const now = 1_000 * (i + 1);
          const requests = burst.map(normalize);
          const together = batched.enqueueMany(requests, timing, now);
          const oneByOne = requests.map((r) => single.enqueueMany([r], timing, now)[0]);
          assert.deepEqual(together, oneByOne);
        });
        assert.deepEqual(batched.view.listOpen(), single.view.listOpen());
      } finally {
        batched.close();
        single.close();
      }
    }),
    { numRuns: 150 },
  );
});

for (const [storeName, openStore] of stores) test(`a burst of 1,000 requests for one folder is one scan counting 1,000 requests (${storeName})`, async () => {
  const store = await openStore();
  const requests = Array.from({ length: 1000 }, (_, i) => normalize({ folder: '/tv/Dark/Season 01', file: i % 2 ? 'a.mkv' : 'b.mkv', priority: i === 500 ? -1 : 2, updateType: 'Created' }));
  const results = await store.enqueueMany(requests, { delayMs: 5_000, maxMs: 0 }, 1_000);
  assert.equal(new Set(results.map((r) => r.id)).size, 1);
  assert.equal(results[0]!.status, 'queued');
  assert.ok(results.slice(1).every((r) => r.status === 'merged'));
  const [entry] = await store.view.listOpen();
  assert.equal(entry!.requests, 1000);
  // The most urgent request decides: lower numbers go first (plex_autoscan threads.py:11-40).
  assert.equal(entry!.priority, -1);
  assert.deepEqual(entry!.files, ['/tv/Dark/Season 01/a.mkv', '/tv/Dark/Season 01/b.mkv']);
});
