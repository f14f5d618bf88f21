import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { InjectOptions } from 'fastify';
import { after, before, describe, test } from 'node:test';
import { configSchema, type Config, type FileConfig } from '../../src/config/schema.ts';
import { relayConfig } from '../../src/config/named-targets.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { QueueBackend } from '../../src/queue/backend.ts';
import { QueueIntake } from '../../src/queue/door.ts';
import { PgQueueStore } from '../../src/queue/pg/store.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { buildApp } from '../../src/server/app.ts';
import { apiPlugin } from '../../src/server/dashboard/api.ts';
import { DEFAULT_RECOGNIZERS } from '../../src/server/run.ts';
import { startPgCluster, type PgCluster } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/relay.ts';

// Input one store keeps and the other refuses (issue 43, items 4 and 8): each is answered alike on SQLite and
// PostgreSQL, a 400 that names the field, never a 500, and it never fails the valid requests beside it.

const SECRET = 'hostile-secret';
const AUTH = { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` };
let cluster: PgCluster;
before(async () => {
  cluster = await startPgCluster();
});
after(() => cluster?.destroy());

/** 3,913 random printable ASCII bytes: a folder that does not compress (the first finding). */
function incompressibleFolder(): string {
  let s = '/data/TV/';
  while (s.length < 3913) s += String.fromCharCode(33 + Math.floor(Math.random() * 94)).replace(/[/\\.]/, 'x');
  return s;
}

async function appOn(store: QueueBackend) {
  const config = relayConfig(configSchema.parse({ SERVER_PASS: SECRET, SERVER_AUTH_USER: 'user', SERVER_AUTH_PASS: 'pass' }) as FileConfig);
  const intake = new QueueIntake(store, [], () => ({ delayMs: 600_000, maxMs: 0 }));
  const app = await buildApp({ config, log: silentLogger(), intake, store, recognizers: DEFAULT_RECOGNIZERS, plugins: [apiPlugin] });
  await app.ready();
  // Basic auth on every request: the /triggers/ routes need it, and with it set the secret URL asks for it too.
  const inject = (opts: InjectOptions) => app.inject({ ...opts, headers: { ...AUTH, ...(opts.headers as Record<string, string> | undefined) } });
  return { inject, close: () => app.close() };
}

const sonarr = (title: string, folder: string) => ({
  eventType: 'Download',
  series: { title, path: folder },
  episodeFile: { relativePath: 'Season 01/e01.mkv', path: `${folder}/Season 01/e01.mkv` },
});

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`on ${kind}`, () => {
    let store: QueueBackend;
    let app: Awaited<ReturnType<typeof appOn>>;
    before(async () => {
      store = kind === 'sqlite' ? new QueueStore(join(tempDir(), 'queue.db')) : await PgQueueStore.open({ url: await cluster.createDatabase(), relayId: 'relay-a' });
      app = await appOn(store);
    });
    after(async () => {
      await app.close();
      await store.close();
    });

    test('a folder over 2,400 bytes is a 400 on both stores (PostgreSQL answered 500: index row size exceeds the B-tree maximum)', async () => {
      const res = await app.inject({ method: 'POST', url: `/${SECRET}`, payload: { eventType: 'Manual', filepath: `${incompressibleFolder()}/e.mkv` } });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().error, /bytes long \(UTF-8\); the queue keeps paths of up to 2400 bytes/);
      // 1,300 CJK characters: 3,900 bytes in UTF-8, though fewer than 2,400 characters.
      const cjk = await app.inject({ method: 'POST', url: `/${SECRET}`, payload: { eventType: 'Manual', filepath: `/data/TV/${'漢'.repeat(1300)}/e.mkv` } });
      assert.equal(cjk.statusCode, 400, cjk.body);
      const fits = await app.inject({ method: 'POST', url: `/${SECRET}`, payload: { eventType: 'Manual', filepath: `/data/TV/${'漢'.repeat(700)}/e.mkv` } });
      assert.equal(fits.statusCode, 200, fits.body);
    });

    test('a NUL byte in a Sonarr title is a 400 for its request alone: the ten valid requests sent with it are queued', async () => {
      const valid = Array.from({ length: 10 }, (_, i) => app.inject({ method: 'POST', url: `/${SECRET}`, payload: sonarr(`Show ${i}`, `/data/TV/Show ${i}`) }));
      const bad = app.inject({ method: 'POST', url: `/${SECRET}`, payload: sonarr('Bad\u0000Title', '/data/TV/Bad') });
      const [badRes, ...validRes] = await Promise.all([bad, ...valid]);
      assert.equal(badRes!.statusCode, 400, badRes!.body);
      assert.match(badRes!.json().error, /title must not contain a NUL byte/);
      assert.deepEqual(validRes.map((r) => r.statusCode), Array(10).fill(200));
      const open = await store.view.listOpen(100);
      for (let i = 0; i < 10; i++) assert.ok(open.some((e) => e.folder === `/data/TV/Show ${i}/Season 01` && e.title === `Show ${i}`), `Show ${i} queued`);
      assert.ok(!open.some((e) => e.folder.startsWith('/data/TV/Bad')));
    });

    test('a lone surrogate in a path or a title is refused (it was answered as \\ud800 and stored as U+FFFD)', async () => {
      const path = await app.inject({ method: 'POST', url: `/${SECRET}`, payload: JSON.stringify({ eventType: 'Manual', filepath: '/data/TV/Lone\ud800/e.mkv' }), headers: { 'content-type': 'application/json' } });
      assert.equal(path.statusCode, 400, path.body);
      assert.match(path.json().error, /filepath must not contain a lone UTF-16 surrogate/);
      const title = await app.inject({ method: 'POST', url: `/${SECRET}`, payload: sonarr('Lone\udc00', '/data/TV/Lone') });
      assert.equal(title.statusCode, 400, title.body);
      assert.match(title.json().error, /title must not contain a lone UTF-16 surrogate/);
      // A pair is fine, and answered as stored.
      const pair = await app.inject({ method: 'POST', url: `/${SECRET}`, payload: { eventType: 'Manual', filepath: '/data/TV/Emoji \ud83c\udfac/e.mkv' } });
      assert.equal(pair.statusCode, 200, pair.body);
      const open = await store.view.listOpen(100);
      assert.ok(open.some((e) => e.folder === '/data/TV/Emoji \u{1F3AC}'));
    });

    test('the history searched for text=%00 is a 400, not a 500', async () => {
      const res = await app.inject({ method: 'GET', url: `/api/${SECRET}/history?text=%00` });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().error, /NUL/);
      assert.equal((await app.inject({ method: 'GET', url: `/api/${SECRET}/history?text=Show` })).statusCode, 200);
    });

    test('/triggers/manual with broken percent-encoding (dir=%E0%A4%A) is a 400, not a scan of the literal text', async () => {
      const res = await app.inject({ method: 'POST', url: '/triggers/manual?dir=%E0%A4%A', });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().error, /query parameter "dir" is not valid percent-encoding/);
      assert.ok(!(await store.view.listOpen(100)).some((e) => e.folder.includes('%')), 'nothing queued');
      const ok = await app.inject({ method: 'POST', url: `/triggers/manual?dir=${encodeURIComponent('/data/TV/Dark')}`, });
      assert.equal(ok.statusCode, 200, ok.body);
    });
  });
}
