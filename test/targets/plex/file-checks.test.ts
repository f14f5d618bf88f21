import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decideFileCheck } from '../../../src/targets/plex/file-checks.ts';
import { makePlexTarget, mediaTree, ownPlex, runQueue, scanItem, testConfig } from '../../helpers/plex-target.ts';
import { waitFor } from '../../helpers/relay.ts';

const FILE = '/data/Movies/Heat (1995)/Heat (1995).mkv';
const FOLDER = '/data/Movies/Heat (1995)';

describe('file checks: plex_autoscan decisions (pure)', () => {
  const probeOf = (present: string[]) => (p: string) => (present.includes(p) ? ('file' as const) : ('missing' as const));
  const cfg = (o: Record<string, unknown> = {}) => testConfig({ SERVER_MAX_FILE_CHECKS: 3, SERVER_FILE_CHECK_DELAY: 1, ...o });

  test('a present file is ready on the first check; a missing one waits until the last check, then is exhausted', () => {
    const item = { folder: FOLDER, files: [FILE] };
    assert.equal(decideFileCheck({ ...item, fileChecks: 0 }, cfg(), probeOf([FILE])).kind, 'ready');
    assert.deepEqual(
      [0, 1, 2].map((n) => decideFileCheck({ ...item, fileChecks: n }, cfg(), probeOf([])).kind),
      ['wait', 'wait', 'exhausted'],
    );
  });

  test('SERVER_MAX_FILE_CHECKS 0 means one check without waiting, as in plex_autoscan (the check is never skipped)', () => {
    const item = { folder: FOLDER, files: [FILE], fileChecks: 0 };
    assert.equal(decideFileCheck(item, cfg({ SERVER_MAX_FILE_CHECKS: 0 }), probeOf([FILE])).kind, 'ready');
    assert.equal(decideFileCheck(item, cfg({ SERVER_MAX_FILE_CHECKS: 0 }), probeOf([])).kind, 'exhausted');
  });

  test('with SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION the last check looks for the folder and scans it', () => {
    const item = { folder: FOLDER, files: [FILE], fileChecks: 2 };
    const d = decideFileCheck(item, cfg({ SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION: true }), probeOf([FOLDER]));
    assert.deepEqual(d.kind === 'ready' && [d.folder, d.folderOnly], [FOLDER, true]);
    // Before the last check the file itself is looked for.
    assert.equal(decideFileCheck({ ...item, fileChecks: 1 }, cfg({ SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION: true }), probeOf([FOLDER])).kind, 'wait');
    // No folder either: exhausted.
    assert.equal(decideFileCheck(item, cfg({ SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION: true }), probeOf([])).kind, 'exhausted');
  });

  test('the check looks where SERVER_FILE_EXIST_PATH_MAPPINGS says scanrelay sees the file', () => {
    const seen: string[] = [];
    decideFileCheck({ folder: FOLDER, files: [FILE], fileChecks: 0 }, cfg({ SERVER_FILE_EXIST_PATH_MAPPINGS: { '/mnt/unionfs/Media/': ['/data/'] } }), (p) => {
      seen.push(p);
      return 'file';
    });
    assert.deepEqual(seen, ['/mnt/unionfs/Media/Movies/Heat (1995)/Heat (1995).mkv']);
  });
});

// Each test has a fake Plex of its own: a scan an earlier test sent may still show as running on a shared one, and
// PLEX_WAIT_FOR_EXTERNAL_SCANNERS (on by default) then holds the next test's scan.
describe('file checks through the queue (real files, fake Plex)', () => {
  test('a file that appears late gets exactly one scan, after it appears, and other items are not held back', async (t) => {
    const plex = await ownPlex(t);
    const tree = mediaTree();
    const config = testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_MAX_FILE_CHECKS: 50, SERVER_FILE_CHECK_DELAY: 0.1, SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings, PLEX_ANALYZE_TYPE: 'off' });
    const q = runQueue([makePlexTarget(plex, config, { t })], { concurrency: 1 });
    try {
      const before = plex.refreshes().length;
      const late = q.enqueue('/data/Movies/Late (2001)', ['/data/Movies/Late (2001)/Late (2001).mkv']);
      // Waiting for one file does not hold back another (one delivery slot only).
      tree.put('/data/Movies/Ready (2002)/Ready (2002).mkv');
      q.enqueue('/data/Movies/Ready (2002)', ['/data/Movies/Ready (2002)/Ready (2002).mkv']);
      await waitFor(() => plex.refreshes().some((r) => r.path === '/data/Movies/Ready (2002)'), 10_000, 'the ready item');
      await waitFor(() => ((q.store.view.get(late)!.deliveries[0]?.file_checks ?? 0) >= 2 ? true : undefined), 10_000, 'a few checks');
      assert.equal(plex.refreshes().filter((r) => r.path === '/data/Movies/Late (2001)').length, 0, 'no scan before the file exists');
      tree.put('/data/Movies/Late (2001)/Late (2001).mkv');
      await waitFor(() => q.store.view.get(late)!.status === 'done', 10_000, 'late item delivered');
      // Nothing is open any more, so nothing else can reach Plex: count now instead of waiting a while.
      assert.equal(q.store.countOpen(), 0);
      assert.equal(plex.refreshes().slice(before).filter((r) => r.path === '/data/Movies/Late (2001)').length, 1);
      assert.equal(q.store.view.get(late)!.deliveries[0]!.attempts, 1, 'checks do not use up delivery attempts');
    } finally {
      await q.close();
    }
  });

  test('a file that never appears: no scan, the item fails with a clear reason', async (t) => {
    const plex = await ownPlex(t);
    const tree = mediaTree();
    const config = testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_MAX_FILE_CHECKS: 3, SERVER_FILE_CHECK_DELAY: 0.05, SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings });
    const q = runQueue([makePlexTarget(plex, config, { t })]);
    try {
      const before = plex.refreshes().length;
      const id = q.enqueue('/data/Movies/Never (2003)', ['/data/Movies/Never (2003)/Never (2003).mkv']);
      const entry = (await waitFor(() => (q.store.view.get(id)!.status === 'failed' ? q.store.view.get(id)! : undefined), 10_000, 'failure'))!;
      assert.equal(entry.deliveries[0]!.file_checks, 2);
      assert.match(entry.deliveries[0]!.last_error!, /Never \(2003\)\.mkv did not appear after 3 file check\(s\)/);
      assert.equal(plex.refreshes().length, before);
    } finally {
      await q.close();
    }
  });

  test('a file that never appears with SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION: its folder is scanned once', async (t) => {
    const plex = await ownPlex(t);
    const tree = mediaTree();
    tree.put('/data/Movies/Folder (2004)/other.nfo');
    const config = testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_MAX_FILE_CHECKS: 3, SERVER_FILE_CHECK_DELAY: 0.05, SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings, SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION: true });
    const q = runQueue([makePlexTarget(plex, config, { t })]);
    try {
      const id = q.enqueue('/data/Movies/Folder (2004)', ['/data/Movies/Folder (2004)/Folder (2004).mkv']);
      const entry = (await waitFor(() => (q.store.view.get(id)!.status === 'done' ? q.store.view.get(id)! : undefined), 10_000, 'folder scan'))!;
      assert.equal(plex.refreshes().filter((r) => r.path === '/data/Movies/Folder (2004)').length, 1);
      assert.match(entry.deliveries[0]!.detail!, /files never appeared/);
    } finally {
      await q.close();
    }
  });

  test('SERVER_FILE_CHECKS_ENABLED false (a relay that cannot see the files) scans without checking; the default checks', async (t) => {
    const plex = await ownPlex(t);
    const config = testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_MAX_FILE_CHECKS: 5, SERVER_FILE_CHECK_DELAY: 60 });
    const item = scanItem({ folder: '/data/Movies/Unseen (2006)', files: ['/data/Movies/Unseen (2006)/u.mkv'] });
    const checked = await makePlexTarget(plex, config, { t }).deliver(item);
    assert.deepEqual(checked.outcome === 'retry' && [checked.retryAfterMs, checked.countsAsAttempt, checked.fileChecks], [60_000, false, 1]);
    assert.equal(plex.refreshes().filter((r) => r.path === '/data/Movies/Unseen (2006)').length, 0);
    assert.equal((await makePlexTarget(plex, { ...config, SERVER_FILE_CHECKS_ENABLED: false }, { t }).deliver(item)).outcome, 'done');
    assert.equal(plex.refreshes().filter((r) => r.path === '/data/Movies/Unseen (2006)').length, 1);
  });

  test('a delete is not checked for existence: it is scanned at once', async (t) => {
    const plex = await ownPlex(t);
    const tree = mediaTree();
    const config = testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, SERVER_MAX_FILE_CHECKS: 5, SERVER_FILE_CHECK_DELAY: 60, SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings });
    const target = makePlexTarget(plex, config, { t });
    const result = await target.deliver(scanItem({ folder: '/data/Movies/Gone (2005)', files: ['/data/Movies/Gone (2005)/Gone.mkv'], updateType: 'Deleted' }));
    assert.equal(result.outcome, 'done');
    assert.ok(plex.refreshes().some((r) => r.path === '/data/Movies/Gone (2005)'));
  });
});
