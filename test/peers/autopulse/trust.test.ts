import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { after, before, describe, test } from 'node:test';
import { configSchema, type FileConfig } from '../../../src/config/schema.ts';
import { relayConfig } from '../../../src/config/named-targets.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import type { QueueBackend } from '../../../src/queue/backend.ts';
import { QueueIntake } from '../../../src/queue/door.ts';
import { buildApp } from '../../../src/server/app.ts';
import { DEFAULT_RECOGNIZERS } from '../../../src/server/run.ts';
import { bothStores } from '../../helpers/both-stores.ts';
import { waitFor } from '../../helpers/relay.ts';

/*
 * Issue 47 on autopulse's routes, on both stores:
 * - item 5: a GET that queues a scan (/triggers/<name>?path=) is refused 403 when a browser says it comes from
 *   another site (an <img> on a page riding a cached Basic-auth login); curl, Sonarr and Bazarr send no
 *   Sec-Fetch-Site and keep working; HEAD queues nothing (fastify ran HEAD through the GET handler).
 * - item 7: /stats needs no credentials, so each call read the counts (6 ms of SQL with 20,000 scans): now at
 *   most one read a second, whatever the number of calls (bench/stats.ts has the figure).
 * - item 10: /list?search=%00 and /status/%00 answered 500 with a stack trace on PostgreSQL.
 */

const AUTH = { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` };
const { stores } = bothStores();

async function appOn(store: QueueBackend) {
  const config = relayConfig(configSchema.parse({
    SERVER_PASS: 'trust-secret',
    SERVER_AUTH_USER: 'user',
    SERVER_AUTH_PASS: 'pass',
    SERVER_FILE_CHECKS_ENABLED: false,
    SERVER_AUTOPULSE_TRIGGERS: { manual: { TYPE: 'manual' }, bazarr: { TYPE: 'bazarr' }, a_train: { TYPE: 'autoscan' } },
  }) as FileConfig);
  const intake = new QueueIntake(store, [], () => ({ delayMs: 600_000, maxMs: 0 }));
  const app = await buildApp({ config, log: silentLogger(), intake, store, recognizers: DEFAULT_RECOGNIZERS });
  await app.ready();
  const inject = (opts: InjectOptions) => app.inject({ ...opts, headers: { ...AUTH, ...(opts.headers as Record<string, string> | undefined) } });
  return { app, inject, close: () => app.close() };
}

for (const [kind, open] of stores) {
  describe(`on ${kind}`, () => {
    let store: QueueBackend;
    let t: Awaited<ReturnType<typeof appOn>>;
    let reads = 0;
    before(async () => {
      store = await open();
      // Every read of the counts /stats makes, counted.
      const counts = store.view.eventCounts.bind(store.view);
      store.view.eventCounts = () => {
        reads++;
        return counts();
      };
      t = await appOn(store);
    });
    after(() => t.close());
    const folders = async () => (await store.view.listOpen(1000)).map((e) => e.folder).sort();

    test('item 5: a cross-site GET of /triggers/<name> is refused 403 and queues nothing; without the header (curl, Sonarr, Bazarr) it queues', async () => {
      for (const trigger of ['manual?path=/data/TV/A/e.mkv', 'bazarr?path=/data/TV/B/e.srt', 'a_train?dir=/data/TV/C']) {
        for (const site of ['cross-site', 'same-site']) {
          const res = await t.inject({ method: 'GET', url: `/triggers/${trigger}`, headers: { 'sec-fetch-site': site, 'sec-fetch-dest': 'image' } });
          assert.equal(res.statusCode, 403, `${trigger} ${site}: ${res.body}`);
          assert.match(res.body, /cross-site request refused/);
        }
        // Sonarr, Bazarr, curl: no Sec-Fetch-Site; the user typing the URL: none.
        for (const headers of [{}, { 'sec-fetch-site': 'none' }]) {
          const res = await t.inject({ method: 'GET', url: `/triggers/${trigger}`, headers });
          assert.equal(res.statusCode, 200, `${trigger} ${JSON.stringify(headers)}: ${res.body}`);
        }
      }
      assert.deepEqual(await folders(), ['/data/TV/A', '/data/TV/B', '/data/TV/C']);
    });

    test('item 5: HEAD /triggers/<name>?path= queues nothing (405, Allow: GET, POST)', async () => {
      const before = await folders();
      const res = await t.inject({ method: 'HEAD', url: '/triggers/manual?path=/data/TV/Head/e.mkv' });
      assert.equal(res.statusCode, 405, res.body);
      assert.equal(res.headers.allow, 'GET, POST');
      assert.deepEqual(await folders(), before);
    });

    test('item 7: 200 calls to /stats together read the counts once; calls one after another read them at most once a second, and see a new scan within one', async () => {
      reads = 0;
      const answers = await Promise.all(Array.from({ length: 200 }, () => t.app.inject({ method: 'GET', url: '/stats' })));
      assert.ok(answers.every((r) => r.statusCode === 200));
      assert.equal(reads, 1, 'one read for 200 calls');
      const total = answers[0]!.json().stats.total as number;
      reads = 0;
      const start = Date.now();
      for (let i = 0; i < 300; i++) assert.equal((await t.app.inject({ method: 'GET', url: '/stats' })).statusCode, 200);
      const seconds = Math.ceil((Date.now() - start) / 1000);
      assert.ok(reads <= seconds + 1, `${reads} reads for 300 calls in ${seconds} s`);
      // A scan queued now is counted within a second or so (a bounded wait, not a sleep).
      assert.equal((await t.inject({ method: 'GET', url: '/triggers/manual?path=/data/TV/New/e.mkv' })).statusCode, 200);
      await waitFor(async () => (await t.app.inject({ method: 'GET', url: '/stats' })).json().stats.total === total + 1, 5000, 'the new scan counted');
    });

    test('item 10: /list?search=%00 is a 400 and /status/%00 a 404, not a 500', async () => {
      const list = await t.inject({ method: 'GET', url: '/list?search=%00' });
      assert.equal(list.statusCode, 400, list.body);
      assert.match(list.body, /search: must not contain a NUL byte/);
      const status = await t.inject({ method: 'GET', url: '/status/%00' });
      assert.equal(status.statusCode, 404, status.body);
      assert.equal(status.body, 'Event not found');
      assert.equal((await t.inject({ method: 'GET', url: '/list?search=TV' })).statusCode, 200);
      assert.equal((await t.inject({ method: 'GET', url: '/status/00000000-0000-0000-0000-000000000000' })).statusCode, 404);
    });
  });
}
