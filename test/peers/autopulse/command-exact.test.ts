import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { importAutopulse } from '../../../src/peers/autopulse/import.ts';
import { figmentValue } from '../../../src/config/figment-value.ts';
import { QueueStore } from '../../../src/queue/store.ts';
import { runCli, tempDir } from '../../helpers/relay.ts';
import { autopulseDb } from '../../helpers/autopulse-db.ts';

/*
 * Issue 48 item 9: import-autopulse is atomic, its printout exact, and AUTOPULSE__ overrides read as autopulse reads
 * them. Configs are written from autopulse's settings code (dan-online/autopulse 55124fd: settings/app.rs,
 * settings/targets/command.rs, settings/targets/emby.rs, settings/triggers/*); rows as its runner writes them, in the
 * table its SQLite migrations make (crates/database/migrations/sqlite/*).
 */

const CONFIG = `
app:
  base_path: /autopulse
triggers:
  sonarr:
    type: sonarr
targets:
  plex:
    type: plex
    url: http://plex:32400
    token: t
  jf:
    type: jellyfin
    url: http://jellyfin:8096
    token: t
    path_match: case_insensitive
  hook:
    type: command
    path: /scripts/on-scan.sh
`;

/** A Sonarr row as triggers.rs:80-96 adds it: found (not a search), due at once. */
const autopulseDbWithOneRow = (file: string) =>
  autopulseDb(file, [{ id: '0b9a3a8e-5b8e-4a43-9d7e-1f2a3b4c5d6e', file_path: '/media/tv/Dark/Season 1/Dark.S01E01.mkv', found_status: 'found' }]);

describe('import-autopulse is atomic: an error writes neither the config nor the queue', () => {
  test('a bad --database leaves nothing behind, and the rerun needs no --force', async () => {
    const dir = tempDir('import-atomic-');
    const yaml = join(dir, 'config.yaml');
    writeFileSync(yaml, CONFIG);
    const out = join(dir, 'config.json');
    const queuefile = join(dir, 'queue.db');
    const notAutopulse = join(dir, 'other.db');
    new Database(notAutopulse).exec('CREATE TABLE x (a)');
    const bad = await runCli(['--config', out, '--queuefile', queuefile, 'import-autopulse', yaml, '--database', notAutopulse]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /not autopulse's database/);
    assert.equal(existsSync(out), false, 'no config written');
    assert.equal(existsSync(queuefile), false, 'no queue written');
    assert.deepEqual(readdirSync(dir).sort(), ['config.yaml', 'other.db'], 'nothing left over');
    const missing = await runCli(['--config', out, '--queuefile', queuefile, 'import-autopulse', yaml, '--database', join(dir, 'nowhere', 'autopulse.db')]);
    assert.notEqual(missing.code, 0);
    assert.equal(existsSync(out), false);

    const good = join(dir, 'autopulse.db');
    autopulseDbWithOneRow(good);
    const rerun = await runCli(['--config', out, '--queuefile', queuefile, 'import-autopulse', yaml, '--database', good]);
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.ok(existsSync(out));
    const store = new QueueStore(queuefile);
    try {
      assert.deepEqual(store.view.listOpen().map((e) => e.folder), ['/media/tv/Dark/Season 1']);
    } finally {
      store.close();
    }
  });
});

describe('the printout is exact', () => {
  const r = importAutopulse(CONFIG, 'config.yaml', {});
  const notes = r.notCarried.join('\n');

  test("a command target's path gets the file, not the folder (command.rs:44-49)", () => {
    assert.match(notes, /targets\.hook\.path: gets the scan's files \(not its folder\)/);
    assert.doesNotMatch(notes, /gets the folder to scan, not the file/);
  });

  test('path_match is about matching, not the refresh mode (emby.rs:44-58, 167-170)', () => {
    assert.doesNotMatch(notes, /path_match[^\n]*refresh mode/);
    assert.ok(r.carried.some((l) => /targets\.jf\.path_match -> PATH_MATCH "case_insensitive"/.test(l)));
  });

  test("app.base_path only moves autopulse's UI (server/src/lib.rs:42-59)", () => {
    assert.match(notes, /app\.base_path: "\/autopulse" moved only autopulse's web UI; its API \(\/triggers\/, \/list, \/status\/, \/stats\) was at the root/);
    assert.doesNotMatch(notes, /strip the prefix/);
  });
});

describe("AUTOPULSE__ overrides are read as figment reads them (figment src/value/parse.rs; autopulse settings/mod.rs:285-289)", () => {
  test("figment's own parse tests", () => {
    // figment's check_simple_values_parse and check_compund_values_parse, replayed.
    const cases: Array<[string, unknown]> = [
      ['true', true],
      ['  false  ', false],
      ['"false"', 'false'],
      [' -2', -2],
      [' 123 ', 123],
      ['   a ', 'a'],
      ['" a  "', ' a  '],
      ['3.14159', 3.14159],
      ['"abc\\td\\n"', 'abc\td\n'],
      ['"hi\\u1234there"', 'hi\u1234there'],
      ['"\\"', '"\\"'],
      ['[1,2,3]', [1, 2, 3]],
      ['{a=b}', { a: 'b' }],
      ['{"a.b.c"=b}', { 'a.b.c': 'b' }],
      ['{a=1,b=hi}', { a: 1, b: 'hi' }],
      ['[1,true,hi,"a "]', [1, true, 'hi', 'a ']],
      ['[[ -1], {a=[ b ]},  hi ]', [[-1], { a: ['b'] }, 'hi']],
    ];
    for (const [raw, want] of cases) assert.deepEqual(figmentValue(raw), want, raw);
  });

  test('bare-word arrays and tables in an import: excludes, filters and a rewrite', () => {
    const r = importAutopulse(CONFIG, 'config.yaml', {
      AUTOPULSE__TRIGGERS__SONARR__EXCLUDES: '[jf, hook]',
      AUTOPULSE__TRIGGERS__SONARR__REWRITE: '{from=/downloads, to=/media}',
      AUTOPULSE__TRIGGERS__SONARR__FILTER__EXCLUDE: '[\\.nfo$, /extras/]',
      AUTOPULSE__AUTH__PASSWORD: '  s3cret  ',
    });
    const sonarr = (r.config.SERVER_AUTOPULSE_TRIGGERS as Record<string, Record<string, unknown>>).sonarr!;
    assert.deepEqual(sonarr.EXCLUDE_TARGETS, ['jf', 'hook']);
    assert.deepEqual(sonarr.REWRITE, [{ from: '/downloads', to: '/media' }]);
    assert.deepEqual(sonarr.EXCLUDE, ['\\.nfo$', '/extras/']);
    assert.equal(r.config.SERVER_AUTH_PASS, 's3cret', 'a bare value is trimmed, as figment trims it');
  });
});
