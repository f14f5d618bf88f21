import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakePlex } from '../fakes/plex.ts';
import { mediaTree } from '../helpers/plex-target.ts';
import { postForm, postJson, spawnRelay, waitFor, waitForQueueDrained, type RelayProcess } from '../helpers/relay.ts';

const MAPPINGS = {
  '/data/Movies/': ['/movies/', '/mnt/unionfs/Media/Movies/', 'My Drive/Media/Movies/'],
  '/data/TV/': ['/tv/', '/mnt/unionfs/Media/TV/'],
};

describe('relay core, end to end through the real server process', () => {
  let plex: FakePlex;
  let relay: RelayProcess;

  before(async () => {
    plex = await new FakePlex().start();
    // The files exist where scanrelay looks (SERVER_FILE_EXIST_PATH_MAPPINGS), so the file checks pass at once.
    const tree = mediaTree();
    for (const f of ['Movies/Alien (1979)/Alien (1979).mkv', 'Movies/Heat (1995)/Heat.mkv', 'Movies/Up (2009)/Up (2009).mp4', 'TV/Dark/Season 01/Dark - S01E01.mkv', 'Movies/Jaws (1975)/Jaws.mkv', 'Movies/Duel (1971)/Duel.mkv']) {
      tree.put(`/data/${f}`);
    }
    relay = await spawnRelay({
      config: {
        SERVER_FILE_EXIST_PATH_MAPPINGS: tree.mappings,
        PLEX_LOCAL_URL: plex.url,
        PLEX_TOKEN: plex.token,
        SERVER_SCAN_DELAY: 1,
        SERVER_ALLOW_MANUAL_SCAN: true,
        SERVER_PATH_MAPPINGS: MAPPINGS,
      },
    });
  });
  after(async () => {
    await relay?.kill();
    await plex?.stop();
  });

  test('a manual POST in each mapped form gives exactly one refresh with the right section, folder and token', async () => {
    const forms = [
      ['/movies/Alien (1979)/Alien (1979).mkv', '/data/Movies/Alien (1979)'],
      ['/mnt/unionfs/Media/Movies/Heat (1995)/Heat.mkv', '/data/Movies/Heat (1995)'],
      ['My Drive/Media/Movies/Up (2009)/Up (2009).mp4', '/data/Movies/Up (2009)'],
      ['/tv/Dark/Season 01/Dark - S01E01.mkv', '/data/TV/Dark/Season 01'],
    ] as const;
    const before = plex.refreshes().length;
    for (const [sent] of forms) {
      const res = await postForm(relay.url, { eventType: 'Manual', filepath: sent });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status, 'queued');
    }
    await waitFor(() => plex.refreshes().length >= before + forms.length, 15_000, 'refreshes');
    await waitForQueueDrained(relay.queuefile);
    const got = plex.refreshes().slice(before);
    assert.deepEqual(
      got.map((r) => [r.section, r.path, r.token]).sort(),
      forms.map(([, folder]) => [folder.startsWith('/data/TV') ? '2' : '1', folder, plex.token]).sort(),
    );
    // The token travels in the X-Plex-Token header on every call, never in a URL a proxy would log.
    assert.deepEqual(new Set(plex.calls.filter((c) => c.path !== '/identity').map((c) => c.tokenIn)), new Set(['header']));
  });

  test('a wrong secret queues nothing and answers 404', async () => {
    // Refreshes, not all calls: earlier scans' completion watches still read /activities.
    const before = plex.refreshes().length;
    const res = await postForm(`${relay.base}/not-the-secret`, { eventType: 'Manual', filepath: '/movies/X (2000)/x.mkv' });
    assert.equal(res.status, 404);
    const count = await postJson(`${relay.base}/api/${relay.secret}`, { cmd: 'queue_count' });
    assert.equal(count.body.queue_count, 0);
    // A request with the right secret after it is scanned, and the queue then drains: had the refused request
    // been queued, its scan would have come first (oldest first) or be open still.
    assert.equal((await postForm(relay.url, { eventType: 'Manual', filepath: '/movies/Duel (1971)/Duel.mkv' })).status, 200);
    await waitFor(() => plex.refreshes().length > before, 15_000, 'the later scan');
    await waitForQueueDrained(relay.queuefile);
    assert.deepEqual(plex.refreshes().slice(before).map((r) => r.path), ['/data/Movies/Duel (1971)']);
  });

  test('JSON manual requests work and bad paths get 400 with a message', async () => {
    const ok = await postJson(relay.url, { eventType: 'Manual', filepath: '/movies/Jaws (1975)/' });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body.status, 'queued');
    assert.equal(ok.body.path, '/data/Movies/Jaws (1975)');
    for (const [fields, needle] of [
      [{ eventType: 'Manual' }, 'missing'],
      [{ eventType: 'Manual', filepath: '' }, 'missing'],
      [{ eventType: 'Manual', filepath: '/movies/../etc/passwd' }, '..'],
      [{ eventType: 'Manual', filepath: 'relative/path.mkv' }, 'not absolute'],
    ] as const) {
      const res = await postForm(relay.url, fields as Record<string, string>);
      assert.equal(res.status, 400, JSON.stringify(fields));
      assert.match(res.body.error, new RegExp(needle.replace('.', '\\.')));
    }
  });
});
