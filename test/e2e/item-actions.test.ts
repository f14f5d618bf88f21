import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakePlex } from '../fakes/plex.ts';
import { runCli, spawnRelay, waitForQueueDrained, type RelayProcess } from '../helpers/relay.ts';
import { AUTH, deliveryRows, RELAY_BASE, startJellyfin, triggers } from '../helpers/targets-e2e.ts';

/*
 * Issue 39 item 5: a file changed in place (Bazarr's subtitles, a transcode) needs its item refreshed or analyzed,
 * not a scan. A request asks with `action=` (manual routes) or its trigger's ACTION; the action is stored with the
 * scan and kept apart from scans. Plex: PUT /library/metadata/{id}/refresh or /analyze of the item(s) at the file
 * (plexapi's refresh()/analyze(); autopulse's plex.rs refresh_item). Jellyfin: POST /Items/{id}/Refresh with the
 * refresh mode as autopulse's emby.rs:349-370 sends it, the item found by Path in its library's items
 * (emby.rs:173-216); no analyze on demand there, so an analyze reports the file as changed (a scan). autoscan's
 * tracker asks for this (#105, #146, #196): it only ever scans.
 */

describe('actions for files changed in place: refresh and analyze of exactly that item', () => {
  let plex: FakePlex;
  let jellyfin: FakeMediaServer;
  let relay: RelayProcess;

  before(async () => {
    plex = await new FakePlex({
      sections: [
        { id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] },
        { id: '2', title: 'TV', type: 'show', locations: ['/data/TV'] },
      ],
    }).start();
    plex.items = [
      { ratingKey: '101', sectionId: '1', type: 'movie', file: '/data/Movies/Heat (1995)/Heat (1995).mkv', addedAt: 1 },
      { ratingKey: '102', sectionId: '1', type: 'movie', file: '/data/Movies/Up (2009)/Up (2009).mkv', addedAt: 2 },
      { ratingKey: '200', sectionId: '2', type: 'show', addedAt: 3 },
      { ratingKey: '201', sectionId: '2', type: 'season', parentRatingKey: '200', addedAt: 3 },
      { ratingKey: '202', sectionId: '2', type: 'episode', parentRatingKey: '201', file: '/data/TV/Dark/Season 1/Dark.S01E01.mkv', addedAt: 4 },
    ];
    jellyfin = await startJellyfin({ movies: ['/media/Movies'], tv: ['/media/TV'] });
    jellyfin.items = [
      { Id: 'jf-heat', Path: '/media/Movies/Heat (1995)/Heat (1995).mkv', library: 'movies' },
      { Id: 'jf-dark1', Path: '/media/TV/Dark/Season 1/Dark.S01E01.mkv', library: 'tv' },
    ];
    relay = await spawnRelay({
      config: {
        ...RELAY_BASE,
        PLEX_LOCAL_URL: plex.url,
        PLEX_TOKEN: plex.token,
        PLEX_ANALYZE_TYPE: 'off',
        TARGETS: { jf: { TYPE: 'jellyfin', URL: jellyfin.url, API_KEY: 'jf-key', REWRITE: [{ from: '^/data/', to: '/media/' }] } },
        // A trigger for transcodes: its requests ask for an analyze.
        SERVER_AUTOSCAN_TRIGGERS: { sonarr: { ACTION: 'analyze' }, radarr: 0 },
      },
    });
  });
  after(async () => {
    await relay?.kill();
    await Promise.all([plex?.stop(), jellyfin?.stop()]);
  });

  test('each target does what was asked for exactly that item; a scan of the same folder stays a scan', async () => {
    const send = triggers(relay.base);
    const heat = '/data/Movies/Heat (1995)/Heat (1995).mkv';
    const answers = await Promise.all([
      send.manual(heat, 'action=refresh'),
      // A plain scan of the same folder: kept apart from the refresh.
      send.manual('/data/Movies/Heat (1995)'),
      // A refresh of a file no server has yet: both scan instead.
      send.manual('/data/Movies/New (2024)/New (2024).mkv', 'action=refresh'),
      // The trigger's ACTION: an analyze of the episode.
      send.sonarr('/data/TV/Dark', 'Season 1/Dark.S01E01.mkv'),
    ]);
    for (const a of answers) assert.equal(a.status, 200, a.text);
    await waitForQueueDrained(relay.queuefile, 120_000);

    const rows = deliveryRows(relay.queuefile);
    assert.ok(rows.every((r) => r.status === 'done'), JSON.stringify(rows));
    assert.deepEqual(
      rows.map((r) => `${r.target} ${r.action} ${r.folder}`).sort(),
      [
        'jf analyze /data/TV/Dark/Season 1',
        'jf refresh /data/Movies/Heat (1995)',
        'jf refresh /data/Movies/New (2024)',
        'jf scan /data/Movies/Heat (1995)',
        'plex analyze /data/TV/Dark/Season 1',
        'plex refresh /data/Movies/Heat (1995)',
        'plex refresh /data/Movies/New (2024)',
        'plex scan /data/Movies/Heat (1995)',
      ].sort(),
    );

    // Plex: one item refresh (Heat), one analyze (the episode), never of another item; partial scans only for
    // the plain scan and the file it does not have.
    assert.deepEqual(plex.callsTo('PUT', /^\/library\/metadata\//).map((c) => c.path).sort(), ['/library/metadata/101/refresh', '/library/metadata/202/analyze']);
    assert.deepEqual(plex.refreshes().map((r) => `${r.section} ${r.path}`).sort(), ['1 /data/Movies/Heat (1995)', '1 /data/Movies/New (2024)']);

    // Jellyfin: the Heat item refreshed with autopulse's modes; the analyze and the unknown file reported as changed.
    assert.deepEqual(jellyfin.itemRefreshes.map((r) => r.id), ['jf-heat']);
    assert.deepEqual(jellyfin.itemRefreshes[0]!.query, { MetadataRefreshMode: 'FullRefresh', ImageRefreshMode: 'FullRefresh', ReplaceAllMetadata: 'true', ReplaceAllImages: 'false', Recursive: 'true' });
    assert.deepEqual(jellyfin.updates.map((u) => u.path).sort(), ['/media/Movies/Heat (1995)', '/media/Movies/New (2024)/New (2024).mkv', '/media/TV/Dark/Season 1/Dark.S01E01.mkv']);
  });

  test('every surface says the action and names the target: scanrelay queue (text and JSON), history, the API and the logs', async () => {
    // Runs after the first test: its scans are finished, in the history.
    const args = ['--config', relay.configPath, '--queuefile', relay.queuefile, 'queue', '--history'];
    const [text, json] = await Promise.all([runCli(args), runCli([...args, '--json'])]);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(json.code, 0, json.stderr);
    const scans = JSON.parse(json.stdout).scans as Array<{ folder: string; action: string; deliveries: Array<{ name: string }> }>;
    assert.deepEqual(
      scans.map((s) => `${s.action} ${s.folder} ${s.deliveries.map((d) => d.name).sort().join(',')}`).sort(),
      ['analyze /data/TV/Dark/Season 1 jf,plex', 'refresh /data/Movies/Heat (1995) jf,plex', 'refresh /data/Movies/New (2024) jf,plex', 'scan /data/Movies/Heat (1995) jf,plex'],
    );
    // The text says a refresh or an analyze under its folder; a plain scan says nothing more.
    const blocks = text.stdout.split(/\n(?= {2}\/)/).slice(1);
    const said = (folder: string) => blocks.filter((b) => b.startsWith(`  ${folder}\n`)).map((b) => /asked: (.*)/.exec(b)?.[1] ?? 'scan');
    assert.deepEqual(said('/data/TV/Dark/Season 1'), ['analyze the media of the items at its files']);
    assert.deepEqual(said('/data/Movies/Heat (1995)').sort(), ['refresh the metadata of the items at its files', 'scan']);

    const history = (await (await fetch(`${relay.base}/api/${relay.secret}/history`, { headers: AUTH })).json()) as { items: Array<{ folder: string; action: string }> };
    assert.deepEqual(history.items.map((i) => `${i.action} ${i.folder}`).sort(), scans.map((s) => `${s.action} ${s.folder}`).sort());

    // The logs: the request says its action, each delivery its target and action.
    const delivered = relay.events().filter((e) => e.msg === 'scan delivered' && e.folder === '/data/TV/Dark/Season 1');
    assert.deepEqual(delivered.map((e) => `${e.target} ${e.action}`).sort(), ['jf analyze', 'plex analyze']);
    assert.ok(relay.events().some((e) => e.msg === 'scan request' && e.source === 'Sonarr' && e.action === 'analyze'));
  });

  test('an unknown action is refused with the words it takes, and nothing is queued', async () => {
    const a = await triggers(relay.base).manual('/data/Movies/Up (2009)', 'action=rescan');
    assert.equal(a.status, 400);
    assert.equal(JSON.parse(a.text).error, 'action must be one of scan, refresh, analyze (got "rescan")');
    assert.ok(!plex.refreshes().some((r) => r.path.includes('Up (2009)')));
  });
});
