import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import pino from 'pino';
import { relativeTo } from '../../src/paths/mapping.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { buildTestApp, SECRET, type TestApp } from '../helpers/app.ts';
import { ROOT, spawnRelay, type RelayProcess } from '../helpers/relay.ts';

async function post(url: string, body: string, type: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': type, accept: 'application/json' }, body });
  return { status: res.status, text: await res.text() };
}

/*
 * Property-based fuzzing of the intake: whatever a client sends, the answer is never a 5xx, the
 * server keeps answering, and scans queued before are still queued (in their folder or one above it).
 */

const FIXTURE_DIR = join(ROOT, 'test', 'fixtures', 'arr');
const FIXTURES: Array<Record<string, unknown>> = readdirSync(FIXTURE_DIR).flatMap((m) =>
  readdirSync(join(FIXTURE_DIR, m)).map((f) => JSON.parse(readFileSync(join(FIXTURE_DIR, m, f), 'utf8'))),
);

/** Every key path inside a value, for mutating one field of a real payload. */
function keyPaths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return value.flatMap((v, i) => [[...prefix, i], ...keyPaths(v, [...prefix, i])]);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [[...prefix, k], ...keyPaths(v, [...prefix, k])]);
  return [];
}

function withField(value: unknown, path: ReadonlyArray<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
  copy[path[0]!] = withField(copy[path[0]!], path.slice(1), replacement);
  return copy;
}

const deepNesting = fc
  .tuple(fc.integer({ min: 1, max: 100_000 }), fc.constantFrom('[', '{"a":', '{"series":', '{"eventType":'))
  .map(([depth, open]) => open.repeat(depth) + '1' + (open === '[' ? ']' : '}').repeat(depth));

const oddValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constant(null),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.integer({ min: 1_000, max: 300_000 }).map((n) => 'ä/'.repeat(n)),
  fc.constantFrom('', '/', '..', '/tv/../../etc/passwd', 'C:\\', '\u0000', '%00', '__proto__', 'constructor'),
);

/** A real payload with one field replaced: known shapes with wrong fields. */
const mutatedPayload = fc
  .constantFrom(...FIXTURES)
  .chain((body) => fc.tuple(fc.constant(body), fc.constantFrom(...keyPaths(body)), oddValue))
  .map(([body, path, replacement]) => JSON.stringify(withField(body, path, replacement)));

const manualPayload = fc.record({ eventType: fc.constantFrom('Manual', 'Test', 'Download', 'Rename'), filepath: oddValue }, { requiredKeys: [] }).map((b) => JSON.stringify(b));

const formBody = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 20 }), fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom('Manual', 'Test', '/tv/x.mkv'))).map((d) => new URLSearchParams(d).toString()),
  fc.record({ eventType: fc.constantFrom('Manual', 'Test'), filepath: fc.string({ unit: 'binary', maxLength: 300 }) }).map((d) => new URLSearchParams(d).toString()),
  fc.string({ unit: 'binary', maxLength: 500 }),
);

const contentType = fc.oneof(
  fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/x-www-form-urlencoded', 'text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/octet-stream', 'application/json;;', 'APPLICATION/JSON'),
  fc.string({ maxLength: 40 }),
);

/** Any request body with any content type. */
const anyRequest = fc.oneof(
  fc.record({ body: fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify(v) ?? 'null'), type: fc.constant('application/json') }),
  fc.record({ body: mutatedPayload, type: fc.constant('application/json') }),
  fc.record({ body: manualPayload, type: fc.constant('application/json') }),
  fc.record({ body: formBody, type: fc.constant('application/x-www-form-urlencoded') }),
  fc.record({ body: fc.string({ unit: 'binary', maxLength: 1000 }), type: contentType }),
);

/** A logger that really serialises every line (a silent one would hide a crash in serialising). */
const busyLogger = () =>
  pino({ level: 'trace' }, new Writable({ write: (_chunk, _enc, done) => done() })) as unknown as import('../../src/core/logger.ts').Logger;

const PRE_QUEUED = [
  '/data/Keep/A (2001)/A (2001).mkv',
  '/data/Keep/B (2002)/B (2002).mkv',
  '/data/Keep/Show/Season 01/Show - S01E01.mkv',
  '/data/Keep/Show/Season 02/Show - S02E01.mkv',
  '/data/Keep/Music/Artist/Album/01 - Song.flac',
];

/** Every pre-queued file is still in an open scan of its folder or of a folder above it. */
function assertStillQueued(store: QueueStore): void {
  const open = store.view.listOpen(1_000_000);
  for (const file of PRE_QUEUED) {
    const holder = open.find((e) => relativeTo(file, e.folder) !== undefined && e.files.includes(file));
    assert.ok(holder, `pre-queued ${file} is no longer queued`);
  }
}

describe('fuzzing POST /<secret> in process (buildApp + inject)', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'], '/data/Movies/': ['/movies/'] }, SERVER_IGNORE_LIST: ['/.grab/'] }, { log: busyLogger() });
    for (const filepath of PRE_QUEUED) {
      const res = await t.app.inject({ method: 'POST', url: `/${SECRET}`, payload: { eventType: 'Manual', filepath } });
      assert.equal(res.statusCode, 200, res.body);
    }
    assertStillQueued(t.store);
  });
  after(() => t.close());

  const check = async (payload: string, type: string, url = `/${SECRET}`) => {
    const res = await t.app.inject({ method: 'POST', url, payload, headers: { 'content-type': type, accept: 'application/json' } });
    assert.ok(res.statusCode < 500, `${res.statusCode} for ${type} ${payload.slice(0, 300)}: ${res.body.slice(0, 300)}`);
    if (res.statusCode >= 400) assert.equal(typeof res.json().error, 'string', res.body.slice(0, 300));
  };

  test('random JSON values', async () => {
    await fc.assert(fc.asyncProperty(fc.jsonValue({ maxDepth: 6 }), (v) => check(JSON.stringify(v) ?? 'null', 'application/json')), { numRuns: 300 });
  });

  test('real webhook payloads with one field of a wrong type, huge, empty or hostile', async () => {
    await fc.assert(fc.asyncProperty(mutatedPayload, (body) => check(body, 'application/json')), { numRuns: 500 });
  });

  test('manual-shaped requests with odd paths, as JSON and as forms', async () => {
    await fc.assert(fc.asyncProperty(manualPayload, (body) => check(body, 'application/json')), { numRuns: 200 });
    await fc.assert(fc.asyncProperty(formBody, (body) => check(body, 'application/x-www-form-urlencoded')), { numRuns: 300 });
  });

  test('deep nesting, huge strings and any content type', async () => {
    await fc.assert(fc.asyncProperty(deepNesting, (body) => check(body, 'application/json')), { numRuns: 30 });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 500_000, max: 1_100_000 }), fc.constantFrom('eventType', 'filepath', 'series'), (n, key) =>
        check(JSON.stringify({ eventType: 'Download', [key]: 'x'.repeat(n), episodeFile: { path: `/tv/${'y'.repeat(n / 4)}` } }), 'application/json'),
      ),
      { numRuns: 12 },
    );
    await fc.assert(fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 2000 }), contentType, (body, type) => check(body, type)), { numRuns: 300 });
  });

  test('the cmd API with random commands and bodies', async () => {
    await fc.assert(fc.asyncProperty(anyRequest, ({ body, type }) => check(body, type, `/api/${SECRET}`)), { numRuns: 200 });
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 50 }), async (cmd) => {
        const res = await t.app.inject({ method: 'GET', url: `/api/${SECRET}?cmd=${encodeURIComponent(cmd)}` });
        assert.ok(res.statusCode < 500, `${res.statusCode} for cmd ${cmd}`);
      }),
      { numRuns: 100 },
    );
  });

  test('afterwards: the app still answers and every scan queued before is still queued', async () => {
    const health = await t.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(health.statusCode, 200);
    assertStillQueued(t.store);
  });
});

describe('fuzzing the real server process', () => {
  let relay: RelayProcess;
  before(async () => {
    // No target and a long delay: queued scans stay queued for the whole test.
    relay = await spawnRelay({ config: { PLEX_ENABLED: false, SERVER_SCAN_DELAY: 3600, SERVER_PATH_MAPPINGS: { '/data/TV/': ['/tv/'] } } });
  });
  after(async () => {
    await relay?.kill();
  });

  test('random requests over HTTP: never a 5xx, the server stays up, queued scans survive a restart', async () => {
    for (const filepath of PRE_QUEUED) {
      const res = await post(relay.url, JSON.stringify({ eventType: 'Manual', filepath }), 'application/json');
      assert.equal(res.status, 200, res.text);
    }
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyRequest, deepNesting.map((body) => ({ body, type: 'application/json' }))), async ({ body, type }) => {
        const res = await post(relay.url, body, type);
        assert.ok(res.status < 500, `${res.status} for ${type} ${body.slice(0, 300)}: ${res.text.slice(0, 300)}`);
      }),
      { numRuns: 120 },
    );
    const big = await post(relay.url, JSON.stringify({ eventType: 'Manual', filepath: 'x'.repeat(2 * 1024 * 1024) }), 'application/json');
    assert.equal(big.status, 413);
    const health = await fetch(`${relay.base}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(relay.proc.exitCode, null, 'the server is still running');
    assert.equal(await relay.kill(), 0, 'and stops cleanly');
    const store = new QueueStore(relay.queuefile);
    try {
      assertStillQueued(store);
    } finally {
      store.close();
    }
  });
});
