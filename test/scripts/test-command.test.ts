import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDir } from '../helpers/relay.ts';

// npm test's node command, as package.json runs it, without the list of files.
function testCommand(): string[] {
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { test: string } }).scripts.test;
  const node = /(?:^|&& )node ((?:\S+ )+?)\$\(find test /.exec(script);
  assert.ok(node, `package.json's test script runs "node [flags] $(find test ...)": ${script}`);
  return node[1]!.trim().split(' ');
}

/**
 * Runs node with `args` as npm runs a test file: not as a test inside this one (the runner's NODE_TEST_CONTEXT
 * would make it skip the file).
 */
function runNode(args: string[]): Promise<{ code: number | null; out: string }> {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return new Promise((resolve) => {
    const child = execFile(process.execPath, args, { cwd: ROOT, env }, (_err, stdout, stderr) => resolve({ code: child.exitCode, out: `${stdout}${stderr}` }));
  });
}

test('a failing test is reported at its line in the .ts file, not at line 1 of the compiled code', async () => {
  const file = join(tempDir('scanrelay-location-'), 'fails.test.ts');
  // Types and an import make the compiled file differ from the source, as every test file does.
  writeFileSync(
    file,
    [
      "import assert from 'node:assert/strict';",
      "import { test } from 'node:test';",
      '',
      'type Scan = { folder: string; attempts: number };',
      "const scan: Scan = { folder: '/data/Movies/Heat (1995)', attempts: 1 };",
      '',
      "test('fails on line 8', () => {",
      '  assert.equal(scan.attempts, 2);',
      '});',
      '',
    ].join('\n'),
  );
  const { code, out } = await runNode([...testCommand(), file]);
  assert.equal(code, 1, out);
  assert.match(out, new RegExp(`location: '${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:7:1'`), out);
  assert.match(out, /fails\.test\.ts:8:\d+\)/, 'the stack names the assertion line too');
});

test('the unit set refuses a child process, a port and a connection: a file that needs one cannot stay in it', async () => {
  const dir = tempDir('scanrelay-unit-guard-');
  const file = join(dir, 'needs-a-process.test.ts');
  writeFileSync(
    file,
    [
      "import assert from 'node:assert/strict';",
      "import { execFileSync } from 'node:child_process';",
      "import { createServer, connect } from 'node:net';",
      "import { test } from 'node:test';",
      "test('a child process', () => assert.throws(() => execFileSync('true'), /unit set runs no child process/));",
      "test('a port', () => assert.throws(() => createServer().listen(0), /unit set runs no listening port/));",
      "test('a connection', () => assert.throws(() => connect(5432, '127.0.0.1'), /unit set runs no network connection/));",
      "test('pure code runs', () => assert.equal(1 + 1, 2));",
      '',
    ].join('\n'),
  );
  const { code, out } = await runNode(['--import', 'tsx', '--import', './test/helpers/unit-guard.mjs', '--test', file]);
  assert.equal(code, 0, out);
  assert.match(out, /# pass 4/, out);
});

test('npm run test:unit is the unit set\'s script, and the README names it', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  assert.equal(pkg.scripts['test:unit'], 'node scripts/test-unit.mjs');
  assert.match(readFileSync(join(ROOT, 'README.md'), 'utf8'), /npm run test:unit/);
});
