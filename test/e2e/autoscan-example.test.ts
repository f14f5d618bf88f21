import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakePlex } from '../fakes/plex.ts';
import { post, postJson, ROOT, runCli, spawnRelay, tempDir, waitFor, waitForQueueDrained, type RelayProcess } from '../helpers/relay.ts';

/*
 * docs/autoscan.md's example, end to end: its config.yml goes through `scanrelay import-autoscan`, the relay
 * runs on the result, and a Sonarr and a Radarr webhook, a manual request and an A-Train event each reach
 * Plex (in every library over the folder) and Jellyfin once, each with its own path. Checked against
 * autoscan: a trigger's rewrite takes its paths to autoscan's own (triggers/sonarr/sonarr.go:95-110,
 * radarr.go), each target rewrites for itself (targets/plex/plex.go:79, targets/jellyfin/jellyfin.go:68),
 * and Plex scans every library whose location holds the folder (targets/plex/plex.go:91-123).
 */

/** The ```yaml block of docs/autoscan.md under "## Example", as a user would copy it. */
function docsExample(): string {
  const doc = readFileSync(join(ROOT, 'docs', 'autoscan.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Example'));
  const m = /```yaml\n([\s\S]*?)```/.exec(section);
  assert.ok(m, 'docs/autoscan.md has an example config.yml');
  return m[1]!;
}

const AUTH = { authorization: `Basic ${Buffer.from('hello there:general kenobi').toString('base64')}` };

describe("docs/autoscan.md's example: imported, then every trigger reaches every target with its own path", () => {
  let plex: FakePlex;
  let jellyfin: FakeMediaServer;
  let relay: RelayProcess;
  let printed = '';

  before(async () => {
    plex = await new FakePlex({
      sections: [
        { id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] },
        { id: '2', title: 'Movies 4K', type: 'movie', locations: ['/data/Movies'] },
        { id: '3', title: 'TV Shows', type: 'show', locations: ['/data/TV'] },
      ],
    }).start();
    jellyfin = await new FakeMediaServer({ apiKey: 'jellyfin-key', name: 'jellyfin' }).start();
    jellyfin.virtualFolders = [
      { Name: 'Movies', Locations: ['/media/Movies'] },
      { Name: 'TV', Locations: ['/media/TV'] },
    ];
    const dir = tempDir('scanrelay-autoscan-example-');
    const yml = join(dir, 'config.yml');
    writeFileSync(
      yml,
      docsExample()
        .replace('http://plex:32400', plex.url)
        .replace('plex-token', plex.token)
        .replace('http://jellyfin:8096', jellyfin.url)
        .replace('minimum-age: 10m', 'minimum-age: 0s'),
    );
    const out = await runCli(['--config', join(dir, 'config.json'), 'import-autoscan', yml]);
    assert.equal(out.code, 0, out.stderr);
    // What a user reads for the example as it is (minimum-age 10m).
    const asIs = join(dir, 'as-is.yml');
    writeFileSync(asIs, docsExample());
    const shown = await runCli(['--config', join(dir, 'as-is.json'), 'import-autoscan', asIs]);
    assert.equal(shown.code, 0, shown.stderr);
    printed = shown.stdout;
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    relay = await spawnRelay({ config: { ...config, SERVER_PORT: 0, SERVER_IP: '127.0.0.1', PLEX_ANALYZE_TYPE: 'off' } });
  });
  after(async () => {
    await relay?.kill();
    await Promise.all([plex?.stop(), jellyfin?.stop()]);
  });

  test('the importer lists what differs and never claims everything was carried over', () => {
    assert.doesNotMatch(printed, /everything was carried over|every setting was carried over/);
    assert.match(printed, /never later than 3x that \(1800 s\).*SERVER_SCAN_DELAY_MAX to 0/);
  });

  test('Sonarr, Radarr, manual and A-Train: Plex in every matching library and Jellyfin, once each, each with its own path', async () => {
    const base = relay.base;
    const sonarr = await postJson(`${base}/triggers/sonarr`, { eventType: 'Download', series: { path: '/data/Severance' }, episodeFile: { relativePath: 'Season 2/Severance.S02E01.mkv' } }, AUTH);
    assert.equal(sonarr.status, 200, sonarr.text);
    const radarr = await postJson(`${base}/triggers/radarr`, { eventType: 'Download', movie: { folderPath: '/data/Box Film (2001)' }, movieFile: { relativePath: 'Box Film (2001).mkv' } }, AUTH);
    assert.equal(radarr.status, 200, radarr.text);
    const manual = await post(`${base}/triggers/manual?dir=${encodeURIComponent('/mnt/unionfs/Media/Movies/Heat (1995)')}`, '', 'application/x-www-form-urlencoded', AUTH);
    assert.equal(manual.status, 200, manual.text);
    const aTrain = await postJson(`${base}/triggers/a-train/0A1xxxxxxxxxUk9PVA`, { Created: ['/mnt/unionfs/Media/TV/Dark/Season 1'] }, AUTH);
    assert.equal(aTrain.status, 200, aTrain.text);
    await waitForQueueDrained(relay.queuefile, 30_000);
    await waitFor(() => plex.refreshes().length >= 6 && jellyfin.updates.length >= 4, 20_000, 'every delivery');

    const plexScans = plex.refreshes().map((r) => `${r.section} ${r.path}`).sort();
    assert.deepEqual(plexScans, [
      '1 /data/Movies/Box Film (2001)',
      '1 /data/Movies/Heat (1995)',
      '2 /data/Movies/Box Film (2001)',
      '2 /data/Movies/Heat (1995)',
      '3 /data/TV/Dark/Season 1',
      '3 /data/TV/Severance/Season 2',
    ]);
    assert.deepEqual(jellyfin.updates.map((u) => u.path).sort(), [
      '/media/Movies/Box Film (2001)/Box Film (2001).mkv',
      '/media/Movies/Heat (1995)',
      '/media/TV/Dark/Season 1',
      '/media/TV/Severance/Season 2/Severance.S02E01.mkv',
    ]);
  });
});
