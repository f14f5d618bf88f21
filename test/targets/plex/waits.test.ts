import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { FakePlex } from '../../fakes/plex.ts';
import { makePlexTarget, mediaTree, recordingLogger, runQueue, scanItem, testConfig } from '../../helpers/plex-target.ts';
import { waitFor } from '../../helpers/relay.ts';

describe('waits before the scan', () => {
  let plex: FakePlex;
  beforeEach(async () => {
    plex = await new FakePlex().start();
  });
  afterEach(async () => plex.stop());
  const base = (tree: ReturnType<typeof mediaTree>, o: Record<string, unknown> = {}) =>
    testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings, PLEX_ANALYZE_TYPE: 'off', ...o });

  test('PLEX_WAIT_FOR_EXTERNAL_SCANNERS: no scan while Plex reports a library scan; one scan after it ends', async () => {
    const tree = mediaTree();
    tree.put('/data/TV/Dark/Season 01/e1.mkv');
    const { log, lines } = recordingLogger();
    const q = runQueue([makePlexTarget(plex, base(tree), { log })]);
    plex.activities = [{ type: 'library.update.section', sectionId: 2, title: 'Scanning TV' }];
    try {
      const before = plex.refreshes().length;
      const id = q.enqueue('/data/TV/Dark/Season 01', ['/data/TV/Dark/Season 01/e1.mkv']);
      await waitFor(() => lines.some((l) => l.key === 'PLEX_WAIT_FOR_EXTERNAL_SCANNERS' && /waiting/.test(l.msg)), 10_000, 'a wait log line');
      await waitFor(() => plex.callsTo('GET', /^\/activities$/).length >= 3, 10_000, 'polls');
      assert.equal(plex.refreshes().length, before, 'no scan while another runs');
      // Between polls the delivery waits; during a poll it is briefly "sending". Never done while Plex scans.
      assert.ok(['waiting', 'sending'].includes(q.store.view.get(id)!.deliveries[0]!.status));
      plex.activities = [];
      await waitFor(() => q.store.view.get(id)!.status === 'done', 10_000, 'delivered');
      assert.equal(plex.refreshes().length, before + 1);
      assert.equal(q.store.view.get(id)!.deliveries[0]!.attempts, 1, 'waiting uses no attempts');
    } finally {
      plex.activities = [];
      await q.close();
    }
  });

  test('PLEX_WAIT_FOR_EXTERNAL_SCANNERS safety: the wait is capped, logged, and the scan goes ahead', async (t) => {
    // The cap is a time: the test's clock passes it, so neither a sleep nor a slow machine decides when.
    t.mock.timers.enable({ apis: ['Date'], now: 1_700_000_000_000 });
    const tree = mediaTree();
    tree.put('/data/Movies/Cap (2000)/cap.mkv');
    const { log, lines } = recordingLogger();
    const target = makePlexTarget(plex, base(tree), { log, timings: { externalScanMaxWaitMs: 150 } });
    plex.activities = [{ type: 'library.update.section', sectionId: '1' }];
    // The scans sent here run back to back: Plex's own activity for them would count as "another scan".
    plex.skipsPath = () => true;
    try {
      const item = scanItem({ id: 77, folder: '/data/Movies/Cap (2000)', files: ['/data/Movies/Cap (2000)/cap.mkv'] });
      assert.equal((await target.deliver(item)).outcome, 'retry');
      t.mock.timers.tick(149);
      assert.equal((await target.deliver(item)).outcome, 'retry', 'still within the cap');
      t.mock.timers.tick(1);
      assert.equal((await target.deliver(item)).outcome, 'done');
      assert.ok(lines.some((l) => l.key === 'PLEX_WAIT_FOR_EXTERNAL_SCANNERS' && /gave up waiting/.test(l.msg)));
      // Other activity types (thumbnails, intros) are not library scans and hold nothing back.
      plex.activities = [{ type: 'media.generate.bif', sectionId: '1' }];
      assert.equal((await target.deliver(scanItem({ id: 78, folder: '/data/Movies/Cap (2000)', files: ['/data/Movies/Cap (2000)/cap.mkv'] }))).outcome, 'done');
    } finally {
      plex.activities = [];
      plex.skipsPath = () => false;
      target.close();
    }
  });

  test('PLEX_WAIT_FOR_EXTERNAL_SCANNERS false: scans even while Plex scans', async () => {
    const tree = mediaTree();
    tree.put('/data/Movies/Off (2000)/off.mkv');
    const target = makePlexTarget(plex, base(tree, { PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false }));
    plex.activities = [{ type: 'library.update.section', sectionId: '1' }];
    try {
      assert.equal((await target.deliver(scanItem({ folder: '/data/Movies/Off (2000)', files: ['/data/Movies/Off (2000)/off.mkv'] }))).outcome, 'done');
    } finally {
      plex.activities = [];
    }
  });

  test('PLEX_CHECK_BEFORE_SCAN: asks /myplex/account with the token before scanning', async () => {
    const tree = mediaTree();
    tree.put('/data/Movies/Alive (2000)/a.mkv');
    const { log, lines } = recordingLogger();
    const target = makePlexTarget(plex, base(tree, { PLEX_CHECK_BEFORE_SCAN: true }), { log });
    const before = plex.callsTo('GET', /^\/myplex\/account$/).length;
    assert.equal((await target.deliver(scanItem({ folder: '/data/Movies/Alive (2000)', files: ['/data/Movies/Alive (2000)/a.mkv'] }))).outcome, 'done');
    const calls = plex.callsTo('GET', /^\/myplex\/account$/).slice(before);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.headers['x-plex-token'], plex.token);
    assert.ok(lines.some((l) => l.key === 'PLEX_CHECK_BEFORE_SCAN' && l.account === 'fakeuser'));
  });

  test('PLEX_CHECK_BEFORE_SCAN safety: Plex down, the item waits (logged) and is delivered once when Plex is back', async () => {
    const tree = mediaTree();
    tree.put('/data/Movies/Down (2000)/d.mkv');
    const { log, lines } = recordingLogger();
    const own = await new FakePlex().start();
    const config = testConfig({ PLEX_TOKEN: own.token, PLEX_LOCAL_URL: own.url, SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings, PLEX_ANALYZE_TYPE: 'off', PLEX_CHECK_BEFORE_SCAN: true, PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false });
    const target = makePlexTarget(own, config, { log });
    await own.setMode('error503');
    const q = runQueue([target]);
    try {
      const id = q.enqueue('/data/Movies/Down (2000)', ['/data/Movies/Down (2000)/d.mkv']);
      await waitFor(() => lines.filter((l) => l.key === 'PLEX_CHECK_BEFORE_SCAN' && /not ready/.test(l.msg)).length >= 3, 10_000, 'waits');
      await own.setMode('down');
      await waitFor(() => lines.filter((l) => l.key === 'PLEX_CHECK_BEFORE_SCAN' && /not ready/.test(l.msg) && /unreachable/.test(l.err)).length >= 1, 10_000, 'a wait while down');
      assert.equal(q.store.view.get(id)!.status, 'active');
      await own.setMode('up');
      await waitFor(() => q.store.view.get(id)!.status === 'done', 10_000, 'delivered');
      // Nothing is open any more, so nothing else can reach Plex: count now instead of waiting a while.
      assert.equal(q.store.countOpen(), 0);
      assert.equal(own.refreshes().length, 1);
      assert.equal(q.store.view.get(id)!.deliveries[0]!.attempts, 1, 'the wait never uses up attempts, so the item is never dropped');
    } finally {
      await q.close();
      await own.stop();
    }
  });
});
