// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Fastify from 'fastify';
import { silentLogger } from '../../src/core/logger.ts';
import { BurstSettler, fullGc } from '../../src/server/settle.ts';

/** A relay-like app whose answered requests the settler counts; `check()` is one of its looks (every 5 s when running). */
async function appWithSettler() {
  const app = Fastify();
  app.get('/x', async () => ({ ok: true }));
  let collections = 0;
  const settler = new BurstSettler(silentLogger(), { burstRequests: 50, quietRequests: 2, gc: () => void collections++ }).attach(app);
  await app.ready();
  const requests = async (n: number) => {
    for (let i = 0; i < n; i++) await app.inject({ method: 'GET', url: '/x' });
  };
  return { app, settler, requests, collections: () => collections };
}

describe('memory is given back when a burst of requests is over (issue 35, item 15)', () => {
  test('one full collection once a burst ends, none while it lasts, none for steady light traffic', async () => {
    const { app, settler, requests, collections } = await appWithSettler();
    try {
      // Light traffic (a webhook now and then): never a collection.
      for (let look = 0; look < 3; look++) {
        await requests(5);
        assert.equal(settler.check(), false);
      }
      // A burst over two looks, then quiet: one collection, at the first quiet look only.
      await requests(60);
      assert.equal(settler.check(), false);
      await requests(80);
      assert.equal(settler.check(), false);
      assert.equal(collections(), 0, 'not while the burst lasts');
      await requests(1);
      assert.equal(settler.check(), true);
      assert.equal(collections(), 1);
      assert.equal(settler.check(), false, 'once per burst');
      assert.equal(collections(), 1);
    } finally {
      settler.stop();
      await app.close();
    }
  });

  test('the full collection runs without a start flag and frees what is unreachable', () => {
    const gc = fullGc();
    let held: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `x${i}` }));
    const before = process.memoryUsage().heapUsed;
    assert.equal((held as unknown[]).length, 200_000);
    held = undefined;
    gc();
    assert.equal(held, undefined);
    assert.ok(process.memoryUsage().heapUsed < before - 5_000_000, `${before} -> ${process.memoryUsage().heapUsed}`);
    assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined', 'no gc() is left on the global object');
  });
});
