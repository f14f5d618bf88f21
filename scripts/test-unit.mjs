// `npm run test:unit`: the unit set, the test files whose first line is UNIT_MARKER. They run in process: no child
// process, no port, no database server. test/helpers/unit-guard.mjs is loaded into each file's process and makes any
// of those throw, so a file that needs one fails here and cannot stay in the set. `npm test` runs them too.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const UNIT_MARKER = '// unit set (npm run test:unit): in process; no child process, no port, no database';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Every *.test.ts below `dir`, sorted. */
function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []))
    .sort();
}

const files = testFiles(join(root, 'test'))
  .filter((f) => readFileSync(f, 'utf8').split('\n', 1)[0] === UNIT_MARKER)
  .map((f) => relative(root, f));
if (files.length === 0) {
  console.error(`test:unit: no test file starts with the unit marker (${UNIT_MARKER})`);
  process.exit(1);
}
const run = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--import', 'tsx', '--import', './test/helpers/unit-guard.mjs', '--test', '--test-concurrency=2', ...process.argv.slice(2), ...files],
  { cwd: root, stdio: 'inherit' },
);
process.exit(run.status ?? 1);
