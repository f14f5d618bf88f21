// unit set (npm run test:unit): in process; no child process, no port, no database
// Issue 35 item 7: the commands and figures the docs state, checked against what they describe (the Dockerfile,
// package.json, the systemd unit, bench/README.md), so that the two cannot drift apart again.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, startCommand, startNodeFlags } from './helpers/relay.ts';

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const docs = Object.fromEntries(['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)].map((f) => [f, read(f)]));
/** Markdown text with line breaks inside paragraphs joined, so a sentence can be matched whole. */
const flat = (text: string) => text.replace(/\n(?!\n)\s*/g, ' ');
const dockerfile = read('Dockerfile').replace(/\\\n/g, ' ');

/** The JSON array of a Dockerfile instruction (CMD, or HEALTHCHECK's CMD). */
function dockerCmd(op: 'CMD' | 'HEALTHCHECK'): string[] {
  const line = dockerfile.split('\n').find((l) => l.startsWith(`${op} `))!;
  return JSON.parse(line.replace(/^.*?CMD\s+/, '')) as string[];
}

test('every `CMD [...]` the docs show is the Dockerfile\'s CMD, and it runs what `npm start` runs', () => {
  const cmd = dockerCmd('CMD');
  let shown = 0;
  for (const [file, text] of Object.entries(docs)) {
    for (const m of text.matchAll(/`CMD (\[[^\]`]*\])`/g)) {
      shown++;
      assert.deepEqual(JSON.parse(m[1]!), cmd, `${file}: ${m[0]}`);
    }
  }
  assert.ok(shown >= 1, 'docs/docker.md shows the CMD');
  assert.equal(cmd.join(' '), startCommand());
});

test('the command the docs say npm start, the Dockerfile and the unit run is package.json\'s start script', () => {
  const stated = /`npm start`, the Dockerfile and the systemd unit run the server as `([^`]+)`/.exec(flat(docs['README.md']!));
  assert.ok(stated, 'README states the start command');
  assert.equal(stated[1], startCommand());
  // Each statement of the young generation's size matches the flag every start command passes.
  const semi = Number(/--max-semi-space-size=(\d+)/.exec(startNodeFlags().join(' '))![1]);
  for (const [file, text] of Object.entries(docs)) {
    for (const m of flat(text).matchAll(/young generation at (\d+) MB/g)) assert.equal(Number(m[1]), semi, `${file}: ${m[0]}`);
  }
});

test("docs/systemd.md shows the unit's ExecStart as it is", () => {
  const exec = /^ExecStart=(.*)$/m.exec(read('system/scanrelay.service'))![1]!;
  const shown = /The unit runs\s+```\n([^\n]+)\n```/.exec(docs['docs/systemd.md']!);
  assert.ok(shown, 'docs/systemd.md shows the command');
  assert.equal(shown[1], exec);
});

test("docs/docker.md's health check interval and build steps are the Dockerfile's", () => {
  const text = flat(docs['docs/docker.md']!);
  const every = /`HEALTHCHECK` runs `scanrelay health` every (\d+) s/.exec(text);
  assert.ok(every);
  assert.match(dockerfile, new RegExp(`HEALTHCHECK --interval=${every[1]}s `));
  assert.deepEqual(dockerCmd('HEALTHCHECK'), ['node', 'bin/scanrelay.js', 'health']);
  // "a build stage runs `npm ci` ..., then `npm prune --omit=dev`": the install docs/systemd.md and the README show.
  assert.match(text, /a build stage runs `npm ci`.*then `npm prune --omit=dev`/);
  assert.match(dockerfile, /^RUN (?:\w+="\$\w+" )?npm ci && npm prune --omit=dev\b/m);
  assert.match(flat(read('docs/systemd.md')), /npm ci && npm prune --omit=dev/);
  assert.match(flat(read('README.md')), /`npm ci && npm prune --omit=dev`/);
});

/** The numbers in the cell of bench/README.md's memory table, for the row and column named. */
function benchCell(rowStart: string, column: RegExp): number[] {
  const bench = read('bench/README.md');
  const section = bench.slice(bench.indexOf('### Memory beside plex_autoscan'));
  const rows = section.split('\n').filter((l) => l.startsWith('|'));
  const header = rows[0]!.split('|').map((c) => c.trim());
  const col = header.findIndex((c) => column.test(c));
  assert.ok(col > 0, `column ${column} in the memory table`);
  const row = rows.find((r) => r.startsWith(`| ${rowStart}`));
  assert.ok(row, `row "${rowStart}" in the memory table`);
  // "**61.9, 61.7 MB**" or "79 MB (the load ...)": the figures before any remark in parentheses.
  return [...row.split('|')[col]!.split('(')[0]!.matchAll(/\d+(?:\.\d+)?/g)].map((m) => Number(m[0]));
}

test('the idle memory the docs state is the latest bench figure (bench/README.md), and plex_autoscan\'s is the measured one', () => {
  const now = benchCell('scanrelay now', /^idle/);
  assert.ok(now.length > 0);
  const mean = now.reduce((a, b) => a + b, 0) / now.length;
  let stated = 0;
  for (const [file, text] of Object.entries(docs)) {
    for (const m of flat(text).matchAll(/about (\d+(?:\.\d+)?) MB idle/g)) {
      stated++;
      assert.ok(Math.abs(Number(m[1]) - mean) <= 1, `${file}: "${m[0]}" but bench/README.md measured ${now.join(', ')} MB`);
    }
    assert.doesNotMatch(flat(text), /idle one settles near \d+ MB/, `${file}: an idle figure in another wording`);
  }
  assert.ok(stated >= 2, 'README and docs/docker.md both state the idle figure');
  const theirs = benchCell('plex_autoscan', /^idle/);
  const readme = /\(plex_autoscan: (\d+(?:\.\d+)?) MB/.exec(docs['README.md']!);
  assert.ok(readme);
  assert.deepEqual(theirs, [Number(readme[1])]);
});
