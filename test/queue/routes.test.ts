import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scanRequestSchema, type ScanRequest } from '../../src/core/scan.ts';
import { parseConfig } from '../../src/config/load.ts';
import { namedTargets } from '../../src/config/named-targets.ts';
import { QueueIntake } from '../../src/queue/door.ts';
import { sharedReach } from '../../src/queue/pg/store.ts';
import { deliveriesOf } from '../../src/queue/lifecycle.ts';
import { openRoutes, routeRequest, routeTable, withPeerTargets } from '../../src/queue/route.ts';
import { shownRoute } from '../../src/queue/state.ts';
import { bothStores } from '../helpers/both-stores.ts';

// Issue 39: which targets a request goes to is decided once, when it is queued, and stored with its scan.

const table = () =>
  routeTable(
    namedTargets(
      parseConfig({
        SERVER_PASS: 'a-long-enough-secret-for-tests',
        PLEX_REWRITE: [{ from: '^/data/', to: '/plexdata/' }],
        TARGETS: {
          // Matched on its own path, after its rewrite: /data/Books -> /audiobooks.
          books: { TYPE: 'jellyfin', URL: 'http://jf', REWRITE: [{ from: '^/data/Books/', to: '/audiobooks/' }], INCLUDE: ['^/audiobooks/'] },
          plex4k: { TYPE: 'plex', URL: 'http://4k', INCLUDE: ['2160p'], EXCLUDE: ['/Extras/'] },
        },
      }).file,
    ),
  );
const req = (folder: string, extra: Partial<ScanRequest> = {}) => scanRequestSchema.parse({ folder, source: 'Manual', ...extra });

describe('the routing table (queue/route.ts routeRequest): a pure function of the trigger and the path', () => {
  test('each target takes a path by its own INCLUDE/EXCLUDE on its own path; a trigger narrows the candidates', () => {
    const t = table();
    // plex takes everything; books only its rewritten /audiobooks; plex4k only 2160p outside Extras.
    assert.deepEqual(routeRequest(t, req('/data/Movies/Heat (1995)')), ['plex']);
    assert.deepEqual(routeRequest(t, req('/data/Books/Dune')), ['books', 'plex']);
    assert.deepEqual(routeRequest(t, req('/data/Movies/Heat (1995)', { files: ['/data/Movies/Heat (1995)/Heat 2160p.mkv'] })), ['plex', 'plex4k']);
    assert.deepEqual(routeRequest(t, req('/data/Movies/Heat (1995)/Extras', { files: ['/data/Movies/Heat (1995)/Extras/Heat 2160p.mkv'] })), ['plex']);
    // Every target takes it: the route names them all (issue 49: never NULL meaning "every target").
    assert.deepEqual(routeRequest(t, req('/data/Books/Dune 2160p')), ['books', 'plex', 'plex4k']);
    // The trigger's own list.
    assert.deepEqual(routeRequest(t, req('/data/Books/Dune', { targets: ['books'] })), ['books']);
    assert.deepEqual(routeRequest(t, req('/data/Movies/Heat (1995)', { targets: ['books'] })), []);
    assert.deepEqual(routeRequest(t, req('/data/Books/Dune 2160p', { targets: ['plex4k', 'books'] })), ['books', 'plex4k']);
  });

  test("on a shared queue the other relays' target names join the table and take every path; this relay's own names keep their filters; a feeder stays without a route", () => {
    const t = withPeerTargets(table(), ['jellyfin', 'plex4k', 'jellyfin']);
    // plex4k is this relay's too: its INCLUDE/EXCLUDE decide, for every relay's plex4k. jellyfin is only another's.
    assert.deepEqual(routeRequest(t, req('/data/Movies/Heat (1995)')), ['jellyfin', 'plex']);
    assert.deepEqual(routeRequest(t, req('/data/Books/Dune 2160p')), ['books', 'jellyfin', 'plex', 'plex4k']);
    assert.deepEqual(routeRequest(t, req('/data/Movies/Heat (1995)', { targets: ['jellyfin'] })), ['jellyfin']);
    assert.deepEqual(routeRequest(t, req('/data/Movies/Heat (1995)', { targets: ['emby'] })), [], 'a name no relay has is not made up');
    assert.deepEqual(t.map((e) => e.name), ['plex', 'books', 'plex4k', 'jellyfin']);
    // A relay without targets stores no route: its scans reach every relay's servers.
    assert.deepEqual(withPeerTargets([], ['jellyfin']), []);
    assert.equal(routeRequest(withPeerTargets([], ['jellyfin']), req('/data/Movies/Heat (1995)')), undefined);
    // Nothing from the others: the table as it was.
    const own = openRoutes(['plex']);
    assert.equal(withPeerTargets(own, []), own);
  });

  test('a route is shown only when it leaves a target out: one naming every target reads as before routes were stored', () => {
    assert.equal(shownRoute(['plex'], ['plex']), null);
    assert.equal(shownRoute(['books', 'plex', 'plex4k'], ['plex', 'plex4k', 'books']), null);
    assert.deepEqual(shownRoute(['plex'], ['plex', 'plex4k']), ['plex']);
    // A target since removed from the config is named.
    assert.deepEqual(shownRoute(['gone', 'plex'], ['plex', 'plex4k']), ['gone', 'plex']);
    assert.equal(shownRoute(undefined, ['plex']), null);
  });

  test('on a shared queue a routed scan goes to the servers of its targets, by name; a target of this relay whose server has no id yet waits by its bare name; a target no relay has fails, named', () => {
    const servers = ['jf@abc', 'plex4k@m2', 'plex@m1'];
    const reach = sharedReach(servers, ['plex', 'books']);
    const to = (route: string | null) => deliveriesOf(route, reach, 5).map((d) => (d.error ? `${d.target}: ${d.error}` : d.target));
    assert.deepEqual(to(null), servers);
    assert.deepEqual(to('plex'), ['plex@m1']);
    assert.deepEqual(to('jf,plex4k'), ['jf@abc', 'plex4k@m2']);
    assert.deepEqual(to('books'), ['books']);
    assert.deepEqual(to('gone,plex'), ['gone: target gone is no longer configured', 'plex@m1']);
  });
});

const { stores: STORES } = bothStores();

const timing = { delayMs: 10_000, maxMs: 30_000 };

for (const [name, open] of STORES) {
  describe(`routes stored with the scan (${name})`, () => {
    test('requests with different routes are kept apart; the same route coalesces; activation delivers to exactly the route', async () => {
      const store = await open();
      const intake = new QueueIntake(store, table(), () => timing);
      const [a, b, c, d, e] = await intake.enqueue([
        req('/data/Books/Dune', { targets: ['books'] }),
        req('/data/Books/Dune', { files: ['/data/Books/Dune/ch1.m4b'] }),
        req('/data/Books/Dune/Part 2', { targets: ['books'] }),
        req('/data/Movies/Heat (1995)', { targets: ['books'] }),
        req('/data/Books/Dune', { targets: ['plex', 'books'] }),
      ]);
      assert.equal(a!.status, 'queued');
      // Another route at the same folder: its own scan.
      assert.equal(b!.status, 'queued');
      assert.notEqual(b!.id, a!.id);
      // The same route below: merged into the first.
      assert.equal(c!.status, 'merged');
      assert.equal(c!.id, a!.id);
      // Its trigger sends to books alone, and books does not take movies: queued nowhere.
      assert.equal(d!.status, 'unrouted');
      // plex and books = what every target takes for this folder = b's route.
      assert.equal(e!.id, b!.id);
      const due = Date.now() + 60_000;
      await store.activateDue(['plex', 'books', 'plex4k'], due);
      const byTarget = async (target: string) => (await store.claimDeliveries(10, due, target)).map((x) => x.item.id).sort();
      assert.deepEqual(await byTarget('books'), [a!.id, b!.id].sort());
      assert.deepEqual(await byTarget('plex'), [b!.id]);
      assert.deepEqual(await byTarget('plex4k'), []);
    });

    test('an action (refresh, analyze) is stored with the scan and kept apart from scans and the other action; a failed part keeps it', async () => {
      const store = await open();
      const now = Date.now();
      const [scan, refresh, refresh2, analyze, refreshBelow] = await store.enqueueMany(
        [
          req('/d/TV/Show/S1', { files: ['/d/TV/Show/S1/e1.mkv'] }),
          req('/d/TV/Show/S1', { files: ['/d/TV/Show/S1/e1.mkv'], action: 'refresh' }),
          req('/d/TV/Show/S1', { files: ['/d/TV/Show/S1/e2.mkv'], action: 'refresh' }),
          req('/d/TV/Show/S1', { files: ['/d/TV/Show/S1/e1.mkv'], action: 'analyze' }),
          req('/d/TV/Show/S1/Extras', { files: ['/d/TV/Show/S1/Extras/x.mkv'], action: 'refresh' }),
        ],
        timing,
        now,
      );
      assert.equal(scan!.status, 'queued');
      assert.equal(refresh!.status, 'queued');
      assert.notEqual(refresh!.id, scan!.id);
      // The same action at the same folder (or below it) merges: one refresh of both files.
      assert.equal(refresh2!.id, refresh!.id);
      assert.equal(refreshBelow!.id, refresh!.id);
      assert.notEqual(analyze!.id, refresh!.id);
      assert.notEqual(analyze!.id, scan!.id);
      const due = now + 60_000;
      await store.activateDue(['plex'], due);
      const items = await store.claimDeliveries(10, due, 'plex');
      const byId = new Map(items.map((x) => [x.item.id, x.item]));
      assert.equal(byId.get(scan!.id)!.action, undefined);
      assert.equal(byId.get(refresh!.id)!.action, 'refresh');
      assert.deepEqual([...byId.get(refresh!.id)!.files].sort(), ['/d/TV/Show/S1/Extras/x.mkv', '/d/TV/Show/S1/e1.mkv', '/d/TV/Show/S1/e2.mkv']);
      assert.equal(byId.get(analyze!.id)!.action, 'analyze');
      assert.equal((await store.view.get(refresh!.id))!.action, 'refresh');
      // The refresh fails for good: its part (Extras) is queued again, still a refresh.
      await store.completeDelivery(refresh!.id, 'plex', { status: 'failed', error: 'no item' }, due);
      const open2 = await store.view.listOpen();
      const extras = open2.find((e) => e.folder === '/d/TV/Show/S1/Extras');
      assert.ok(extras, JSON.stringify(open2));
      assert.equal(extras.action, 'refresh');
    });

    test("a scan's DELAY replaces SERVER_SCAN_DELAY for it alone", async () => {
      const store = await open();
      const now = Date.now();
      const [fast, slow] = await store.enqueueMany([req('/d/A', { delay: 1 }), req('/d/B')], timing, now);
      assert.equal(fast!.dueAt, now + 1000);
      assert.equal(slow!.dueAt, now + 10_000);
    });
  });
}
