import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfigFile, parseConfig } from '../../src/config/load.ts';
import { pythonInt } from '../../src/config/python-int.ts';
import { priorityOf } from '../../src/paths/rules.ts';
import { postForm, spawnRelay, tempDir } from '../helpers/relay.ts';

/** A config file written as text, so its key order is the one a user wrote (JSON.stringify would reorder "2", "1"). */
function configFile(text: string): string {
  const file = join(tempDir(), 'config.json');
  writeFileSync(file, text);
  return file;
}

describe('SERVER_SCAN_PRIORITIES in the order of the file', () => {
  // utils.py:170-174: `for priority, paths in config['SERVER_SCAN_PRIORITIES'].items()` walks the dict in the
  // order json.load read it, and returns the first entry with a matching substring.
  test('the first matching entry of the file wins, even when a smaller integer key comes later', () => {
    const file = configFile('{"SERVER_SCAN_PRIORITIES": {"2": ["/TV/"], "1": ["/TV/Kids/"], "0": ["/Movies/"]}}');
    const { config } = loadConfigFile(file, {});
    assert.deepEqual(config.SERVER_SCAN_PRIORITIES.map((e) => e.key), ['2', '1', '0']);
    assert.equal(priorityOf(config.SERVER_SCAN_PRIORITIES, '/data/TV/Kids/Bluey'), 2);
    assert.equal(priorityOf(config.SERVER_SCAN_PRIORITIES, '/data/Movies/Heat (1995)'), 0);
    assert.equal(priorityOf(config.SERVER_SCAN_PRIORITIES, '/data/Music/x'), 0);
  });

  test('an environment override keeps the order of its own text (config.py:272-276 decodes it as JSON)', () => {
    const file = configFile('{"SERVER_SCAN_PRIORITIES": {"0": ["/TV/"]}}');
    const { config } = loadConfigFile(file, { SERVER_SCAN_PRIORITIES: '{"10": ["/TV/"], "3": ["/TV/"]}' });
    assert.deepEqual(config.SERVER_SCAN_PRIORITIES.map((e) => e.key), ['10', '3']);
    assert.equal(priorityOf(config.SERVER_SCAN_PRIORITIES, '/data/TV/Dark'), 10);
  });
});

describe('configs plex_autoscan starts with also start here, with a warning where a value is odd', () => {
  test("a priority key that is not a whole number: priority 0 where it matches, and the search stops there (utils.py:168-178)", () => {
    // int(priority) raises inside the loop; the except returns 0 at once, so no later entry is tried.
    const file = configFile('{"SERVER_SCAN_PRIORITIES": {"high": ["/Movies/"], "5": ["/Movies/4K/"], " 3 ": ["/TV/"]}}');
    const { config, warnings } = loadConfigFile(file, {});
    assert.equal(priorityOf(config.SERVER_SCAN_PRIORITIES, '/data/Movies/4K/Heat'), 0);
    // Python's int() takes blanks around the digits.
    assert.equal(priorityOf(config.SERVER_SCAN_PRIORITIES, '/data/TV/Dark'), 3);
    assert.equal(warnings.filter((w) => w.includes('SERVER_SCAN_PRIORITIES: key "high" is not a whole number')).length, 1);
    assert.deepEqual(['7', '-2', '+4', '1_0', ' 8\n', '1.5', 'x', '', '1__0'].map(pythonInt), [7, -2, 4, 10, 8, undefined, undefined, undefined, undefined]);
  });

  test('"PLEX_TOKEN": null is no token; SERVER_PASS as a number is its digits; SERVER_MAX_FILE_CHECKS -1 is one check', () => {
    const { file: config, warnings } = parseConfig({ PLEX_TOKEN: null, SERVER_PASS: 90210, SERVER_MAX_FILE_CHECKS: -1, RUN_COMMAND_AFTER_SCAN: null });
    assert.equal(config.PLEX_TOKEN, '');
    assert.equal(config.RUN_COMMAND_AFTER_SCAN, '');
    assert.equal(config.SERVER_PASS, '90210');
    // plex.py:68-99: check 1; the file is missing; `checks >= SERVER_MAX_FILE_CHECKS` holds at once: given up,
    // exactly what 0 does (README: 0 checks means one check).
    assert.equal(config.SERVER_MAX_FILE_CHECKS, 0);
    for (const w of ['PLEX_TOKEN: null read as not set', 'SERVER_PASS: the number 90210 read as the text "90210"', 'SERVER_MAX_FILE_CHECKS: -1 read as 0']) {
      assert.equal(warnings.filter((x) => x.startsWith(w)).length, 1, `${w} in ${JSON.stringify(warnings)}`);
    }
  });

  test('wrong types inside a GOOGLE section with ENABLED false are ignored (scan.py:187-231 reads them only when monitoring starts)', () => {
    const { config, warnings } = parseConfig({ GOOGLE: { ENABLED: false, POLL_INTERVAL: 'often', TEAMDRIVE: 'false', TEAMDRIVES: 'none', ALLOWED: { FILE_PATHS: 'x' } } });
    assert.equal(config.GOOGLE.POLL_INTERVAL, 120);
    assert.equal(config.GOOGLE.TEAMDRIVE, false);
    assert.deepEqual(config.GOOGLE.TEAMDRIVES, []);
    assert.deepEqual(config.GOOGLE.ALLOWED.FILE_PATHS, []);
    for (const key of ['GOOGLE.POLL_INTERVAL', 'GOOGLE.TEAMDRIVE:', 'GOOGLE.TEAMDRIVES', 'GOOGLE.ALLOWED.FILE_PATHS']) {
      assert.equal(warnings.filter((w) => w.startsWith(key) && w.includes('while GOOGLE.ENABLED is false')).length, 1, `${key} in ${JSON.stringify(warnings)}`);
    }
    // A number written as text is read as the number, monitoring on or off; with monitoring on, other mistakes are still named.
    assert.equal(parseConfig({ GOOGLE: { ENABLED: false, POLL_INTERVAL: '60' } }).config.GOOGLE.POLL_INTERVAL, 60);
    const on = parseConfig({ GOOGLE: { ENABLED: true, POLL_INTERVAL: '60' } });
    assert.equal(on.config.GOOGLE.POLL_INTERVAL, 60);
    assert.ok(on.warnings.some((w) => w.startsWith('GOOGLE.POLL_INTERVAL: the text "60" read as 60 s')), JSON.stringify(on.warnings));
    assert.throws(() => parseConfig({ GOOGLE: { ENABLED: true, TEAMDRIVE: 'false' } }), /GOOGLE\.TEAMDRIVE/);
  });

  test('the relay, started as a user starts it, serves such a config', async (t) => {
    const file = configFile(`{
  "SERVER_IP": "127.0.0.1",
  "SERVER_PORT": 0,
  "SERVER_PASS": 90210,
  "PLEX_TOKEN": null,
  "SERVER_ALLOW_MANUAL_SCAN": true,
  "SERVER_SCAN_DELAY": 600,
  "SERVER_MAX_FILE_CHECKS": -1,
  "SERVER_SCAN_PRIORITIES": {"2": ["/TV/"], "1": ["/TV/Kids/"], "high": ["/Movies/"], "0": ["/Movies/4K/"]},
  "GOOGLE": {"ENABLED": false, "POLL_INTERVAL": "60", "TEAMDRIVE": "false"}
}
`);
    const relay = await spawnRelay({ configPath: file });
    t.after(() => relay.kill());
    const warned = relay.events().filter((e) => e.level === 40).map((e) => String(e.msg));
    for (const w of ['PLEX_TOKEN: null', 'SERVER_PASS: the number 90210', 'SERVER_MAX_FILE_CHECKS: -1', 'key "high"', 'GOOGLE.POLL_INTERVAL', 'GOOGLE.TEAMDRIVE']) {
      assert.ok(warned.some((m) => m.includes(w)), `${w} in ${JSON.stringify(warned)}`);
    }
    assert.match(relay.url, /\/90210$/);
    for (const path of ['/data/TV/Kids/Bluey/Bluey.S01E01.mkv', '/data/Movies/4K/Heat (1995)/Heat.mkv']) {
      const res = await postForm(relay.url, { eventType: 'Manual', filepath: path });
      assert.equal(res.status, 200, res.text);
    }
    const queue = await (await fetch(`${relay.base}/api/90210/queue`)).json();
    const priority = Object.fromEntries(queue.items.map((i: { folder: string; priority: number }) => [i.folder, i.priority]));
    assert.deepEqual(priority, { '/data/TV/Kids/Bluey': 2, '/data/Movies/4K/Heat (1995)': 0 });
  });
});
