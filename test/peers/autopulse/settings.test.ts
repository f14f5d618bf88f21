import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UserError } from '../../../src/core/errors.ts';
import { parseAutopulseSettings } from '../../../src/peers/autopulse/settings.ts';

/*
 * autopulse's settings schema (github:dan-online/autopulse, crates/service/src/settings/*): its defaults, the
 * manual trigger it adds, and a wrong setting named by its key as the user wrote it.
 */
describe("autopulse's settings schema", () => {
  test('an empty file gets autopulse defaults (app.rs:51-64, auth.rs:16-24, opts.rs:72-87) and the manual trigger (settings/mod.rs:346-357)', () => {
    const s = parseAutopulseSettings({}, 'c.yaml');
    assert.deepEqual(s.app, { hostname: '0.0.0.0', port: 2875, database_url: 'sqlite://data/autopulse.db' });
    assert.deepEqual(s.auth, { username: 'admin', password: 'password' });
    assert.equal(s.opts.default_timer_wait, 60);
    assert.equal(s.opts.webhook_interval, 10);
    assert.deepEqual(Object.keys(s.triggers), ['manual']);
    assert.deepEqual(s.targets, {});
  });

  test("each kind's fields, with serde's defaults: a request timeout of 10 s (targets/mod.rs:229-231), notify recursive and a 2 s debounce (notify.rs:53-72)", () => {
    const s = parseAutopulseSettings(
      {
        targets: { p: { type: 'plex', url: 'http://p', token: 't', rewrite: { from: '^/a', to: '/b' } } },
        triggers: { n: { type: 'notify', paths: ['/m'] }, s: { type: 'sonarr', event_timers: { Download: { wait: 5 } } } },
      },
      'c.yaml',
    );
    const p = s.targets.p!;
    assert.ok(p.type === 'plex');
    assert.equal(p.request.timeout, 10);
    assert.deepEqual(p.rewrite, [{ from: '^/a', to: '/b' }]);
    const n = s.triggers.n!;
    assert.ok(n.type === 'notify');
    assert.equal(n.recursive, true);
    assert.equal(n.debounce, 2);
    const sonarr = s.triggers.s!;
    assert.ok(sonarr.type === 'sonarr');
    assert.deepEqual(sonarr.event_timers, [{ event: 'Download', wait: 5 }]);
  });

  const refused: Array<[string, Record<string, unknown>, RegExp]> = [
    ['a section that is not a mapping', { app: [] }, /^c\.yaml: app: must be a mapping$/],
    ['a port out of range', { app: { port: 70000 } }, /^c\.yaml: app\.port: must be a port number, got 70000$/],
    ['a required field', { targets: { s: { type: 'sonarr', url: 'http://s' } } }, /^c\.yaml: targets\.s\.token: is missing$/],
    ['the second rule of a rewrite list', { targets: { f: { type: 'fileflows', url: 'http://f', rewrite: [{ from: 'a', to: 'b' }, { from: 'c' }] } } }, /^c\.yaml: targets\.f\.rewrite\[1\]: must have from and to$/],
    ['a mention autopulse does not know (discord.rs:27-32)', { webhooks: { d: { type: 'discord', url: 'http://d', mentions: [{ targets: ['someone'] }] } } }, /^c\.yaml: webhooks\.d\.mentions\[0\]\.targets: unknown mention "someone"/],
    ['an unknown webhook type', { webhooks: { w: { type: 'slack', url: 'http://w' } } }, /^c\.yaml: webhooks\.w\.type: unknown webhook type "slack" \(autopulse has discord, hookshot, json\)$/],
    ['a trigger with no type', { triggers: { t: {} } }, /^c\.yaml: triggers\.t\.type: is missing$/],
  ];
  for (const [what, doc, message] of refused) {
    test(`refused, naming the key: ${what}`, () => {
      assert.throws(() => parseAutopulseSettings(doc, 'c.yaml'), (e: Error) => e instanceof UserError && message.test(e.message));
    });
  }
});
