import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { JsonReceiverFake } from '../fakes/notify-services.ts';
import { FakePlex } from '../fakes/plex.ts';
import { runCli, spawnRelay, tempDir, waitFor, waitForQueueDrained, type RelayProcess } from '../helpers/relay.ts';

/*
 * Issue 41's move, end to end: an autopulse config.yaml is imported, the relay starts from what was written, and
 * the requests autopulse's users send go to the fake servers and the json webhook as autopulse would send them.
 * autopulse's keys: crates/service/src/settings/targets/{plex,jellyfin}.rs (url, token), triggers/mod.rs
 * (excludes: target names the trigger leaves out), webhooks/json.rs:5-42 (the document), opts.rs (check_path,
 * default_timer_wait, webhook_interval); its routes: crates/server/src/routes/triggers.rs (manual: GET ?path=).
 */

const AUTH = { authorization: `Basic ${Buffer.from('pulse:s3cret').toString('base64')}` };

describe('moving from autopulse: import its config.yaml, start the relay, its users\' requests reach every target', () => {
  let plex: FakePlex;
  let jellyfin: FakeMediaServer;
  let sink: JsonReceiverFake;
  let relay: RelayProcess;

  before(async () => {
    plex = await new FakePlex({
      sections: [
        { id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] },
        { id: '2', title: 'TV Shows', type: 'show', locations: ['/data/TV'] },
      ],
    }).start();
    jellyfin = await new FakeMediaServer({ apiKey: 'jf-key', name: 'jellyfin' }).start();
    // jf sees the files under /jf/tv: the relay's path through its two chained rules, applied in turn.
    jellyfin.virtualFolders = [{ Name: 'TV', Locations: ['/jf/tv'] }];
    sink = await new JsonReceiverFake().start();

    const dir = tempDir('autopulse-move-');
    const yaml = join(dir, 'config.yaml');
    writeFileSync(
      yaml,
      [
        'app:',
        '  hostname: 127.0.0.1',
        'auth:',
        '  username: pulse',
        '  password: s3cret',
        'opts:',
        '  check_path: false',
        '  default_timer_wait: 0',
        '  webhook_interval: 1',
        'triggers:',
        '  sonarr:',
        '    type: sonarr',
        '    rewrite:',
        '      from: ^/tv/',
        '      to: /data/TV/',
        '  radarr:',
        '    type: radarr',
        '    excludes: [jf]',
        '    rewrite:',
        '      from: ^/movies/',
        '      to: /data/Movies/',
        'targets:',
        '  plex:',
        '    type: plex',
        `    url: ${plex.url}`,
        `    token: ${plex.token}`,
        '  jf:',
        '    type: jellyfin',
        `    url: ${jellyfin.url}`,
        '    token: jf-key',
        // Two rules, the second matching only what the first wrote: autopulse runs both (utils/src/rewrite.rs:76-85).
        '    rewrite:',
        '      - from: ^/data/',
        '        to: /srv/',
        '      - from: ^/srv/TV/(.*)$',
        '        to: /jf/tv/$1',
        'webhooks:',
        '  sink:',
        '    type: json',
        `    url: ${sink.url}/hook`,
        '',
      ].join('\n'),
    );
    const out = join(dir, 'config.json');
    const imported = await runCli(['import-autopulse', yaml, '--config', out]);
    assert.equal(imported.code, 0, imported.stderr);
    // A free port for the test; everything else as the importer wrote it.
    writeFileSync(out, JSON.stringify({ ...JSON.parse(readFileSync(out, 'utf8')), SERVER_PORT: 0 }));
    relay = await spawnRelay({ dir, configPath: out });
  });
  after(async () => {
    await relay?.kill();
    await Promise.all([plex?.stop(), jellyfin?.stop(), sink?.stop()]);
  });

  test('Sonarr, Radarr and manual requests: each target gets its own scans once, and the json webhook gets autopulse\'s document', async () => {
    const base = relay.base;
    const sonarr = await fetch(`${base}/triggers/sonarr`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ eventType: 'Download', series: { path: '/tv/Severance' }, episodeFile: { relativePath: 'Season 2/Severance.S02E01.mkv' } }),
    });
    assert.equal(sonarr.status, 200, await sonarr.clone().text());
    const radarr = await fetch(`${base}/triggers/radarr`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ eventType: 'Download', movie: { folderPath: '/movies/Heat (1995)' }, movieFile: { relativePath: 'Heat (1995).mkv' } }),
    });
    assert.equal(radarr.status, 200, await radarr.clone().text());
    const manual = await fetch(`${base}/triggers/manual?path=${encodeURIComponent('/data/TV/Dark/Season 1/Dark.S01E01.mkv')}`, { headers: AUTH });
    assert.equal(manual.status, 200, await manual.clone().text());

    await waitFor(() => plex.refreshes().length >= 3 && jellyfin.updates.length >= 2, 60_000, 'every delivery');
    await waitForQueueDrained(relay.queuefile, 60_000);
    assert.deepEqual(plex.refreshes().map((r) => `${r.section} ${r.path}`).sort(), [
      '1 /data/Movies/Heat (1995)',
      '2 /data/TV/Dark/Season 1',
      '2 /data/TV/Severance/Season 2',
    ]);
    // The Radarr trigger excludes jf, as its autopulse `excludes` said.
    assert.deepEqual(jellyfin.updates.map((u) => u.path).sort(), ['/jf/tv/Dark/Season 1/Dark.S01E01.mkv', '/jf/tv/Severance/Season 2/Severance.S02E01.mkv']);

    // The id manual answered is the one /status/<id> knows (routes/status.rs); once sent, it is complete, with
    // the targets it reached (models.rs:104-105), and /list?status=complete lists it among the others.
    const manualId = ((await manual.json()) as { id: string }).id;
    const status = await waitFor(async () => {
      const res = await fetch(`${base}/status/${manualId}`, { headers: AUTH });
      const ev = res.status === 200 ? ((await res.json()) as Record<string, unknown>) : undefined;
      return ev?.process_status === 'complete' ? ev : undefined;
    }, 60_000, 'the manual scan to be complete');
    assert.ok(status);
    assert.deepEqual([status.id, status.event_source, status.file_path, status.targets_hit], [manualId, 'manual', '/data/TV/Dark/Season 1/Dark.S01E01.mkv', 'jf,plex']);
    const listed = (await (await fetch(`${base}/list?status=complete&sort=-created_at`, { headers: AUTH })).json()) as Array<Record<string, unknown>>;
    assert.deepEqual(listed.map((e) => e.event_source), ['sonarr', 'radarr', 'manual']);

    // Five deliveries were done: each is told, in autopulse's json document, once the batch window passed.
    const processed = (): number =>
      sink.calls.flatMap((c) => ((c.json as { events?: Array<{ event: string; file_count: number }> })?.events ?? [])).filter((e) => e.event === 'processed').length;
    await waitFor(() => processed() >= 1, 60_000, 'the json webhook');
    for (const call of sink.calls) {
      const doc = call.json as { events: Array<Record<string, unknown>> };
      assert.deepEqual(Object.keys(doc), ['events'], 'autopulse\'s document has events alone');
      for (const e of doc.events) {
        assert.deepEqual(Object.keys(e).sort(), ['action', 'event', 'file_count', 'files', 'timestamp', 'trigger']);
        assert.equal(e.file_count, (e.files as string[]).length);
      }
    }
  });
});
