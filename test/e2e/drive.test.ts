import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { writeFileSync } from 'node:fs';
import { DriveCache } from '../../src/triggers/drive/cache.ts';
import { writeTokenFile } from '../../src/google/token-file.ts';
import { FakeGoogle } from '../fakes/google.ts';
import { FakePlex } from '../fakes/plex.ts';
import { postJson, runCli, spawnRelay, tempDir, waitFor, type RelayProcess } from '../helpers/relay.ts';

describe('drive monitoring in the real server process', () => {
  let google: FakeGoogle;
  let plex: FakePlex;
  let relay: RelayProcess;
  let dir: string;
  let config: Record<string, unknown>;

  before(async () => {
    google = await new FakeGoogle().start();
    plex = await new FakePlex().start();
    dir = tempDir('scanrelay-drive-e2e-');
    writeTokenFile(join(dir, 'token.json'), google.issueToken());
    google.seed({ id: 'media', name: 'Media', parents: [google.rootId] });
    google.seed({ id: 'movies', name: 'Movies', parents: ['media'] });
    google.seed({ id: 'film', name: 'Film (2020)', parents: ['movies'] });
    google.seed({ id: 'old', name: 'Old.mkv', parents: ['film'], mimeType: 'video/x-matroska', md5Checksum: 'o' });
    config = {
      PLEX_LOCAL_URL: plex.url,
      PLEX_TOKEN: plex.token,
      PLEX_DATABASE_PATH: join(dir, 'no-plex.db'),
      SERVER_SCAN_DELAY: 1,
      SERVER_ALLOW_MANUAL_SCAN: true,
      SERVER_PATH_MAPPINGS: { '/data/Movies/': ['My Drive/Media/Movies/'] },
      CLOUD: {
        ENABLED: true,
        ...google.configKeys(),
        POLL_INTERVAL: 0.5,
        ALLOWED: { FILE_PATHS: ['My Drive/Media/'], FILE_EXTENSIONS: true, FILE_EXTENSIONS_LIST: ['mkv'], MIME_TYPES: true, MIME_TYPES_LIST: ['video'] },
      },
    };
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ SERVER_PORT: 0, SERVER_IP: '127.0.0.1', SERVER_PASS: 'test-secret', SERVER_FILE_CHECKS_ENABLED: false, ...config }));
  });
  after(async () => {
    await relay?.kill();
    await plex?.stop();
    await google?.stop();
  });

  test('build_caches fills the cache from the whole history without touching the queue', async () => {
    google.put({ id: 'old', name: 'Old.mkv', parents: ['film'], md5Checksum: 'o' });
    const res = await runCli(['--config', join(dir, 'config.json'), '--tokenfile', join(dir, 'token.json'), '--cachefile', join(dir, 'cache.db'), '--queuefile', join(dir, 'queue.db'), 'build_caches']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    assert.equal(google.driveCalls().filter((c) => c.path === '/drive/v3/changes')[0]?.query.pageToken, '1');
    const cache = new DriveCache(join(dir, 'cache.db'));
    assert.deepEqual(cache.get('old')?.paths, ['My Drive/Media/Movies/Film (2020)/Old.mkv']);
    cache.close();
  });

  // Issue 35 item 4: a long history is read a page (1,000 changes) at a time; each page says so.
  test('build_caches reports its progress once per page of changes', async () => {
    const before = google.driveCalls().filter((c) => c.path === '/drive/v3/changes').length;
    for (let i = 0; i < 1_200; i++) google.put({ id: `bulk${i}`, name: `Bulk ${i}.mkv`, parents: ['film'], md5Checksum: `b${i}` });
    const res = await runCli(['--config', join(dir, 'config.json'), '--tokenfile', join(dir, 'token.json'), '--cachefile', join(dir, 'cache.db'), '--queuefile', join(dir, 'queue.db'), 'build_caches']);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const pages = google.driveCalls().filter((c) => c.path === '/drive/v3/changes').length - before;
    assert.ok(pages >= 2, `the history took ${pages} pages`);
    const lines = res.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>).filter((e) => e.page !== undefined);
    assert.deepEqual(lines.map((e) => e.page), Array.from({ length: pages }, (_, i) => i + 1));
    assert.equal(lines[0]!.changes, 1_000);
    assert.ok(lines.at(-1)!.changes > 1_200 && lines.at(-1)!.items > 1_200, JSON.stringify(lines.at(-1)));
    assert.match(lines[0]!.msg, /^drive \S+: page 1 read, 1000 change\(s\) so far, \d+ item\(s\) in the cache$/);
  });

  test('a new drive file becomes one Plex refresh of its mapped folder; reset_page_token answers success', async () => {
    relay = await spawnRelay({ configPath: join(dir, 'config.json'), dir, args: ['--tokenfile', join(dir, 'token.json'), '--cachefile', join(dir, 'cache.db')] });
    await relay.waitForLog((e) => e.component === 'drive' && /first page token/.test(e.msg ?? ''));
    google.put({ id: 'new', name: 'Film (2020).mkv', parents: ['film'], md5Checksum: 'n' });
    google.put({ id: 'old', name: 'Old.mkv', parents: ['film'], md5Checksum: 'o' });
    await waitFor(() => plex.refreshes().length >= 1, 20_000, 'a Plex refresh');
    assert.deepEqual(plex.refreshes().map((r) => [r.section, r.path]), [['1', '/data/Movies/Film (2020)']]);
    const queued = relay.events().filter((e) => e.component === 'drive' && /change\(s\)/.test(e.msg ?? ''));
    assert.equal(queued.at(-1)?.added, 1, 'the cached, unchanged file is not counted as added');

    // Operators see the monitor: a poll counted in /metrics, the state on the dashboard's status strip.
    const metrics = await fetch(`${relay.base}/metrics`).then((r) => r.text());
    assert.match(metrics, /scanrelay_drive_polls_total\{outcome="ok"\} [1-9]/);
    const page = await fetch(relay.url, { headers: { accept: 'text/html' } }).then((r) => r.text());
    assert.match(page, /data-drive="polling"/);

    const starts = google.driveCalls().filter((c) => c.path === '/drive/v3/changes/startPageToken').length;
    const reset = await postJson(`${relay.base}/api/${relay.secret}`, { cmd: 'reset_page_token' });
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body.success, true);
    assert.equal(google.driveCalls().filter((c) => c.path === '/drive/v3/changes/startPageToken').length, starts + 1);
  });
});
