import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, runCli } from './helpers/relay.ts';

const userDocs = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

test('user docs cite nothing a user cannot look up (no spec items, no "the issue")', () => {
  for (const file of userDocs) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const bad of [/\bspec E\d/i, /\bthe spec's\b/i, /\(spec\b/i, /\bthe issue fixes\b/i]) {
      assert.doesNotMatch(text, bad, `${file}: ${bad}`);
    }
  }
});

test('every shell variable a docs example uses is set in that example first', () => {
  for (const file of userDocs) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
      const body = block[1]!;
      const defined = new Set([...body.matchAll(/^\s*([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]));
      for (const use of body.matchAll(/\$\{?([A-Z_][A-Z0-9_]*)/g)) {
        // RCLONE_CONFIG, HOME, USER are the user's own environment, named in the text around the example.
        if (['RCLONE_CONFIG', 'HOME', 'PATH', 'USER'].includes(use[1]!)) continue;
        assert.ok(defined.has(use[1]!), `${file}: $${use[1]} is used but never set in:\n${body}`);
      }
    }
  }
});

test('`remote --help` says what settings.yml is and which key of it is read', async () => {
  const r = await runCli(['remote', '--help']);
  assert.equal(r.code, 0, r.stderr);
  const help = r.stdout.replace(/\s+/g, ' ');
  assert.doesNotMatch(help, /install settings\.yml/);
  assert.match(help, /settings\.yml whose top-level "remote:" key names the rclone remote/);
});

test('the project stands alone: no source, test, bench or doc cites the research notes a clone does not have', () => {
  const files = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && /\.(ts|mjs|js|cjs|md)$/.test(e.name))
      .map((e) => join(e.parentPath, e.name));
  const offenders: string[] = [];
  for (const file of [...files('src'), ...files('test'), ...files('bench'), ...files('docs'), join(ROOT, 'README.md')]) {
    const text = readFileSync(file, 'utf8');
    if (/shared\/(research|spec)|research\/[\w-]+\.md|(?<!docs\/)\bprotocols\.md/.test(text)) offenders.push(file.slice(ROOT.length + 1));
  }
  assert.deepEqual(offenders.filter((f) => f !== 'test/docs.test.ts'), []);
});
