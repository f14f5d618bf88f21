import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { runCli, tempDir } from '../helpers/relay.ts';

// Issue 50: `scanrelay map` shows each Jellyfin and Emby target's scan mode, and why: SCAN_MODE, or what auto picks.

let withPlugin: FakeMediaServer;
let old: FakeMediaServer;
before(async () => {
  withPlugin = await new FakeMediaServer({ apiKey: 'jf', version: '10.11.3', plugin: true }).start();
  old = await new FakeMediaServer({ apiKey: 'old', version: '10.10.7' }).start();
});
after(async () => {
  await withPlugin.stop();
  await old.stop();
});

test('map names the mode of every Jellyfin/Emby target: asked of the server for auto, SCAN_MODE otherwise', async () => {
  const file = join(tempDir('map-mode-'), 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      PLEX_ENABLED: false,
      JELLYFIN: { ENABLED: true, URL: withPlugin.url, API_KEY: 'jf' },
      TARGETS: {
        old: { TYPE: 'jellyfin', URL: old.url, API_KEY: 'old' },
        fixed: { TYPE: 'emby', URL: 'http://127.0.0.1:1', API_KEY: 'x', SCAN_MODE: 'item' },
        dead: { TYPE: 'jellyfin', URL: 'http://127.0.0.1:1', API_KEY: 'x' },
      },
    }),
  );
  const r = await runCli(['--config', file, 'map', '/tv/Dark/Season 1/e1.mkv']);
  assert.equal(r.code, 0, r.stderr);
  const modes = r.stdout.split('\n').filter((l) => l.startsWith('mode:'));
  assert.deepEqual(modes.slice(0, 3), [
    'mode:    jellyfin: plugin (Jellyfin 10.11.3 has the TargetedScan plugin 1.9.0.0 active)',
    'mode:    old: media-updated (Jellyfin 10.10.7, no TargetedScan plugin: Media/Updated scans only the path there)',
    'mode:    fixed: item (SCAN_MODE is "item")',
  ]);
  assert.match(modes[3]!, /^mode: {4}dead: auto, not known yet \(could not ask the server: Jellyfin \(GET \/System\/Info\) unreachable/);
  // Each mode line follows its target's line.
  const lines = r.stdout.split('\n');
  assert.match(lines[lines.findIndex((l) => l.startsWith('mode:    old:')) - 1]!, /^target: {2}old \(jellyfin\)/);

  const json = JSON.parse((await runCli(['--config', file, 'map', '--json', '/tv/Dark/Season 1/e1.mkv'])).stdout);
  const byName = Object.fromEntries((json.targets as Array<{ name: string; scanMode?: unknown }>).map((t) => [t.name, t.scanMode]));
  assert.deepEqual(byName.fixed, { mode: 'item', why: 'SCAN_MODE is "item"' });
  assert.equal((byName.jellyfin as { mode: string }).mode, 'plugin');
  assert.equal((byName.dead as { mode: string; error: string }).mode, 'auto');
});
