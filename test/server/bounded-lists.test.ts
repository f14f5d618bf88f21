// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scanRequestSchema } from '../../src/core/scan.ts';
import { PAGE_BYTES } from '../../src/server/dashboard/data.ts';
import { apiPlugin } from '../../src/server/dashboard/api.ts';
import { dashboardPlugin } from '../../src/server/dashboard/index.ts';
import { buildTestApp, SECRET } from '../helpers/app.ts';

const plugins = [apiPlugin, dashboardPlugin];

const timing = { delayMs: 600_000, maxMs: 600_000 };
const JSON_ACCEPT = { accept: 'application/json' };

describe('every list the API and the dashboard return is paged and bounded in bytes (issue 35, item 11)', () => {
  test('a scan with 100,000 files: the queue page shows 10 of them and the count; its files come a page at a time', async () => {
    const t = await buildTestApp({ SERVER_ALLOW_MANUAL_SCAN: true }, { plugins });
    try {
      const folder = '/data/TV/Big Show/Season 01';
      for (let i = 0; i < 50; i++) {
        const files = Array.from({ length: 2000 }, (_, j) => `${folder}/episode ${i}-${j}.mkv`);
        t.store.enqueueMany([scanRequestSchema.parse({ folder, source: 'Sonarr', files })], timing);
      }
      const res = await t.app.inject({ method: 'GET', url: `/api/${SECRET}/queue`, headers: JSON_ACCEPT });
      assert.equal(res.statusCode, 200);
      assert.ok(res.body.length < 4096, `${res.body.length} bytes`);
      const body = res.json();
      assert.equal(body.count, 1);
      assert.equal(body.next, null);
      assert.equal(body.items[0].fileCount, 100_000);
      assert.equal(body.items[0].files.length, 10);

      const id = body.items[0].id;
      const seen: string[] = [];
      let offset: number | null = 0;
      for (let pages = 0; offset !== null && pages < 20; pages++) {
        const page: { statusCode: number; json(): any } = await t.app.inject({ method: 'GET', url: `/api/${SECRET}/queue/${id}/files?limit=300&offset=${offset}`, headers: JSON_ACCEPT });
        assert.equal(page.statusCode, 200);
        const p: { fileCount: number; kept: number; files: string[]; next: number | null } = page.json();
        assert.equal(p.fileCount, 100_000);
        assert.equal(p.kept, 1000);
        seen.push(...p.files);
        offset = p.next;
      }
      assert.equal(seen.length, 1000);
      assert.equal(new Set(seen).size, 1000);
      assert.equal((await t.app.inject({ method: 'GET', url: `/api/${SECRET}/queue/999/files`, headers: JSON_ACCEPT })).statusCode, 404);
      assert.equal((await t.app.inject({ method: 'GET', url: `/api/${SECRET}/queue/${id}/files?limit=5000`, headers: JSON_ACCEPT })).statusCode, 400);

      // The dashboard shows the count, not the list.
      const page = await t.app.inject({ method: 'GET', url: `/${SECRET}`, headers: { accept: 'text/html' } });
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /100000 files/);
      assert.ok(page.body.length < 64 * 1024, `${page.body.length} bytes`);
    } finally {
      await t.close();
    }
  });

  test('2,000 scans with 2,300-character folders (under the 2,400-byte path limit): a page stops at 1 MiB and `next` walks through all of them once', async () => {
    const t = await buildTestApp({}, { plugins });
    try {
      const long = 'x'.repeat(2300);
      const requests = Array.from({ length: 2000 }, (_, i) => scanRequestSchema.parse({ folder: `/data/Movies/${String(i).padStart(4, '0')} ${long}`, source: 'Manual' }));
      t.store.enqueueMany(requests, timing);
      const ids = new Set<number>();
      let offset: number | null = 0;
      let pages = 0;
      for (; offset !== null && pages < 50; pages++) {
        const res: { body: string; json(): any } = await t.app.inject({ method: 'GET', url: `/api/${SECRET}/queue?limit=1000&offset=${offset}`, headers: JSON_ACCEPT });
        assert.ok(res.body.length <= PAGE_BYTES + 1024, `${res.body.length} bytes`);
        const body: { count: number; items: Array<{ id: number }>; next: number | null } = res.json();
        assert.equal(body.count, 2000);
        for (const item of body.items) ids.add(item.id);
        offset = body.next;
      }
      assert.equal(ids.size, 2000);
      assert.ok(pages >= 4, `${pages} pages`);
    } finally {
      await t.close();
    }
  });

  test('history pages with offset and next', async () => {
    const t = await buildTestApp({}, { plugins });
    try {
      const requests = Array.from({ length: 30 }, (_, i) => scanRequestSchema.parse({ folder: `/data/Movies/Film ${i}`, source: 'Manual' }));
      t.store.enqueueMany(requests, { delayMs: 0, maxMs: 0 }, 1000);
      t.store.activateDue(['plex'], 2000);
      for (const { item } of t.store.claimDeliveries(100, 2000, 'plex')) t.store.completeDelivery(item.id, 'plex', { status: 'done' }, 3000 + item.id);
      const first = (await t.app.inject({ method: 'GET', url: `/api/${SECRET}/history?limit=20`, headers: JSON_ACCEPT })).json();
      assert.equal(first.items.length, 20);
      assert.equal(first.next, 20);
      const second = (await t.app.inject({ method: 'GET', url: `/api/${SECRET}/history?limit=20&offset=20`, headers: JSON_ACCEPT })).json();
      assert.equal(second.items.length, 10);
      assert.equal(second.next, null);
      assert.equal(new Set([...first.items, ...second.items].map((i: { id: number }) => i.id)).size, 30);
    } finally {
      await t.close();
    }
  });
});
