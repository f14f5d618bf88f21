import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { resolveSettings } from '../../src/config/settings.ts';
import { FakeGoogle } from '../fakes/google.ts';
import { FakePlex } from '../fakes/plex.ts';
import { ROOT, spawnRelay, tempDir, waitFor, waitForQueueDrained } from '../helpers/relay.ts';

/*
 * plex_autoscan as it is installed: /opt/plex_autoscan/scan.py, its config in config/config.json, and
 * queue.db and cache.db beside scan.py (config.py:91-117 default every file to the folder of sys.argv[0]).
 * The fixtures are files real peewee and sqlitedict wrote (test/fixtures/plex-autoscan/make_fixtures.py).
 */
const FIXTURES = join(ROOT, 'test', 'fixtures', 'plex-autoscan');

function plexAutoscanInstall(): { home: string; config: string } {
  const home = join(tempDir('scanrelay-layout-'), 'plex_autoscan');
  mkdirSync(join(home, 'config'), { recursive: true });
  writeFileSync(join(home, 'scan.py'), '#!/usr/bin/env python3\n');
  copyFileSync(join(FIXTURES, 'queue.db'), join(home, 'queue.db'));
  copyFileSync(join(FIXTURES, 'cache.db'), join(home, 'cache.db'));
  return { home, config: join(home, 'config', 'config.json') };
}

describe("plex_autoscan's own layout", () => {
  const stops: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  test('the defaults are the files beside scan.py; the variables and options still win; elsewhere, beside the config', () => {
    const { home, config } = plexAutoscanInstall();
    const s = resolveSettings({ config }, {});
    assert.equal(s.queuefile, join(home, 'queue.db'));
    assert.equal(s.cachefile, join(home, 'cache.db'));
    assert.equal(s.tokenfile, join(home, 'config', 'token.json'));
    assert.match(s.layout!, /plex_autoscan's layout .*scan\.py.*: using its queue .*queue\.db and cache .*cache\.db/);
    const env = resolveSettings({ config }, { PLEX_AUTOSCAN_QUEUEFILE: '/srv/q.db', PLEX_AUTOSCAN_CACHEFILE: '/srv/c.db' });
    assert.deepEqual([env.queuefile, env.cachefile, env.layout], ['/srv/q.db', '/srv/c.db', undefined]);
    // A scanrelay queue already beside the config (a relay ran here before) stays in use: no queued scan is left behind.
    writeFileSync(join(home, 'config', 'queue.db'), '');
    const kept = resolveSettings({ config }, {});
    assert.equal(kept.queuefile, join(home, 'config', 'queue.db'));
    assert.match(kept.layout!, /stay in use; take plex_autoscan's over with "scanrelay import-plex-autoscan --from-queue .*queue\.db/);
    // No scan.py beside config/: not plex_autoscan's layout.
    const other = join(tempDir(), 'config', 'config.json');
    assert.equal(resolveSettings({ config: other }, {}).queuefile, join(other, '..', 'queue.db'));
  });

  test('scanrelay server --config <home>/config/config.json takes over the pending rows of queue.db and the drive state of cache.db, and logs it', async () => {
    const { home, config } = plexAutoscanInstall();
    const plex = await new FakePlex().start();
    const google = await new FakeGoogle().start();
    stops.push(() => plex.stop(), () => google.stop());
    google.refreshTokens.set('1//plex-autoscan-refresh', google.client.id);
    google.seed({ id: 'media', name: 'Media', parents: [google.rootId] });
    google.seed({ id: 'movies', name: 'Movies', parents: ['media'] });
    writeFileSync(
      config,
      JSON.stringify({
        SERVER_IP: '127.0.0.1',
        SERVER_PORT: 0,
        SERVER_PASS: 'layout-secret',
        SERVER_FILE_CHECKS_ENABLED: false,
        SERVER_SCAN_DELAY: 1,
        PLEX_LOCAL_URL: plex.url,
        PLEX_TOKEN: plex.token,
        PLEX_ANALYZE_TYPE: 'off',
        SERVER_PATH_MAPPINGS: { '/data/': ['My Drive/Media/'] },
        GOOGLE: { ENABLED: true, ...google.configKeys(), POLL_INTERVAL: 0.5, ALLOWED: { FILE_PATHS: ['My Drive/Media/'] } },
      }),
    );
    const relay = await spawnRelay({ configPath: config, dir: home, expectQueuefile: join(home, 'queue.db') });
    stops.push(() => relay.kill());
    const layout = relay.events().find((e) => /^plex_autoscan's layout/.test(e.msg ?? ''));
    assert.ok(layout, 'the layout is logged');
    assert.equal(layout.queuefile, join(home, 'queue.db'));
    const queue = await relay.waitForLog((e) => /took over plex_autoscan's queue/.test(e.msg ?? ''));
    assert.match(queue.msg, new RegExp(`took over plex_autoscan's queue ${join(home, 'queue.db').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: 4 pending scan\\(s\\), 3 queued`));
    const drive = await relay.waitForLog((e) => /took over plex_autoscan's drive state/.test(e.msg ?? ''));
    assert.match(drive.msg, new RegExp(`from ${join(home, 'cache.db').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the OAuth token`));
    assert.match(drive.msg, /page token of My Drive \(1\)/);

    await waitFor(() => plex.refreshes().length >= 2, 20_000, 'the taken-over scans');
    await waitForQueueDrained(join(home, 'queue.db'));
    const paths = plex.refreshes().map((r) => r.path);
    for (const folder of ['/data/TV/Show/Season 1', '/data/Movies']) assert.ok(paths.includes(folder), `${folder} in ${paths}`);
    // scanrelay's tables went into plex_autoscan's files beside them; nothing new appeared beside the config.
    assert.ok(!existsSync(join(home, 'config', 'queue.db')));
    const db = new Database(join(home, 'queue.db'), { readonly: true });
    assert.equal((db.prepare('SELECT count(*) AS n FROM queueitemmodel').get() as { n: number }).n, 4, "plex_autoscan's rows are only read");
    db.close();
  });
});
