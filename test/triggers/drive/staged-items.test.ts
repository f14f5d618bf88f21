// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StagedItems, type CachedItem, type ItemStore } from '../../../src/triggers/drive/cache.ts';

/** A base store that answers with promises, as the PostgreSQL cache does, and counts its reads. */
class AsyncBase implements ItemStore {
  readonly reads: string[] = [];
  readonly batches: string[][] = [];
  constructor(private readonly items: Map<string, CachedItem>) {}
  async get(id: string) {
    this.reads.push(id);
    return this.items.get(id);
  }
  async put(): Promise<void> {
    throw new Error('a staged overlay never writes its base');
  }
  async remove(): Promise<boolean> {
    throw new Error('a staged overlay never writes its base');
  }
  async children(parentId: string) {
    return [...this.items.values()].filter((i) => i.parents.includes(parentId)).map((i) => i.id);
  }
  async getMany(ids: readonly string[]) {
    this.batches.push([...ids]);
    return ids.flatMap((id) => (this.items.has(id) ? [this.items.get(id)!] : []));
  }
}

const item = (id: string, parents: string[]): CachedItem => ({ id, name: id, parents, md5: null, mimeType: null, paths: [] });

test('a staged overlay over an awaitable store: staged writes win, the base is never written, each base item is read once a page', async () => {
  const base = new AsyncBase(new Map([['a', item('a', ['p'])], ['b', item('b', ['p'])], ['p', item('p', [])]]));
  const staged = new StagedItems(base);
  await staged.prefetch(['a', 'p', 'x', 'a']);
  assert.deepEqual(base.batches, [['a', 'p', 'x']], 'one look-up for the page, each id once');
  assert.equal((await staged.get('a'))?.id, 'a');
  assert.equal(await staged.get('x'), undefined, 'known missing: not asked again');
  assert.deepEqual(base.reads, []);
  assert.equal(await staged.remove('a'), true);
  assert.equal(await staged.remove('a'), false, 'already removed in this page');
  staged.put(item('c', ['p']));
  staged.put({ ...item('b', ['q']) });
  assert.deepEqual((await staged.children('p')).sort(), ['c'], "a's removal, b's move and c's arrival all count");
  assert.deepEqual(await staged.children('q'), ['b']);
  await staged.get('b');
  await staged.get('p');
  assert.deepEqual(base.reads, [], 'b was staged; p was prefetched');
  assert.deepEqual(staged.ops(), [
    { op: 'remove', id: 'a' },
    { op: 'put', item: item('c', ['p']) },
    { op: 'put', item: item('b', ['q']) },
  ]);
});
