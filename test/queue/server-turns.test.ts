import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ScanItem, Target } from '../../src/core/scan.ts';
import { normaliseAddress, serverTurnKey } from '../../src/queue/server-turns.ts';
import { makePlexTarget, ownPlex, runQueue, testConfig } from '../helpers/plex-target.ts';
import { waitFor } from '../helpers/relay.ts';

/*
 * Plex one scan at a time per server, not per name (issue 39, point 2), on the SQLite queue: two TARGETS names for
 * one Plex (the PLEX_* keys and an entry with another rewrite or address) share one turn, by the server's
 * machineIdentifier, and by its address until the id is known; a 4K Plex beside it (another id) keeps its own turn.
 * Peers: autoscan sends one scan to every target at once (processor/processor.go:74-85, an errgroup), so two
 * entries for one Plex scan side by side there; autopulse awaits its targets one after another in a batch
 * (crates/service/src/runner.rs:254-278), never two at once, but does not wait for Plex's scan to end.
 */

/**
 * One media server: it scans one folder at a time, and a scan runs until the test ends it (finish), as Plex's
 * does until its library scan is over. A scan sent while another runs is an overlap.
 */
class Server {
  readonly received: string[] = [];
  readonly overlaps: Array<[string, string]> = [];
  current: string | undefined;
  /** false: the server cannot say who it is yet (identity() throws, as a Plex that does not answer /identity). */
  tellsId = true;
  private readonly ends = new Map<string, () => void>();

  constructor(readonly id: string) {}

  /** A target for this server under `name`, reached at `address`. */
  target(name: string, address: string): Target {
    return {
      name,
      kind: 'plex',
      address,
      serial: true,
      deliver: async (item: ScanItem) => {
        this.received.push(`${name} ${item.folder}`);
        if (this.current !== undefined) this.overlaps.push([this.current, `${name} ${item.folder}`]);
        this.current = `${name} ${item.folder}`;
        return {
          outcome: 'done',
          after: (signal) =>
            new Promise<string>((resolve, reject) => {
              this.ends.set(`${name} ${item.folder}`, () => resolve('completed'));
              signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
            }),
        };
      },
      available: async () => ({ ok: true }),
      identity: async () => {
        if (!this.tellsId) throw new Error('connect ECONNREFUSED');
        return { id: this.id };
      },
    };
  }

  /** Ends the running scan (the one the test names), once the relay waits for it. */
  async finish(what: string): Promise<void> {
    await waitFor(() => this.ends.has(what), 15_000, `the scan ${what} to run`);
    assert.equal(this.current, what);
    this.current = undefined;
    this.ends.get(what)!();
    this.ends.delete(what);
  }

  /** Ends every scan in the order they come, until `n` were received. */
  async finishAll(n: number): Promise<void> {
    while (this.received.length < n || this.current !== undefined) {
      await waitFor(() => this.current !== undefined, 15_000, `scan ${this.received.length + 1} of ${n}`);
      await this.finish(this.current!);
    }
  }
}

describe('the turn key', () => {
  test('a server is its kind and its id; before the id, its address in one spelling; without either, the name', () => {
    assert.equal(serverTurnKey({ name: 'movies', kind: 'plex' }, 'abc'), 'plex@abc');
    assert.equal(serverTurnKey({ name: 'plex', kind: 'plex' }, 'abc'), 'plex@abc');
    assert.equal(serverTurnKey({ name: 'movies', kind: 'plex', address: 'HTTP://Plex.LAN:32400/' }), serverTurnKey({ name: 'plex', kind: 'plex', address: 'http://plex.lan:32400' }));
    assert.notEqual(serverTurnKey({ name: 'plex', kind: 'plex', address: 'http://plex.lan:32400' }), serverTurnKey({ name: '4k', kind: 'plex', address: 'http://plex.lan:32401' }));
    assert.equal(normaliseAddress('https://plex.lan:443/'), 'https://plex.lan');
    assert.equal(serverTurnKey({ name: 'other' }), 'other');
  });
});

describe('one Plex under two names shares one turn on the SQLite queue', () => {
  test('by its id: two names at two addresses scan one at a time, each gets every scan once; a 4K Plex is not held up', async () => {
    const main = new Server('machine-main');
    const fourK = new Server('machine-4k');
    const q = runQueue([
      main.target('plex', 'http://plex.lan:32400'),
      main.target('movies', 'http://192.168.1.5:32400'),
      fourK.target('4k', 'http://plex.lan:32401'),
    ]);
    try {
      q.enqueue('/data/A');
      q.enqueue('/data/B');
      // The 4K Plex scans while the main one still runs its first scan: another server, another turn.
      await waitFor(() => main.current !== undefined && fourK.current !== undefined, 15_000, 'both servers scanning');
      assert.equal(main.received.length, 1, `one scan at a time on the main Plex, got ${main.received.join(', ')}`);
      await Promise.all([main.finishAll(4), fourK.finishAll(2)]);
      await q.scheduler.afterStepsSettled();
      assert.deepEqual(main.overlaps, []);
      assert.deepEqual([...main.received].sort(), ['movies /data/A', 'movies /data/B', 'plex /data/A', 'plex /data/B']);
      assert.deepEqual([...fourK.received].sort(), ['4k /data/A', '4k /data/B']);
    } finally {
      await q.close();
    }
  });

  test('before its id is known: two names at one address (spelled two ways) share the turn by the address', async () => {
    const main = new Server('machine-main');
    main.tellsId = false;
    const q = runQueue([main.target('plex', 'http://plex.lan:32400'), main.target('movies', 'HTTP://PLEX.lan:32400/')]);
    try {
      q.enqueue('/data/A');
      await waitFor(() => main.current !== undefined, 15_000, 'a scan');
      await main.finishAll(2);
      await q.scheduler.afterStepsSettled();
      assert.deepEqual(main.overlaps, []);
      assert.deepEqual([...main.received].sort(), ['movies /data/A', 'plex /data/A']);
    } finally {
      await q.close();
    }
  });
});

describe('a fake Plex reached under two names', () => {
  test('each name\'s scans reach Plex once each, and Plex never gets a scan while it is scanning', async (t) => {
    const plex = await ownPlex(t);
    plex.scanActivityMs = 200;
    const config = (address: string) =>
      testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: address, PLEX_ANALYZE_TYPE: 'off', SERVER_FILE_CHECKS_ENABLED: false, PLEX_DATABASE_PATH: '/nonexistent/plex.db' });
    // Two addresses for one Plex (a LAN name and its IP): the relay learns they are one server from /identity.
    const a = makePlexTarget(plex, config('http://plex.lan:32400'), { name: 'plex', t });
    const b = makePlexTarget(plex, config('http://192.168.1.5:32400'), { name: 'movies', t });
    const q = runQueue([a, b]);
    try {
      const folders = ['/data/Movies/Alien (1979)', '/data/Movies/Heat (1995)', '/data/TV/Dark/Season 1'];
      const ids = folders.map((f) => q.enqueue(f));
      await waitFor(() => ids.every((id) => q.store.view.get(id)?.status === 'done'), 60_000, 'every scan delivered to both names');
      await q.scheduler.afterStepsSettled();
      await waitFor(() => plex.scans.every((s) => s.endedAt !== undefined), 30_000, 'Plex scans ended');
      assert.deepEqual(plex.scans.map((s) => s.path).sort(), [...folders, ...folders].sort(), 'each folder once per name');
      assert.deepEqual(plex.scans.filter((s) => s.whileBusy).map((s) => s.path), [], 'no scan was sent while Plex was scanning');
    } finally {
      await q.close();
    }
  });
});
