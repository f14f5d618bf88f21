import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, constants, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { configSchema, scanDelayMax, type FileConfig } from '../../../src/config/schema.ts';
import { relayConfig } from '../../../src/config/named-targets.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import type { QueueBackend } from '../../../src/queue/backend.ts';
import { QueueIntake } from '../../../src/queue/door.ts';
import { HOLD_PREFIX } from '../../../src/peers/autopulse/holds.ts';
import { buildApp } from '../../../src/server/app.ts';
import { DEFAULT_RECOGNIZERS } from '../../../src/server/run.ts';
import { LibraryRoots } from '../../../src/targets/library-roots.ts';
import { bothStores } from '../../helpers/both-stores.ts';
import { tempDir, waitFor, within } from '../../helpers/relay.ts';

/*
 * Issue 47 item 1: autopulse's `GET /triggers/<manual>?path=&hash=` (triggers.rs:127-248; the hash check runner.rs:53-100,
 * utils/src/checksum.rs) as the attack run used it. The relay reads a named file only when it is a regular file inside
 * a library its trigger's targets know; anything else answers as a missing file, reads nothing, and never blocks the
 * request, the thread pool or the hold sweep. On both queue stores (the holds live in the queue's meta table).
 */

const AUTH = { authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` };
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const mkfifo = (path: string) => execFileSync('mkfifo', [path]);
/** Whether a process holds the FIFO open for reading: a writer's non-blocking open fails with ENXIO when none does. */
function fifoOpenedForReading(path: string): boolean {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENXIO') return false;
    throw err;
  }
}

interface Relay {
  app: FastifyInstance;
  close(): Promise<void>;
}

type Stub = { name: string; roots: string[] | 'hang'; toTargetPath?: (p: string) => string };

async function relayOn(store: QueueBackend, extra: Record<string, unknown> = {}, targets: Stub[] = []): Promise<Relay> {
  const config = relayConfig(configSchema.parse({
    SERVER_PASS: 'test-secret',
    SERVER_AUTH_USER: 'admin',
    SERVER_AUTH_PASS: 'password',
    SERVER_FILE_CHECKS_ENABLED: true,
    SERVER_FILE_CHECK_DELAY: 3600,
    SERVER_AUTOPULSE_TRIGGERS: { manual: { TYPE: 'manual' } },
    ...extra,
  }) as FileConfig);
  const timing = { delayMs: config.SERVER_SCAN_DELAY * 1000, maxMs: scanDelayMax(config) * 1000 };
  const intake = new QueueIntake(store, [], () => timing);
  // Targets that know their libraries, as Plex's sections or Jellyfin's virtual folders make them known.
  const libraries = targets.length
    ? new LibraryRoots(
        targets.map((t) => ({
          name: t.name,
          libraryRoots: () => (t.roots === 'hang' ? new Promise<string[]>(() => undefined) : Promise.resolve(t.roots)),
          ...(t.toTargetPath ? { toTargetPath: t.toTargetPath } : {}),
        })),
        silentLogger(),
      )
    : undefined;
  const app = await buildApp({ config, log: silentLogger(), intake, store, recognizers: DEFAULT_RECOGNIZERS, ...(libraries ? { libraries } : {}) });
  await app.ready();
  return { app, close: () => app.close() };
}

const ask = (r: Relay, path: string, hash: string, trigger = 'manual') =>
  within(r.app.inject({ method: 'GET', url: `/triggers/${trigger}?path=${encodeURIComponent(path)}&hash=${hash}`, headers: AUTH }), 30_000, `hash of ${path}`);
/** An answer without what differs by request (its id and times). */
const shape = (res: { statusCode: number; json(): Record<string, unknown> }) => {
  const { id: _id, event_timestamp: _e, created_at: _c, updated_at: _u, can_process: _p, file_path: _f, ...rest } = res.json();
  return { status: res.statusCode, ...rest };
};

const { stores } = bothStores();

for (const [name, open] of stores) {
  describe(`?hash= reads only what it may, and never blocks (${name})`, () => {
    test('outside every known library: /etc/passwd and /etc/nope answer alike, as a missing file; a correct hash outside queues nothing; nothing there is opened', async () => {
      const store = await open();
      const lib = tempDir('hash-lib-');
      const outside = tempDir('hash-outside-');
      const hostname = join(outside, 'hostname');
      writeFileSync(hostname, 'relay-host\n');
      const pipe = join(outside, 'pipe');
      mkfifo(pipe);
      const r = await relayOn(store, { SERVER_PATH_MAPPINGS: { [lib]: [lib] } });
      try {
        const passwd = await ask(r, '/etc/passwd', '00');
        const nope = await ask(r, '/etc/nope', '00');
        assert.equal(passwd.statusCode, 200, passwd.body);
        assert.deepEqual(shape(passwd), shape(nope), 'a file that is there and one that is not look the same');
        assert.equal(passwd.json().found_status, 'not_found');
        // The correct hash of a real file outside the libraries (the attack's /etc/hostname): held, never scanned.
        const exact = await ask(r, hostname, sha('relay-host\n'));
        assert.equal(exact.json().found_status, 'not_found');
        assert.deepEqual(await store.view.listOpen(), [], 'nothing queued, so no target ran');
        // A FIFO outside: answered, and never opened (a reader blocked in open would hold it).
        const fifo = await ask(r, pipe, '00');
        assert.equal(fifo.json().found_status, 'not_found');
        assert.equal(fifoOpenedForReading(pipe), false);
        // `..` out of a library is outside too.
        const up = await ask(r, `${lib}/../${outside.split('/').pop()}/hostname`, sha('relay-host\n'));
        assert.ok(up.statusCode === 400 || up.json().found_status === 'not_found', up.body);
        assert.deepEqual(await store.view.listOpen(), []);
      } finally {
        await r.close();
      }
    });

    test('inside a library, a FIFO, /dev/zero, a folder and a symlink to a FIFO are answered at once as missing, and never opened for reading', async () => {
      const store = await open();
      const lib = tempDir('hash-lib-');
      const pipe = join(lib, 'pipe.mkv');
      mkfifo(pipe);
      symlinkSync(pipe, join(lib, 'link.mkv'));
      mkdirSync(join(lib, 'Show'));
      // /dev as a "library", so the rule on the kind of file is what refuses /dev/zero here.
      const r = await relayOn(store, { SERVER_PATH_MAPPINGS: { [lib]: [lib], '/dev': ['/dev'] } });
      try {
        for (const path of [pipe, join(lib, 'link.mkv'), '/dev/zero', join(lib, 'Show')]) {
          const res = await ask(r, path, '00');
          assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
          assert.equal(res.json().found_status, 'not_found', path);
        }
        assert.equal(fifoOpenedForReading(pipe), false, 'the FIFO was never opened');
        assert.deepEqual(await store.view.listOpen(), []);
      } finally {
        await r.close();
      }
    });

    test('four FIFOs leave the thread pool and the hold sweep free: a real file still matches at once, and a held one is released', async () => {
      const store = await open();
      const lib = tempDir('hash-lib-');
      const pipes = [1, 2, 3, 4].map((i) => join(lib, `p${i}.mkv`));
      for (const p of pipes) mkfifo(p);
      mkdirSync(join(lib, 'Show'));
      mkdirSync(join(lib, 'Later'));
      const file = join(lib, 'Show', 'ep.mkv');
      writeFileSync(file, 'episode');
      const later = join(lib, 'Later', 'ep.mkv');
      writeFileSync(later, 'half');
      const r = await relayOn(store, { SERVER_PATH_MAPPINGS: { [lib]: [lib] }, SERVER_FILE_CHECK_DELAY: 0.05 });
      try {
        const held = await Promise.all(pipes.map((p) => ask(r, p, sha('x'))));
        assert.deepEqual(held.map((h) => h.json().found_status), ['not_found', 'not_found', 'not_found', 'not_found']);
        // The pool still serves the relay's other file work, and a hash that matches is queued at once.
        assert.equal(await within(readFile(file, 'utf8'), 30_000, 'a plain file read'), 'episode');
        const good = await ask(r, file, sha('episode'));
        assert.equal(good.json().found_status, 'found', good.body);
        const mismatch = await ask(r, later, sha('whole'));
        assert.equal(mismatch.json().found_status, 'hash_mismatch');
        writeFileSync(later, 'whole');
        // The sweep checks the FIFOs' holds each pass (as missing) and still gets to this one.
        await waitFor(async () => (await store.view.listOpen()).some((s) => s.folder === join(lib, 'Later')), 30_000, 'the held request released by the sweep');
        const stillHeld = (await store.meta.list(HOLD_PREFIX)).map(([, v]) => JSON.parse(v) as { path: string; found: string }).filter((h) => h.found === 'not_found');
        assert.deepEqual(stillHeld.map((h) => h.path).sort(), pipes, 'the FIFOs stay held, as missing files');
        for (const p of pipes) assert.equal(fifoOpenedForReading(p), false, p);
      } finally {
        await r.close();
      }
    });

    test('a NUL in the path or in the hash is 400 with a message, never 500', async () => {
      const store = await open();
      const r = await relayOn(store, { SERVER_PATH_MAPPINGS: { '/media': ['/media'] } });
      try {
        for (const url of ['/triggers/manual?path=/media/a%00b.mkv&hash=00', '/triggers/manual?path=/media/a.mkv&hash=0%000']) {
          const res = await within(r.app.inject({ method: 'GET', url, headers: AUTH }), 30_000, url);
          assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
          assert.match(res.body, /^(path|hash) /, 'a message naming the field');
          assert.doesNotMatch(res.body, /at .*\.ts:\d+/, 'no stack trace');
        }
        assert.deepEqual(await store.meta.list(HOLD_PREFIX), []);
      } finally {
        await r.close();
      }
    });

    test("only the libraries of the trigger's own targets count, as each target names them (its REWRITE)", async () => {
      const store = await open();
      const plexLib = tempDir('hash-plex-');
      const jellyLib = tempDir('hash-jelly-');
      for (const d of [plexLib, jellyLib]) {
        mkdirSync(join(d, 'Film'));
        writeFileSync(join(d, 'Film', 'f.mkv'), 'film');
      }
      const r = await relayOn(
        store,
        { SERVER_AUTOPULSE_TRIGGERS: { manual: { TYPE: 'manual' }, to_jelly: { TYPE: 'manual', TARGETS: ['jelly'] } } },
        [
          { name: 'plex', roots: [plexLib] },
          // Jellyfin names the relay's folder /jf/media.
          { name: 'jelly', roots: ['/jf/media'], toTargetPath: (p) => (p.startsWith(`${jellyLib}/`) ? `/jf/media/${p.slice(jellyLib.length + 1)}` : p) },
        ],
      );
      try {
        const notMine = await ask(r, join(plexLib, 'Film', 'f.mkv'), sha('film'), 'to_jelly');
        assert.equal(notMine.json().found_status, 'not_found', "Plex's library is not this trigger's");
        const mine = await ask(r, join(jellyLib, 'Film', 'f.mkv'), sha('film'), 'to_jelly');
        assert.equal(mine.json().found_status, 'found', mine.body);
        const everyTarget = await ask(r, join(plexLib, 'Film', 'f.mkv'), sha('film'));
        assert.equal(everyTarget.json().found_status, 'found', 'the manual trigger goes to every target, Plex included');
      } finally {
        await r.close();
      }
    });

    test('a server that never lists its libraries holds the request a couple of seconds at most, and nothing is read', async () => {
      const store = await open();
      const lib = tempDir('hash-hang-');
      writeFileSync(join(lib, 'f.mkv'), 'film');
      const r = await relayOn(store, { SERVER_FILE_CHECK_DELAY: 0.05 }, [{ name: 'plex', roots: 'hang' }]);
      let closed = false;
      try {
        const res = await ask(r, join(lib, 'f.mkv'), sha('film'));
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().found_status, 'not_found', 'its libraries are not known, so the file is not read');
        assert.deepEqual(await store.view.listOpen(), []);
        // The sweep now waits on that server for the hold; stopping the relay does not.
        await within(r.close(), 30_000, 'closing while the sweep waits for the libraries');
        closed = true;
      } finally {
        if (!closed) await r.close();
      }
    });
  });
}

describe('a hold in the queue names a path outside the libraries (written by an older relay): the sweep never reads it', () => {
  test('its FIFO is never opened, and the sweep goes on to release the next hold', async () => {
    const { QueueStore } = await import('../../../src/queue/store.ts');
    const store = new QueueStore(':memory:');
    const lib = tempDir('hash-lib-');
    const outside = tempDir('hash-outside-');
    const pipe = join(outside, 'pipe');
    mkfifo(pipe);
    mkdirSync(join(lib, 'Show'));
    const file = join(lib, 'Show', 'ep.mkv');
    writeFileSync(file, 'ep');
    const now = Date.now();
    const hold = (id: string, path: string, hash: string) =>
      store.meta.set(
        HOLD_PREFIX + id,
        JSON.stringify({ id, trigger: 'manual', path, hash, found: 'not_found', createdAt: now, updatedAt: now, foundAt: null, intent: { kind: 'scan', source: 'Manual', event: 'Manual', updateType: 'Modified', paths: [{ path, kind: 'guess' }] } }),
      );
    hold('00000000-0000-4000-8000-000000000001', pipe, sha('x'));
    hold('00000000-0000-4000-8000-000000000002', file, sha('ep'));
    const r = await relayOn(store, { SERVER_PATH_MAPPINGS: { [lib]: [lib] }, SERVER_FILE_CHECK_DELAY: 0.05 });
    try {
      await waitFor(async () => (await store.view.listOpen()).length === 1, 30_000, 'the second hold released');
      assert.equal(fifoOpenedForReading(pipe), false);
    } finally {
      await r.close();
      store.close();
    }
  });
});
