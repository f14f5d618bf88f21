// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { parse as parseToml } from 'smol-toml';
import { importAutopulse } from '../../../src/peers/autopulse/import.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/relay.ts';

/*
 * Bazarr connects to scanrelay as it connects to autopulse (morpheus65535/bazarr#3021,
 * bazarr/utilities/autopulse_webhook.py): "Generate Autopulse Configuration" asks GET /api/config-template and reads
 * `{config, version}` (autopulse crates/server/src/routes/config.rs:35-39, 46-90 at dan-online/autopulse 55124fd);
 * then Bazarr sends GET /triggers/bazarr?path=<folder> (routes/triggers.rs:136-189: a bazarr trigger reads a manual
 * query) and tests the connection with GET /stats (routes/stats.rs:22-38).
 */

const AUTH = { authorization: `Basic ${Buffer.from('admin:password').toString('base64')}` };

// A user's autopulse config with Bazarr's trigger (settings/triggers/mod.rs: Trigger::Bazarr takes Manual's fields).
const CONFIG = `
[triggers.bazarr]
type = "bazarr"

[triggers.bazarr.rewrite]
from = "/movies"
to = "/media/movies"

[targets.plex]
type = "plex"
url = "http://plex:32400"
token = "abc"
`;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("Bazarr's autopulse connection, pointed at scanrelay", () => {
  test('config-template answers {config, version} in JSON and TOML, with the asked trigger and target', async () => {
    t = await buildTestApp({ ...importAutopulse(CONFIG, 'config.toml', {}).config, SERVER_QUEUE_URL: undefined });
    const noAuth = await t.app.inject({ method: 'GET', url: '/api/config-template?triggers=bazarr' });
    assert.equal(noAuth.statusCode, 401, 'config.rs:49 needs the credentials');
    const json = await t.app.inject({ method: 'GET', url: '/api/config-template?database=sqlite&triggers=bazarr&targets=plex,plex&output=json', headers: AUTH });
    assert.equal(json.statusCode, 200, json.body);
    const body = json.json() as { config: string; version: string };
    assert.deepEqual(Object.keys(body).sort(), ['config', 'version']);
    assert.equal(typeof body.version, 'string');
    const config = JSON.parse(body.config);
    assert.equal(config.app.database_url, 'sqlite://data/autopulse.db');
    // settings/mod.rs:99-113: autopulse's default manual trigger is in every template; names repeat as name_1 (config.rs:121-130).
    assert.deepEqual(config.triggers, { manual: { type: 'manual' }, bazarr: { type: 'bazarr' } });
    assert.deepEqual(config.targets, { plex: { type: 'plex', url: '{url}', token: '{token}' }, plex_1: { type: 'plex', url: '{url}', token: '{token}' } });

    const toml = await t.app.inject({ method: 'GET', url: '/api/config-template?database=postgres&triggers=bazarr%2C%20notify', headers: AUTH });
    assert.equal(toml.statusCode, 200, toml.body);
    const text = (toml.json() as { config: string }).config;
    const parsed = parseToml(text) as { app: { database_url: string }; triggers: Record<string, unknown> };
    assert.equal(parsed.app.database_url, 'postgres://autopulse:autopulse@localhost:5432/autopulse');
    assert.deepEqual({ ...(parsed.triggers.notify as object) }, { type: 'notify', paths: ['/media'] });
    // What Bazarr generated is an autopulse config that scanrelay's importer reads.
    const imported = importAutopulse(text, 'config.toml', {});
    assert.ok((imported.config.SERVER_AUTOPULSE_TRIGGERS as Record<string, unknown>).bazarr);

    const bad = await t.app.inject({ method: 'GET', url: '/api/config-template?triggers=bazarr,subsonic', headers: AUTH });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /^Invalid trigger types: /);
  });

  test("config-template keeps the relay's guards: the default pair only from home addresses, control characters 400 by name", async () => {
    t = await buildTestApp({ ...importAutopulse(CONFIG, 'config.toml', {}).config, SERVER_QUEUE_URL: undefined });
    // autopulse's default admin/password is accepted only from loopback and private addresses (docs/security.md).
    const away = await t.app.inject({ method: 'GET', url: '/api/config-template?triggers=bazarr', remoteAddress: '203.0.113.5', headers: AUTH });
    assert.equal(away.statusCode, 401, away.body);
    const home = await t.app.inject({ method: 'GET', url: '/api/config-template?triggers=bazarr', remoteAddress: '192.168.1.20', headers: AUTH });
    assert.equal(home.statusCode, 200, home.body);
    // A newline in a query value is refused naming the field, and never echoed back (paths/validate.ts).
    const newline = await t.app.inject({ method: 'GET', url: '/api/config-template?triggers=bazarr%0Aplex', headers: AUTH });
    assert.equal(newline.statusCode, 400);
    assert.match(newline.body, /^Query deserialize error: triggers must not contain a control character/);
    assert.ok(!newline.body.includes('\n'), newline.body);
  });

  test('then GET /triggers/bazarr?path=<folder> queues the folder, and /stats answers', async () => {
    t = await buildTestApp({ ...importAutopulse(CONFIG, 'config.toml', {}).config, SERVER_QUEUE_URL: undefined });
    const stats0 = await t.app.inject({ method: 'GET', url: '/stats' });
    assert.equal(stats0.statusCode, 200);
    const res = await t.app.inject({ method: 'GET', url: `/triggers/bazarr?path=${encodeURIComponent('/movies/Heat (1995)')}`, headers: AUTH });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().file_path, '/media/movies/Heat (1995)');
    assert.equal(res.json().event_source, 'bazarr');
    assert.deepEqual(t.store.view.listOpen().map((e) => e.folder), ['/media/movies/Heat (1995)']);
    // /stats is read at most once a second (its answer is shared meanwhile): the new scan shows within one.
    const app = t.app;
    let stats = await app.inject({ method: 'GET', url: '/stats' });
    await waitFor(async () => (stats = await app.inject({ method: 'GET', url: '/stats' })).json().stats.pending === 1, 5000, 'the scan counted as pending');
    assert.equal(stats.statusCode, 200);
    assert.equal(typeof stats.json().speed, 'number');
  });
});
