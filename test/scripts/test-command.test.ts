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
  // Run as npm runs it: not as a test inside this one (the runner's NODE_TEST_CONTEXT would make it skip the file).
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = execFile(process.execPath, [...testCommand(), file], { cwd: ROOT, env }, (_err, stdout, stderr) => resolve({ code: child.exitCode, out: `${stdout}${stderr}` }));
  });
  assert.equal(code, 1, out);
  assert.match(out, new RegExp(`location: '${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:7:1'`), out);
  assert.match(out, /fails\.test\.ts:8:\d+\)/, 'the stack names the assertion line too');
});
