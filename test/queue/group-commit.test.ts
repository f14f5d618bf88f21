import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ScanRequest } from '../../src/core/scan.ts';
import { QueueIntake } from '../../src/queue/door.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { bothStores } from '../helpers/both-stores.ts';

// QueueIntake, the one door into the queue: requests that arrive in the same turn of the event loop share one
// commit (one fsync), each caller still gets exactly its own answers, and a commit that fails reaches every
// caller that was waiting on it, with nothing half-written.

const TIMING = { delayMs: 60_000, maxMs: 0 };
const request = (folder: string): ScanRequest => ({ folder, source: 'Manual' });

const { stores } = bothStores();

/** A real queue (SQLite in memory, or PostgreSQL) whose commits are counted, and can be made to fail. */
async function countedStore(open: () => Promise<QueueBackend> = async () => new QueueStore(':memory:')) {
  const store = await open();
  const commits: number[] = [];
  const failures: Error[] = [];
  const real = store.enqueueMany.bind(store);
  store.enqueueMany = (requests, timing, now) => {
    const failure = failures.shift();
    if (failure) throw failure;
    commits.push(requests.length);
    return real(requests, timing, now);
  };
  return { store, commits, failures };
}

for (const [storeName, openStore] of stores) test(`(${storeName}) requests of one turn share one commit, and each caller gets its own results in its own order`, async () => {
  const { store, commits } = await countedStore(openStore);
  const committed: number[] = [];
  const intake = new QueueIntake(store, [], () => TIMING, (results) => committed.push(results.length));
  const [a, b, c] = await Promise.all([
    intake.enqueue([request('/data/Movies/A')]),
    intake.enqueue([request('/data/TV/B/Season 01'), request('/data/TV/C')]),
    intake.enqueue([request('/data/Movies/A')]),
  ]);
  assert.deepEqual(commits, [4], 'one commit for the three callers');
  assert.deepEqual(committed, [4], 'onCommitted once, with every result');
  assert.deepEqual(a!.map((r) => [r.folder, r.status]), [['/data/Movies/A', 'queued']]);
  assert.deepEqual(b!.map((r) => [r.folder, r.status]), [['/data/TV/B/Season 01', 'queued'], ['/data/TV/C', 'queued']]);
  assert.deepEqual(c!.map((r) => [r.folder, r.status]), [['/data/Movies/A', 'merged']]);
  assert.equal(c![0]!.id, a![0]!.id, 'the third request merged into the first one\'s scan');

  // A later turn is a commit of its own.
  await intake.enqueue([request('/data/Movies/D')]);
  assert.deepEqual(commits, [4, 1]);
  assert.equal(await store.countOpen(), 4);
});

for (const [storeName, openStore] of stores) test(`(${storeName}) a failed commit rejects every caller that waited on it, queues nothing, and the next turn commits again`, async () => {
  const { store, commits, failures } = await countedStore(openStore);
  const intake = new QueueIntake(store, [], () => TIMING);
  const disk = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
  failures.push(disk);
  const answers = await Promise.allSettled([intake.enqueue([request('/data/Movies/A')]), intake.enqueue([request('/data/Movies/B')])]);
  assert.deepEqual(answers.map((a) => a.status), ['rejected', 'rejected']);
  for (const a of answers) assert.equal((a as PromiseRejectedResult).reason, disk);
  assert.equal(await store.countOpen(), 0);
  assert.deepEqual(commits, []);

  const [again] = await intake.enqueue([request('/data/Movies/A')]);
  assert.equal(again!.status, 'queued');
  assert.deepEqual(commits, [1]);
});

test('while another process holds the lock the batch is retried, and given up with the busy error after the deadline', async () => {
  const { store, failures } = await countedStore();
  const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  failures.push(busy(), busy());
  const patient = new QueueIntake(store, [], () => TIMING, () => {}, 2_000);
  const [r] = await patient.enqueue([request('/data/Movies/A')]);
  assert.equal(r!.status, 'queued', 'committed once the lock was free');

  for (let i = 0; i < 100; i++) failures.push(busy());
  const hasty = new QueueIntake(store, [], () => TIMING, () => {}, 120);
  await assert.rejects(hasty.enqueue([request('/data/Movies/B')]), (err: Error & { code?: string }) => err.code === 'SQLITE_BUSY');
  assert.equal(await store.countOpen(), 1, 'only the first request is queued');
});

for (const [storeName, openStore] of stores) test(`(${storeName}) a request that breaks the schema rejects the promise (no synchronous throw) and queues nothing`, async () => {
  const { store, commits } = await countedStore(openStore);
  const intake = new QueueIntake(store, [], () => TIMING);
  let answer: Promise<unknown> | undefined;
  assert.doesNotThrow(() => {
    answer = intake.enqueue([request('/data/Movies/A'), { folder: '', source: 'Manual' }]);
  });
  await assert.rejects(answer!);
  assert.equal(await store.countOpen(), 0);
  assert.deepEqual(commits, []);
});
