import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { createPlexDb } from '../../../fakes/plex-db.ts';
import { FakeScanner } from '../../../fakes/scanner.ts';
import { postForm, spawnRelay, tempDir, waitFor, type RelayProcess } from '../../../helpers/relay.ts';

interface DeliveryRow {
  status: string;
  attempts: number;
  last_error: string | null;
  detail: string | null;
}

describe('relay with PLEX_SCAN_METHOD "scanner", end to end through fake docker and scanner', () => {
  let fake: FakeScanner;
  let relay: RelayProcess;

  before(async () => {
    const dir = tempDir();
    fake = new FakeScanner();
    createPlexDb(join(dir, 'library.db'), [
      { id: 1, name: 'Movies', type: 1, roots: ['/data/Movies'] },
      { id: 2, name: 'TV', type: 2, roots: ['/data/TV'] },
    ]).close();
    relay = await spawnRelay({
      dir,
      env: fake.env(),
      config: {
        PLEX_SCAN_METHOD: 'scanner',
        PLEX_SCANNER: fake.escapedScanner,
        PLEX_DATABASE_PATH: join(dir, 'library.db'),
        USE_DOCKER: true,
        PLEX_USER: 'abc',
        DOCKER_NAME: 'plex',
        SERVER_SCAN_DELAY: 1,
        SERVER_ALLOW_MANUAL_SCAN: true,
        // Plex gets one scan at a time, its after-steps included: analyze would look the files up for 50 s.
        PLEX_ANALYZE_TYPE: 'off',
        SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'], '/data/TV/': ['/tv/'] },
      },
    });
  });
  after(async () => {
    await relay?.kill();
  });

  const delivery = (folder: string): DeliveryRow | undefined => {
    const db = new Database(relay.queuefile, { readonly: true });
    try {
      return db
        .prepare<[string], DeliveryRow>(
          `SELECT d.status, d.attempts, d.last_error, d.detail FROM deliveries d JOIN scans s ON s.id = d.scan_id WHERE s.folder = ? AND d.target = 'plex'`,
        )
        .get(folder);
    } finally {
      db.close();
    }
  };
  const done = (folder: string): DeliveryRow | undefined => {
    const row = delivery(folder);
    return row?.status === 'done' ? row : undefined;
  };
  const scansOf = (folder: string) => fake.scannerCalls().filter((c) => c.argv.at(-1) === folder);

  test('a queued manual scan runs the scanner in the container with the section from Plex database; history keeps its output', async () => {
    const res = await postForm(relay.url, { eventType: 'Manual', filepath: "/movies/Ocean's Eleven (2001)/Ocean's Eleven.mkv" });
    assert.equal(res.status, 200, res.text);
    const folder = "/data/Movies/Ocean's Eleven (2001)";
    const row = (await waitFor(() => done(folder), 20_000, 'delivery done'))!;
    assert.match(row.detail!, /section 1 \(Movies\) via scanner; scanner exited with status 0; output: The '--scan' operation is deprecated/);
    const calls = scansOf(folder);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]!.argv, ['--scan', '--refresh', '--section', '1', '--directory', folder]);
    assert.equal(calls[0]!.env.FAKE_USER, 'abc');
    assert.equal(calls[0]!.env.FAKE_CONTAINER, 'plex');
    assert.equal(calls[0]!.env.LD_LIBRARY_PATH, '/usr/lib/plexmediaserver/lib');
  });

  test('a non-zero scanner exit is run again (PLEX_SCANNER_MAX_RETRIES), and the history keeps the status and stderr', async () => {
    fake.failNext(1, 3);
    const res = await postForm(relay.url, { eventType: 'Manual', filepath: '/tv/Dark/Season 01/Dark - S01E01.mkv' });
    assert.equal(res.status, 200, res.text);
    const folder = '/data/TV/Dark/Season 01';
    const row = (await waitFor(() => done(folder), 30_000, 'delivery done after a second run'))!;
    assert.equal(row.attempts, 1, 'run again within the same delivery');
    assert.equal(scansOf(folder).length, 2);
    assert.match(String(row.detail), /status 0 on run 2 \(before: Plex Media Scanner exited with status 3; stderr: .*database is locked/);
  });
});
