import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { processAlive, ROOT, runProcess, tempDir, waitFor } from './helpers/relay.ts';

/*
 * Test files take their temp folders from tempDir() (test/helpers/relay.ts), and those folders are removed when the
 * file's process ends, so runs do not pile thousands of folders up in /tmp and no test can meet a neighbour's.
 * Checked as npm test runs a file: a file of its own, run by node's test runner in a process of its own.
 */

/** Runs `file` as npm test runs a test file (not as a test inside this one: NODE_TEST_CONTEXT would skip it). */
function runTestFile(file: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string }> {
  return runProcess(process.execPath, ['--enable-source-maps', '--import', 'tsx', '--test', file], { env: { NODE_TEST_CONTEXT: undefined, ...env } });
}

/** A test file in a folder of this file's own, importing the helpers of this checkout. */
function writeTestFile(name: string, lines: string[]): string {
  const file = join(tempDir('scanrelay-temp-check-'), name);
  writeFileSync(file, lines.join('\n').replaceAll('HELPERS', join(ROOT, 'test', 'helpers')).replaceAll('ROOT', ROOT));
  return file;
}

test("a test file's temp folders are gone when it ends, though its tests removed nothing and a program it started still writes in one", async () => {
  const report = join(tempDir('scanrelay-temp-report-'), 'made.json');
  const file = writeTestFile('leaves.test.ts', [
    "import { spawn } from 'node:child_process';",
    "import { existsSync, mkdirSync, writeFileSync } from 'node:fs';",
    "import { join } from 'node:path';",
    "import { test } from 'node:test';",
    "import { tempDir, waitFor } from 'HELPERS/relay.ts';",
    '',
    "test('makes folders and leaves them', async () => {",
    "  const deep = tempDir('scanrelay-leftover-deep-');",
    "  mkdirSync(join(deep, 'a', 'b'), { recursive: true });",
    "  writeFileSync(join(deep, 'a', 'b', 'film.mkv'), 'x');",
    // A relay the test leaves for the OS to kill keeps appending its log; it ends once the folder is gone.
    "  const busy = tempDir('scanrelay-leftover-busy-');",
    "  const log = join(busy, 'relay.log');",
    "  const writer = spawn('sh', ['-c', 'while echo line >> \"$0\"; do sleep 0.01; done', log], { stdio: 'ignore' });",
    '  writer.unref();',
    "  await waitFor(() => existsSync(log) || undefined, 15_000, 'the writer started');",
    // What must happen before a folder goes may fail: the folder goes anyway and the file still passes.
    "  const failing = tempDir('scanrelay-leftover-failing-', () => { throw new Error('cannot stop'); });",
    '  writeFileSync(process.env.REPORT!, JSON.stringify({ folders: [deep, busy, failing], writer: writer.pid }));',
    '});',
    '',
  ]);
  const { code, out } = await runTestFile(file, { REPORT: report });
  assert.equal(code, 0, out);
  const made = JSON.parse(readFileSync(report, 'utf8')) as { folders: string[]; writer: number };
  try {
    assert.deepEqual(made.folders.filter((f) => existsSync(f)), [], 'every folder the file made is gone');
    await waitFor(() => !processAlive(made.writer) || undefined, 15_000, 'the writer ended, its folder gone');
  } finally {
    for (const f of made.folders) rmSync(f, { recursive: true, force: true });
    if (processAlive(made.writer)) process.kill(made.writer, 'SIGKILL');
  }
});

test("a PostgreSQL cluster a test file never destroyed is stopped, then its folder removed, when the file ends", async () => {
  const report = join(tempDir('scanrelay-temp-report-'), 'cluster.json');
  const file = writeTestFile('cluster.test.ts', [
    "import { readFileSync, writeFileSync } from 'node:fs';",
    "import { createRequire } from 'node:module';",
    "import { join } from 'node:path';",
    "import { test } from 'node:test';",
    // This file lives in a temp folder: the checkout's node_modules hold pg.
    "const pg = createRequire('ROOT/package.json')('pg');",
    "import { startPgCluster } from 'HELPERS/postgres.ts';",
    '',
    "test('starts a cluster and never destroys it', async () => {",
    '  const cluster = await startPgCluster();',
    '  const client = new pg.Client({ connectionString: cluster.url() });',
    '  await client.connect();',
    "  const { rows } = await client.query('SHOW data_directory');",
    '  await client.end();',
    '  const data = rows[0].data_directory as string;',
    "  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\\n')[0]);",
    '  writeFileSync(process.env.REPORT!, JSON.stringify({ folder: join(data, \'..\'), postmaster }));',
    '});',
    '',
  ]);
  const { code, out } = await runTestFile(file, { REPORT: report });
  assert.equal(code, 0, out);
  const made = JSON.parse(readFileSync(report, 'utf8')) as { folder: string; postmaster: number };
  try {
    assert.ok(!processAlive(made.postmaster), 'the server was stopped before its folder went (pg_ctl stop waits for it)');
    assert.equal(existsSync(made.folder), false, 'the cluster folder is gone');
  } finally {
    if (processAlive(made.postmaster)) process.kill(made.postmaster, 'SIGQUIT');
    rmSync(made.folder, { recursive: true, force: true });
  }
});

test('no test code makes a temp folder but through tempDir(), which removes it', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|mjs|js)$/.test(e.name) ? [join(dir, e.name)] : []));
  const makers = files(join(ROOT, 'test'))
    // The helper itself, and this check, which names the call it looks for.
    .filter((f) => f !== join(ROOT, 'test', 'helpers', 'temp-dir.ts') && f !== fileURLToPath(import.meta.url))
    .filter((f) => /\bmkdtemp(Sync)?\b/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(ROOT, f));
  assert.deepEqual(makers, [], 'these call mkdtemp themselves: use tempDir() from test/helpers/relay.ts');
});
