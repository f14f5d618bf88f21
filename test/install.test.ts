import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { ROOT, runProcess as run, tempDir } from './helpers/relay.ts';

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
test("docs/systemd.md's install, run in a fresh clone: `npm ci --omit=dev` builds dist/ without dev dependencies and the first start runs from it", async () => {
  const commands = installCommands();
  const ci = commands.find((c) => /\bnpm ci\b/.test(c))!;
  assert.match(ci, /^cd \/opt\/scanrelay && npm ci --omit=dev$/, 'the documented install command');
  const start = commands.find((c) => c.startsWith('node '))!;
  assert.equal(start, 'node bin/scanrelay.js server');

  const clone = freshClone();
  // From npm's cache where it can (filled by this checkout's own `npm ci`; a miss goes to the registry). better-sqlite3 would compile from source
  // for a minute or more: its installer (prebuild-install) takes this checkout's build as a local prebuild.
  const sqlite = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as { version: string };
  const prebuilds = tempDir('scanrelay-prebuilds-');
  const tarball = `better-sqlite3-v${sqlite.version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['czf', join(prebuilds, tarball), 'build/Release/better_sqlite3.node'], { cwd: join(ROOT, 'node_modules', 'better-sqlite3') });
  const install = await run('npm', [...ci.replace(/^cd \S+ && npm /, '').split(' '), '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: clone,
    env: { npm_config_better_sqlite3_local_prebuilds: prebuilds },
    timeoutMs: 240_000,
  });
  assert.equal(install.code, 0, install.out);
  assert.ok(!existsSync(join(clone, 'node_modules', 'typescript')), 'no dev dependency installed');
  assert.ok(existsSync(join(clone, 'dist', '.built')), 'dist/ built');

  // The documented first start, on a free port; a probe records which tree's modules node loads.
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
  assert.ok(existsSync(join(clone, 'config', 'config.json')), 'first start writes config/config.json');
  const urls = readFileSync(loaded, 'utf8').split('\n').filter(Boolean);
  assert.ok(urls.some((u) => u.endsWith('/dist/src/cli/main.js')), 'the relay ran from dist/');
  assert.deepEqual(urls.filter((u) => u.startsWith(`file://${clone}/src/`)), [], 'no source file was loaded');
});
