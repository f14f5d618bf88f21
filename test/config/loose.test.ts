// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.ts';
import { UserError } from '../../src/core/errors.ts';

// The rule: a config that plex_autoscan started with also starts here, with one warning per loose value.
describe('loose values plex_autoscan accepted', () => {
  test('0 and 1 for booleans (plex_autoscan tests them for truth, e.g. plex.py:138, scan.py:529-532)', () => {
    const { file: config, warnings } = parseConfig({ PLEX_EMPTY_TRASH: 1, USE_SUDO: 0, GOOGLE: { ENABLED: 0, TEAMDRIVE: 1 }, RCLONE: { RC_CACHE_REFRESH: { ENABLED: 1 } } });
    assert.equal(config.PLEX_EMPTY_TRASH, true);
    assert.equal(config.USE_SUDO, false);
    assert.equal(config.GOOGLE.ENABLED, false);
    assert.equal(config.GOOGLE.TEAMDRIVE, true);
    assert.equal(config.RCLONE.RC_CACHE_REFRESH.ENABLED, true);
    for (const key of ['PLEX_EMPTY_TRASH: 1 read as true', 'USE_SUDO: 0 read as false', 'GOOGLE.ENABLED: 0', 'GOOGLE.TEAMDRIVE: 1', 'RCLONE.RC_CACHE_REFRESH.ENABLED: 1']) {
      assert.equal(warnings.filter((w) => w.startsWith(key)).length, 1, `${key} in ${JSON.stringify(warnings)}`);
    }
    // Other numbers and strings are still mistakes, named.
    assert.throws(() => parseConfig({ PLEX_EMPTY_TRASH: 2 }), (e: Error) => e instanceof UserError && /PLEX_EMPTY_TRASH/.test(e.message));
    assert.throws(() => parseConfig({ USE_SUDO: 'yes' }), (e: Error) => e instanceof UserError && /USE_SUDO/.test(e.message));
  });

  test('any PLEX_ANALYZE_TYPE other than off or deep is basic (plex.py:206 analyzes unless "off", plex.py:368 deep only for "deep")', () => {
    for (const value of ['quick', 'Full', '', 'analyze']) {
      const { file: config, warnings } = parseConfig({ PLEX_ANALYZE_TYPE: value });
      assert.equal(config.PLEX_ANALYZE_TYPE, 'basic', value);
      assert.equal(warnings.filter((w) => w.startsWith('PLEX_ANALYZE_TYPE')).length, 1);
    }
    assert.equal(parseConfig({ PLEX_ANALYZE_TYPE: 'OFF' }).file.PLEX_ANALYZE_TYPE, 'off');
    assert.equal(parseConfig({ PLEX_ANALYZE_TYPE: 'Deep' }).file.PLEX_ANALYZE_TYPE, 'deep');
    assert.deepEqual(parseConfig({ PLEX_ANALYZE_TYPE: 'deep' }).warnings, ['SERVER_PASS is not set: using a random one for this run (set it to keep the scan URL stable)']);
  });

  test('GOOGLE.POLL_INTERVAL 0 (scan.py:228 slept 0 s between polls) starts, polling every second', () => {
    const { config, warnings } = parseConfig({ GOOGLE: { POLL_INTERVAL: 0 } });
    assert.equal(config.GOOGLE.POLL_INTERVAL, 1);
    assert.ok(warnings.some((w) => /^GOOGLE\.POLL_INTERVAL: 0 read as 1 s/.test(w)), JSON.stringify(warnings));
    assert.throws(() => parseConfig({ GOOGLE: { ENABLED: true, POLL_INTERVAL: 'often' } }), (e: Error) => /GOOGLE\.POLL_INTERVAL/.test(e.message));
  });

  test('a SERVER_PASS with a space or "/" or over 100 characters is accepted with a warning that shows the URL', () => {
    const spaced = parseConfig({ SERVER_PASS: 'my pass/2' });
    assert.equal(spaced.config.SERVER_PASS, 'my pass/2');
    assert.ok(spaced.warnings.some((w) => w.includes('the scan URL is /my%20pass%2F2')), JSON.stringify(spaced.warnings));
    const long = parseConfig({ SERVER_PASS: 'x'.repeat(150) });
    assert.equal(long.config.SERVER_PASS.length, 150);
    assert.ok(long.warnings.some((w) => /150 characters/.test(w)));
    assert.throws(() => parseConfig({ SERVER_PASS: '' }), (e: Error) => /SERVER_PASS/.test(e.message));
  });

  test('loose values and real mistakes together: the mistake is still named, the input is not changed', () => {
    const input = { PLEX_EMPTY_TRASH: 1, SERVER_PORT: 'x', GOOGLE: { ENABLED: 1 } };
    assert.throws(() => parseConfig(input), (e: Error) => /SERVER_PORT/.test(e.message) && !/PLEX_EMPTY_TRASH/.test(e.message));
    assert.deepEqual(input, { PLEX_EMPTY_TRASH: 1, SERVER_PORT: 'x', GOOGLE: { ENABLED: 1 } });
  });
});
