import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FakePlex } from '../fakes/plex.ts';
import { postForm, spawnRelay, tempDir, waitFor } from '../helpers/relay.ts';

/*
 * The relay as a user starts it, with RUN_COMMAND_BEFORE_SCAN / RUN_COMMAND_AFTER_SCAN and PLEX_CHECK_BEFORE_SCAN,
 * Plex down while three imports arrive, then back. plex_autoscan holds its scan lock from the before-command,
 * through the wait for Plex (wait_plex_alive: a check every 15 s), to the after-command (plex.py:133-232), so the
 * commands come in pairs, one scan at a time. The relay's first re-check is 15 s after the first, as plex_autoscan's.
 */
test('three imports while Plex is down: one before-command while it waits, then before/after pairs in turn once Plex is back', async () => {
  const plex = await new FakePlex().start();
  // Each scan shows as Plex's own scan activity for a moment, so its end is seen and the next scan follows.
  plex.scanActivityMs = 300;
  await plex.setMode('down');
  const log = join(tempDir(), 'commands.log');
  const relay = await spawnRelay({
    config: {
      PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_SCAN_DELAY: 0, PLEX_CHECK_BEFORE_SCAN: true, PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false,
      SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'] },
      RUN_COMMAND_BEFORE_SCAN: `echo "before $SCANRELAY_PATH" >> '${log}'`,
      RUN_COMMAND_AFTER_SCAN: `echo "after $SCANRELAY_PATH" >> '${log}'`,
    },
  });
  const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []);
  try {
    const names = ['A (2001)', 'B (2002)', 'C (2003)'];
    for (const n of names) {
      const answer = await postForm(relay.url, { eventType: 'Manual', filepath: `/movies/${n}/${n}.mkv` });
      assert.equal(answer.status, 200, answer.text);
    }
    await relay.waitForLog((e) => e.key === 'PLEX_CHECK_BEFORE_SCAN' && /not ready/.test(e.msg));
    assert.equal(lines().length, 1, 'one before-command while Plex is down');
    await plex.setMode('up');
    await waitFor(() => lines().length === 6, 60_000, 'three pairs of commands');
    const folders = lines().map((l) => l.replace(/^(before|after) /, ''));
    const order = lines().map((l) => l.split(' ')[0]);
    assert.deepEqual(order, ['before', 'after', 'before', 'after', 'before', 'after']);
    for (let i = 0; i < 6; i += 2) assert.equal(folders[i], folders[i + 1], 'each pair is one scan');
    assert.deepEqual(new Set(folders), new Set(names.map((n) => `/data/Movies/${n}`)));
    assert.equal(plex.refreshes().length, 3);
  } finally {
    await relay.kill();
    await plex.stop();
  }
});
