import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli, tempDir } from '../helpers/relay.ts';

/*
 * `scanrelay map` answers "where would this path go?" for every named target (issue 39): the folder each target
 * is sent after its own REWRITE (and REWRITE_MODE), and what leaves a target out: the trigger's TARGETS or
 * EXCLUDE_TARGETS, or the target's INCLUDE/EXCLUDE matched on its own path (queue/route.ts, as the queue decides).
 * Nothing listens on 127.0.0.1:1: map says the Plex section lookup failed and goes on.
 */
const DEAD = 'http://127.0.0.1:1';
const MEDIA = '^/mnt/unionfs/Media/';

function writeConfig(): string {
  const file = join(tempDir('map-'), 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      PLEX_LOCAL_URL: DEAD,
      PLEX_TOKEN: 'plex-token',
      PLEX_REWRITE: [{ from: MEDIA, to: '/data/' }],
      JELLYFIN: { ENABLED: true, URL: DEAD, API_KEY: 'jf', REWRITE: [{ from: MEDIA, to: '/media/' }] },
      TARGETS: {
        // Two rules, each in turn (REWRITE_MODE all): /mnt/unionfs/Media/TV/x -> /m/TV/x -> /4k/tv/x.
        plex4k: { TYPE: 'plex', URL: DEAD, TOKEN: 'p4k', REWRITE: [{ from: MEDIA, to: '/m/' }, { from: '^/m/TV/', to: '/4k/tv/' }], REWRITE_MODE: 'all' },
        abs: { TYPE: 'audiobookshelf', URL: DEAD, TOKEN: 'abs', REWRITE: [{ from: MEDIA, to: '/audiobooks/' }], INCLUDE: ['^/audiobooks/Books/'] },
        tdarr: { TYPE: 'tdarr', URL: DEAD, DB_ID: 'lib1', EXCLUDE: ['\\.srt$'] },
        hook: { TYPE: 'command', COMMAND: ['/bin/true'] },
      },
      SERVER_AUTOSCAN_TRIGGERS: {
        sonarr: { REWRITE: [{ from: '^/data/', to: '/mnt/unionfs/Media/TV/' }], EXCLUDE_TARGETS: ['hook'] },
        radarr: { TARGETS: ['plex', 'abs'] },
      },
    }),
  );
  return file;
}

describe('scanrelay map: every named target, the folder it is sent and what leaves it out', () => {
  test("text: each target's own path, and the key (with the pattern) that leaves one out", async () => {
    const file = writeConfig();
    const r = await runCli(['--config', file, 'map', '--trigger', 'sonarr', '/data/Dark/Season 1/e1.srt']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      r.stdout.split('\n').filter((l) => l.startsWith('target:')),
      [
        'target:  plex (plex): /data/TV/Dark/Season 1 (its own REWRITE), sent',
        'target:  jellyfin (jellyfin): /media/TV/Dark/Season 1 (its own REWRITE), sent',
        'target:  plex4k (plex): /4k/tv/Dark/Season 1 (its own REWRITE), sent',
        'target:  abs (audiobookshelf): /audiobooks/TV/Dark/Season 1 (its own REWRITE), left out by TARGETS.abs.INCLUDE: none of "^/audiobooks/Books/" matches /audiobooks/TV/Dark/Season 1/e1.srt',
        'target:  tdarr (tdarr): /mnt/unionfs/Media/TV/Dark/Season 1, left out by TARGETS.tdarr.EXCLUDE: "\\.srt$" matches /mnt/unionfs/Media/TV/Dark/Season 1/e1.srt',
        'target:  hook (command): /mnt/unionfs/Media/TV/Dark/Season 1, left out by SERVER_AUTOSCAN_TRIGGERS.sonarr.EXCLUDE_TARGETS',
      ],
    );
    assert.match(r.stdout, /section: none \(/);
    assert.doesNotMatch(r.stdout, /^route:/m);
  });

  test('--json keeps its fields and adds targets and sentTo; a trigger\'s TARGETS and a path no target takes', async () => {
    const file = writeConfig();
    const r = await runCli(['--config', file, 'map', '--json', '--trigger', 'radarr', '/mnt/unionfs/Media/Books/Dune/dune.m4b']);
    assert.equal(r.code, 0, r.stderr);
    const json = JSON.parse(r.stdout);
    // The fields scripts read before targets had names.
    for (const key of ['input', 'trigger', 'afterTrigger', 'servers', 'rewrites', 'mapped', 'match', 'folder', 'section', 'sectionError']) assert.ok(key in json, key);
    assert.deepEqual(json.servers, { plex: '/data/Books/Dune', jellyfin: '/media/Books/Dune', emby: '/mnt/unionfs/Media/Books/Dune' });
    assert.equal(json.folder, '/mnt/unionfs/Media/Books/Dune');
    assert.deepEqual(json.sentTo, ['plex', 'abs']);
    const byName = Object.fromEntries((json.targets as Array<{ name: string; leftOutBy: unknown }>).map((t) => [t.name, t]));
    assert.deepEqual(Object.keys(byName), ['plex', 'jellyfin', 'plex4k', 'abs', 'tdarr', 'hook']);
    assert.deepEqual(byName.abs, { name: 'abs', type: 'audiobookshelf', path: '/audiobooks/Books/Dune', checked: '/audiobooks/Books/Dune/dune.m4b', sent: true, leftOutBy: null });
    assert.deepEqual(byName.plex4k, {
      name: 'plex4k', type: 'plex', path: '/m/Books/Dune', checked: '/m/Books/Dune/dune.m4b', sent: false, leftOutBy: { key: 'SERVER_AUTOSCAN_TRIGGERS.radarr.TARGETS' },
    });
    assert.deepEqual(byName.tdarr.leftOutBy, { key: 'SERVER_AUTOSCAN_TRIGGERS.radarr.TARGETS' });

    // No trigger, a subtitle: tdarr's EXCLUDE and abs's INCLUDE leave them out, each with its pattern(s).
    const srt = JSON.parse((await runCli(['--config', file, 'map', '--json', '/mnt/unionfs/Media/TV/Dark/e1.srt'])).stdout);
    assert.deepEqual(srt.sentTo, ['plex', 'jellyfin', 'plex4k', 'hook']);
    assert.deepEqual(srt.targets.find((t: { name: string }) => t.name === 'tdarr').leftOutBy, { key: 'TARGETS.tdarr.EXCLUDE', pattern: '\\.srt$' });
    assert.deepEqual(srt.targets.find((t: { name: string }) => t.name === 'abs').leftOutBy, { key: 'TARGETS.abs.INCLUDE', patterns: ['^/audiobooks/Books/'] });
  });

  test('a path no target takes: map says the relay would answer "ignored"', async () => {
    const file = join(tempDir('map-'), 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        PLEX_ENABLED: false,
        TARGETS: { abs: { TYPE: 'audiobookshelf', URL: DEAD, TOKEN: 'abs', INCLUDE: ['^/books/'] } },
      }),
    );
    const r = await runCli(['--config', file, 'map', '/tv/Dark/e1.mkv']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^target: {2}abs \(audiobookshelf\): \/tv\/Dark, left out by TARGETS\.abs\.INCLUDE: none of "\^\/books\/" matches \/tv\/Dark\/e1\.mkv$/m);
    assert.match(r.stdout, /^route: {3}no target takes it: the relay would answer this request "ignored"$/m);
    // A folder, written with its trailing slash, is matched as the folder (no file).
    const folder = JSON.parse((await runCli(['--config', file, 'map', '--json', '/books/Dune/'])).stdout);
    assert.deepEqual([folder.folder, folder.targets[0].checked, folder.sentTo], ['/books/Dune', '/books/Dune', ['abs']]);
  });
});
