// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from './helpers/relay.ts';

// docs/autopulse.md lists every difference from autopulse that remains, each with autopulse's file:line (at
// dan-online/autopulse 55124fd) and what the user does about it.

const text = readFileSync(join(ROOT, 'docs', 'autopulse.md'), 'utf8');

function differences(): string[][] {
  const at = text.indexOf('### Every difference that remains');
  assert.ok(at >= 0, 'docs/autopulse.md has the section');
  const lines = text.slice(at).split('\n');
  const head = lines.findIndex((l) => l.startsWith('| difference |'));
  const rows: string[][] = [];
  // The table's rows: from after its header and rule to its first line that is not a row.
  for (const l of lines.slice(head + 2)) {
    if (!l.startsWith('| ')) break;
    rows.push(l.slice(2, -2).split(' | '));
  }
  return rows;
}

test('each remaining difference names where autopulse does it and what the user does', () => {
  const rows = differences();
  assert.ok(rows.length >= 20, `${rows.length} rows`);
  for (const [what, where, todo] of rows) {
    assert.ok(what && where && todo, `three cells: ${what}`);
    assert.match(where!, /\.rs(:\d+(-\d+)?)?|\/ui\//, `autopulse's file for: ${what}`);
    assert.ok(todo!.trim().length > 0, `what to do about: ${what}`);
  }
});

test('the differences this release leaves are all there', () => {
  const table = differences()
    .map((r) => r[0])
    .join('\n');
  for (const topic of [
    'Default credentials',
    'Routes need credentials',
    'Folders, not files',
    'Timers',
    'different timers',
    'Retries',
    'Several rules',
    'Event ids',
    '`/list` lists scans',
    '`found_status`',
    'Held requests',
    "forward target's `hash`",
    "command's `path`",
    'refresh_metadata',
    'recursive: false',
    'debounce',
    'without `filters`',
    'Plex analyze',
    'File checks',
    'Webhook events',
    '`GET /`',
    'config template',
    'web UI',
    'SQLite database is not the queue',
  ]) {
    assert.ok(table.includes(topic), `docs/autopulse.md lists: ${topic}`);
  }
});
