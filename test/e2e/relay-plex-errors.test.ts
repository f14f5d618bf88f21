import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { FakePlex } from '../fakes/plex.ts';
import { postForm, runCli, spawnRelay, tempDir, waitFor } from '../helpers/relay.ts';

describe('Plex answers the relay must cope with', () => {
  test('a wrong token is logged as a token problem and retried slowly, not dropped', async () => {
    const plex = await new FakePlex().start();
    const relay = await spawnRelay({
      config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: 'wrong-token', SERVER_SCAN_DELAY: 0, SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'] } },
    });
    try {
      await postForm(relay.url, { eventType: 'Manual', filepath: '/movies/A (2001)/a.mkv' });
      const line = await relay.waitForLog((e) => e.msg === 'scan not delivered yet; will retry');
      assert.match(line.error, /401/);
      assert.match(line.error, /token/);
      assert.equal(line.retryInMs, 5 * 60_000);
      assert.equal(plex.refreshes().length, 0);
      const count = await fetch(`${relay.base}/api/${relay.secret}?cmd=queue_count`).then((r) => r.json());
      assert.deepEqual(count, { queue_count: 1 });
    } finally {
      await relay.kill();
      await plex.stop();
    }
  });

  test('map shows the Plex section a path falls in, or none', async () => {
    const plex = await new FakePlex().start();
    try {
      const dir = tempDir();
      const file = join(dir, 'config.json');
      writeFileSync(file, JSON.stringify({ PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_PATH_MAPPINGS: { '/data/TV2/': ['/tv2/'] } }));
      const hit = await runCli(['--config', file, 'map', '/tv2/Dark/Season 01/e1.mkv']);
      assert.equal(hit.code, 0, hit.stderr);
      assert.match(hit.stdout, /section: 2 \(TV\), location \/data\/TV2/);
      const json = await runCli(['--config', file, 'map', '--json', '/elsewhere/x.mkv']);
      const parsed = JSON.parse(json.stdout);
      assert.equal(parsed.mapped, '/elsewhere/x.mkv');
      assert.equal(parsed.section, null);
      assert.equal(parsed.match, null);
    } finally {
      await plex.stop();
    }
  });

  test('Plex XML answers (no Accept header) are not what the relay asks for: it always asks JSON', async () => {
    const plex = await new FakePlex().start();
    const relay = await spawnRelay({ config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_SCAN_DELAY: 0, SERVER_PATH_MAPPINGS: {} } });
    try {
      await postForm(relay.url, { eventType: 'Manual', filepath: '/data/Movies/B (2002)/' });
      await waitFor(() => plex.refreshes().length === 1, 10_000, 'refresh');
      // The notification stream's SSE request also names text/event-stream, the framing around its JSON.
      for (const call of plex.calls) assert.match(call.headers.accept ?? '', /^(text\/event-stream, )?application\/json$/, call.path);
      assert.equal(plex.refreshes()[0]!.path, '/data/Movies/B (2002)');
    } finally {
      await relay.kill();
      await plex.stop();
    }
  });
});
