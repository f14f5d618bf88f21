import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakePlex } from '../fakes/plex.ts';
import { postJson, ROOT, spawnRelay, waitForQueueDrained, type RelayProcess } from '../helpers/relay.ts';

const fixture = (name: string): Record<string, any> => JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'arr', `${name}.json`), 'utf8'));

/** A Radarr import of another movie: the Download fixture with its folder and file changed. */
function download(folder: string, file: string): Record<string, any> {
  const payload = fixture('radarr/download');
  payload.movie.folderPath = folder;
  payload.movieFile.relativePath = file;
  delete payload.movieFile.path;
  return payload;
}

describe('webhooks as the relay answers them, started as a user starts it', () => {
  let plex: FakePlex;
  let relay: RelayProcess;

  before(async () => {
    plex = await new FakePlex({ sections: [{ id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] }] }).start();
    relay = await spawnRelay({
      config: {
        PLEX_LOCAL_URL: plex.url,
        PLEX_TOKEN: plex.token,
        SERVER_SCAN_DELAY: 1,
        SERVER_SCAN_DELAY_MAX: 3,
        SERVER_ALLOW_MANUAL_SCAN: true,
        SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'] },
      },
    });
  });
  after(async () => {
    await relay?.kill();
    await plex?.stop();
  });

  // plex_autoscan scanned nothing for a delete (scan.py:381-463 has no delete branch; plex.py:63-99 gives a missing
  // path up). Here the library root is scanned for it, but apart from the imports: they go first, as their own folders.
  test('a Radarr delete beside two imports: two folder scans, then one library root scan for the removed movie', async () => {
    const mark = plex.refreshes().length;
    for (const payload of [
      download('/movies/Interstellar (2014)', 'Interstellar (2014).mkv'),
      fixture('radarr/movie-delete'),
      download('/movies/Heat (1995)', 'Heat (1995).mkv'),
    ]) {
      const res = await postJson(relay.url, payload);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status, 'queued', res.text);
    }
    await relay.waitForLog((e) => e.msg === 'scan delivered: library root scan for 1 removed items' && e.folder === '/data/Movies', 30_000);
    await waitForQueueDrained(relay.queuefile);
    const scanned = plex.refreshes().slice(mark).map((r) => r.path);
    assert.deepEqual(scanned.slice(0, 2).sort(), ['/data/Movies/Heat (1995)', '/data/Movies/Interstellar (2014)']);
    assert.deepEqual(scanned.slice(2), ['/data/Movies']);
    // The dashboard's history says what the root scan was for.
    const history = await (await fetch(`${relay.base}/api/${relay.secret}/history`)).json();
    const root = history.items.find((i: { folder: string }) => i.folder === '/data/Movies');
    assert.equal(root.what, 'library root scan for 1 removed items');
    assert.equal(history.items.filter((i: { what: string | null }) => i.what === null).length, 2);
    const page = await (await fetch(relay.url, { headers: { accept: 'text/html' } })).text();
    assert.match(page, /<code>\/data\/Movies<\/code><div class="what">library root scan for 1 removed items<\/div>/);
  });

  // scan.py:115-118: start_scan drops a path in no section, and client_pushed still answers "OK" (scan.py:469).
  test('a webhook for a folder in no library is answered 200, ignored with the reason, and nothing is scanned', async () => {
    const mark = plex.refreshes().length;
    const res = await postJson(relay.url, download('/elsewhere/Up (2009)', 'Up (2009).mkv'));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'ignored');
    assert.match(res.body.scans[0].reason, /"\/elsewhere\/Up \(2009\)" is in no library of an enabled media server \(library roots: \/data\/Movies\)/);
    await relay.waitForLog((e) => /webhook folder is in no library/.test(e.msg ?? ''));
    const count = await postJson(`${relay.base}/api/${relay.secret}`, { cmd: 'queue_count' });
    assert.deepEqual(count.body, { queue_count: 0 });
    assert.equal(plex.refreshes().length, mark);
  });
});
