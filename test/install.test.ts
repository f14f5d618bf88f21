import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { ROOT, runProcess as run, tempDir, waitFor } from './helpers/relay.ts';

/** The ```sh block of docs/systemd.md that installs the relay. */
function installCommands(): string[] {
  const doc = readFileSync(join(ROOT, 'docs', 'systemd.md'), 'utf8');
  const block = /```sh\n(sudo git clone[\s\S]*?)```/.exec(doc)![1]!;
  return block.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean);
}

/** A copy of the checkout as `git clone` makes it: the tracked files, as they are now, and nothing else. */
function freshClone(): string {
  const dir = join(tempDir('scanrelay-clone-'), 'scanrelay');
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in the work tree, not yet committed
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
  return dir;
}

// Issue 35 item 1: `npm ci --omit=dev` ran the prepare build, which needed TypeScript (a dev dependency).
// Issue 42 item 15: the production install is `npm ci && npm prune --omit=dev` (the bundle is built with esbuild,
// a dev tool); what is left runs the relay with no compiler, no tsx and no JavaScript package but the bundle's.
test("docs/systemd.md's install, run in a fresh clone: `npm ci && npm prune --omit=dev` leaves the bundle and better-sqlite3 alone, and the first start runs the bundle without tsx", async () => {
  const commands = installCommands();
  const ci = commands.find((c) => /\bnpm ci\b/.test(c))!;
  assert.equal(ci, 'cd /opt/scanrelay && npm ci && npm prune --omit=dev', 'the documented install command');
  const start = commands.find((c) => c.startsWith('node '))!;
  assert.equal(start, 'node bin/scanrelay.js server');

  const clone = freshClone();
  // From npm's cache where it can (filled by this checkout's own `npm ci`; a miss goes to the registry). better-sqlite3 would compile from source
  // for a minute or more: its installer (prebuild-install) takes this checkout's build as a local prebuild.
  const sqlite = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as { version: string };
  const prebuilds = tempDir('scanrelay-prebuilds-');
  const tarball = `better-sqlite3-v${sqlite.version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['czf', join(prebuilds, tarball), 'build/Release/better_sqlite3.node'], { cwd: join(ROOT, 'node_modules', 'better-sqlite3') });
  const env = { npm_config_better_sqlite3_local_prebuilds: prebuilds };
  for (const step of ci.replace(/^cd \S+ && /, '').split(' && ')) {
    const install = await run('npm', [...step.replace(/^npm /, '').split(' '), '--prefer-offline', '--no-audit', '--no-fund'], { cwd: clone, env, timeoutMs: 400_000 });
    assert.equal(install.code, 0, `${step}: ${install.out}`);
  }
  assert.ok(existsSync(join(clone, 'dist', '.built')), 'dist/ built');
  // Only the native module and what installs it are left: no compiler, no tsx, no package the bundle holds.
  for (const gone of ['typescript', 'tsx', 'esbuild', '@esbuild', 'fastify', 'pino-roll', 'date-fns', 'prom-client', '@opentelemetry', '@types', 'zod']) {
    // npm prune leaves a scope's folder behind, empty.
    const dir = join(clone, 'node_modules', gone);
    assert.ok(!existsSync(dir) || (gone.startsWith('@') && readdirSync(dir).length === 0), `${gone} is not installed`);
  }
  assert.deepEqual(readdirSync(join(clone, 'node_modules', 'better-sqlite3', 'build')), ['Release']);
  assert.deepEqual(readdirSync(join(clone, 'node_modules', 'better-sqlite3', 'build', 'Release')), ['better_sqlite3.node'], 'no build leftovers');

  // The documented first start, on a free port; a probe records which files node loads.
  const loaded = join(clone, 'loaded.txt');
  const probe = join(clone, 'probe.mjs');
  writeFileSync(
    probe,
    `import { register } from 'node:module';\nregister('data:text/javascript,' + encodeURIComponent(${JSON.stringify(
      `import { appendFileSync } from 'node:fs'; export async function load(url, context, next) { if (url.startsWith('file:')) appendFileSync(${JSON.stringify(loaded)}, url + '\\n'); return next(url, context); }`,
    )}));\n`,
  );
  const [node, ...args] = start.split(' ');
  assert.equal(node, 'node');
  const first = await run(process.execPath, ['--import', probe, ...args], {
    cwd: clone,
    env: { SERVER_PORT: '0', SERVER_IP: '"127.0.0.1"', SCANRELAY_CONFIG: undefined, PLEX_AUTOSCAN_CONFIG: undefined, SCANRELAY_LOGLEVEL: 'INFO' },
    until: (out) => out.includes('scan URL'),
  });
  assert.match(first.out, /scan URL: http:\/\/127\.0\.0\.1:\d+\//, first.out);
  // The first line names the release.
  const version = JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8')).version as string;
  assert.equal((JSON.parse(first.out.split('\n')[0]!) as { scanrelay?: string }).scanrelay, version, first.out);
  assert.ok(existsSync(join(clone, 'config', 'config.json')), 'first start writes config/config.json');
  const urls = readFileSync(loaded, 'utf8').split('\n').filter(Boolean);
  assert.ok(urls.some((u) => u.endsWith('/dist/scanrelay.js')), 'the relay ran the bundle');
  assert.deepEqual(urls.filter((u) => u.startsWith(`file://${clone}/src/`)), [], 'no source file was loaded');
  // Every module it loaded is the bundle's or node's own, and the native module's loader.
  const outside = urls.filter((u) => u.startsWith(`file://${clone}/`) && !u.startsWith(`file://${clone}/dist/`) && !u.startsWith(`file://${clone}/bin/`) && !u.startsWith(`file://${clone}/probe`));
  assert.ok(outside.every((u) => /\/node_modules\/(better-sqlite3|bindings|file-uri-to-path)\//.test(u)), outside.join('\n'));

  // What the bundle loads lazily works too: /metrics (prom-client, CommonJS, in a chunk of its own) and the dashboard
  // (its assets beside the bundle).
  const secret = (JSON.parse(readFileSync(join(clone, 'config', 'config.json'), 'utf8')) as { SERVER_PASS: string }).SERVER_PASS;
  const relay = spawn(process.execPath, args, {
    cwd: clone,
    env: { ...process.env, SERVER_PORT: '0', SERVER_IP: '"127.0.0.1"', SCANRELAY_CONFIG: undefined, PLEX_AUTOSCAN_CONFIG: undefined, SCANRELAY_LOGLEVEL: 'INFO' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  relay.stdout.on('data', (d) => (out += d));
  relay.stderr.on('data', (d) => (out += d));
  try {
    const base = await waitFor(() => /scan URL: (http:\/\/127\.0\.0\.1:\d+)\//.exec(out)?.[1], 60_000, 'the second start');
    const metrics = await fetch(`${base}/metrics`);
    const text = await metrics.text();
    assert.equal(metrics.status, 200, text);
    assert.match(text, new RegExp(`^scanrelay_relay_info\\{version="${version.replace(/\./g, '\\.')}",commit=""\\} 1$`, 'm'), 'no .git in this copy: no commit');
    assert.match(text, /^scanrelay_process_resident_memory_bytes \d+/m);
    const page = await fetch(`${base}/${secret}`, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.ok((await page.text()).includes(`id="version"`));
    const script = await fetch(`${base}/${secret}/dashboard.js`);
    assert.equal(script.status, 200);
  } finally {
    relay.kill('SIGTERM');
    await new Promise((r) => relay.once('exit', r));
  }

  // An edited source without tsx: the launcher still runs the bundle and says the edit is not in it.
  writeFileSync(join(clone, 'src', 'cli', 'main.ts'), readFileSync(join(clone, 'src', 'cli', 'main.ts'), 'utf8') + '\n');
  const edited = await run(process.execPath, ['bin/scanrelay.js', '--version'], { cwd: clone });
  assert.equal(edited.code, 0, edited.out);
  assert.match(edited.out, /src\/ changed after dist\/ was built; running dist\//);
  assert.match(edited.out, new RegExp(`^${version.replace(/\./g, '\\.')}$`, 'm'));
});
