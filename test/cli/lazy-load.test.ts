import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { postForm, ROOT, spawnRelay, tempDir } from '../helpers/relay.ts';

const TRACE_HOOK = join(ROOT, 'test', 'helpers', 'module-trace.mjs');

/**
 * Starts the real relay with `config`, sends one manual scan, asks for the dashboard page (unless `page` is false)
 * (and scrapes /metrics), and returns every module it resolved.
 * It runs the sources (SCANRELAY_FROM_SOURCE): the bundle in dist/ holds the packages, so no package is resolved
 * there, and its chunks keep the same lazy boundaries (each dynamic import a chunk, each lazy require run when reached).
 */
async function modulesLoadedBy(config: Record<string, unknown>, opts: { scrape?: boolean; cli?: string; page?: boolean } = {}): Promise<string[]> {
  const dir = tempDir();
  const trace = join(dir, 'modules.txt');
  const env = { SCANRELAY_TRACE_MODULES: trace, ...(opts.cli ? {} : { SCANRELAY_FROM_SOURCE: '1' }) };
  const relay = await spawnRelay({ dir, config, cli: opts.cli, nodeArgs: ['--import', TRACE_HOOK], env });
  try {
    const answer = await postForm(relay.url, { eventType: 'Manual', filepath: '/data/Movies/Heat (1995)/Heat.mkv' });
    assert.equal(answer.status, 200);
    if (opts.page !== false) await fetch(`${relay.base}/${relay.secret}`, { headers: { accept: 'text/html' } });
    if (opts.scrape) assert.match(await (await fetch(`${relay.base}/metrics`)).text(), /scanrelay_requests_total\{source="Manual",outcome="queued"\} 1/);
  } finally {
    await relay.kill();
  }
  assert.ok(existsSync(trace), 'the trace hook wrote nothing');
  return readFileSync(trace, 'utf8').split('\n').filter(Boolean);
}

const loads = (lines: string[], what: string | RegExp) => lines.some((l) => (typeof what === 'string' ? l.split(' ')[0] === what : what.test(l)));

// Each of these costs memory (bench/README.md "Memory"); a configuration that does not use them must not load them.
describe('what the server loads for a plain configuration', () => {
  test('no Google stack, no wizard prompts, no folder watcher, no drive monitor, no other commands, no prom-client before a scrape', async () => {
    const lines = await modulesLoadedBy({ SERVER_ALLOW_MANUAL_SCAN: true, PLEX_TOKEN: 'token', PLEX_LOCAL_URL: 'http://127.0.0.1:9' });
    // The trace works: the server's own stack is in it.
    assert.ok(loads(lines, 'fastify'), 'fastify should be traced');
    assert.ok(loads(lines, /\/src\/server\/run\.(ts|js)$/), 'the server module should be traced');
    for (const pkg of ['google-auth-library', '@inquirer/prompts', 'chokidar', 'prom-client']) assert.ok(!loads(lines, pkg), `${pkg} was loaded`);
    // The RE2 engine comes with the first pattern: this config has none.
    assert.ok(!loads(lines, /\/node_modules\/re2js\//) && !loads(lines, 're2js'), 're2js was loaded');
    // The TOML writer comes with the first autopulse config template asked for (peers/autopulse/config-template.ts).
    assert.ok(!loads(lines, /\/node_modules\/smol-toml\//) && !loads(lines, 'smol-toml'), 'smol-toml was loaded');
    // fastify's schema compilers (ajv, fast-json-stringify): no route has a JSON schema (server/app.ts). The
    // required modules are in the trace (fastify's own are), so their absence means something.
    assert.ok(loads(lines, /^require .*\/node_modules\/fastify\/fastify\.js$/), 'fastify should be in the required modules');
    for (const pkg of ['ajv', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler']) {
      assert.ok(!loads(lines, new RegExp(`^require .*/node_modules/${pkg}/`)), `${pkg} was loaded`);
    }
    // google/endpoints holds only the default URLs the config schema names; the rest of src/google is the stack.
    for (const mod of [/\/src\/google\/(?!endpoints\.)/, /\/src\/triggers\/drive\//, /\/src\/triggers\/watch\//, /\/src\/cli\/(remote|authorize|build-caches|scan|sections)\.(ts|js)$/]) {
      assert.ok(!loads(lines, mod), `${mod} was loaded: ${lines.find((l) => mod.test(l))}`);
    }
  });

  // Issue 49 item 9: code a Plex-only relay at rest never runs is loaded when a config or a request first needs it.
  test('a Plex-only relay at rest loads no other target kind, no dashboard, JSON API or setup wizard code, no autopulse routes', async () => {
    const lines = await modulesLoadedBy({ SERVER_ALLOW_MANUAL_SCAN: true, PLEX_TOKEN: 'token', PLEX_LOCAL_URL: 'http://127.0.0.1:9' }, { page: false });
    assert.ok(loads(lines, /\/src\/targets\/plex\/kind\.(ts|js)$/), "the Plex kind should be traced");
    assert.ok(loads(lines, /\/src\/server\/dashboard\/index\.(ts|js)$/), "the dashboard's routes should be traced");
    const away = [
      // Each kind's schema.ts is the config's (kinds-schema.ts): read at load; the rest of its folder is the kind.
      /\/src\/targets\/(jellyfin|emby|media-browser|audiobookshelf|tdarr|fileflows|sonarr|radarr|arr|command|relay)\/(?!schema\.)/,
      /\/src\/server\/dashboard\/(handlers|api-handlers|render|data|events)\.(ts|js)$/,
      /\/src\/server\/connect\.(ts|js)$/,
      /\/src\/setup\//,
      /\/src\/peers\/autopulse\/routes\.(ts|js)$/,
    ];
    for (const mod of away) assert.ok(!loads(lines, mod), `${mod} was loaded: ${lines.find((l) => mod.test(l))}`);
  });

  test("the dashboard's first request loads its pages; a Jellyfin target loads the kinds beyond Plex; autopulse's triggers load their routes", async () => {
    const lines = await modulesLoadedBy({
      SERVER_ALLOW_MANUAL_SCAN: true,
      PLEX_TOKEN: 'token',
      PLEX_LOCAL_URL: 'http://127.0.0.1:9',
      TARGETS: { kids: { TYPE: 'jellyfin', URL: 'http://127.0.0.1:9', API_KEY: 'k' } },
      SERVER_AUTOPULSE_TRIGGERS: { manual: { TYPE: 'manual' } },
    });
    for (const mod of [/\/src\/server\/dashboard\/handlers\.(ts|js)$/, /\/src\/targets\/media-browser\//, /\/src\/peers\/autopulse\/routes\.(ts|js)$/]) {
      assert.ok(loads(lines, mod), `${mod} should be loaded`);
    }
  });

  test('WATCH.ENABLED loads the folder watcher, and the first /metrics scrape loads prom-client', async () => {
    const media = tempDir();
    const lines = await modulesLoadedBy({ PLEX_TOKEN: 'token', PLEX_LOCAL_URL: 'http://127.0.0.1:9', WATCH: { ENABLED: true, PATHS: [media] } }, { scrape: true });
    assert.ok(loads(lines, 'chokidar'));
    assert.ok(loads(lines, 'prom-client'));
    assert.ok(!loads(lines, /\/node_modules\/re2js\//), 'no pattern in this config: no RE2 engine');
    assert.ok(!loads(lines, '@inquirer/prompts'));
  });

  test('a configured pattern loads the RE2 engine (so its absence above means something)', async () => {
    const lines = await modulesLoadedBy({ PLEX_TOKEN: 'token', PLEX_LOCAL_URL: 'http://127.0.0.1:9', SERVER_PATH_REWRITES: [{ from: '^/movies/', to: '/data/Movies/' }] });
    assert.ok(loads(lines, /\/node_modules\/re2js\//), 're2js should be loaded');
  });
});

/** A copy of this checkout's launcher and sources with a bundle of its own (dist/ here may be older than src/). */
async function builtCopy(): Promise<string> {
  const copy = tempDir('scanrelay-bundle-');
  for (const entry of ['package.json', 'tsconfig.json', 'bin', 'scripts', 'src']) cpSync(join(ROOT, entry), join(copy, entry), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  await promisify(execFile)(process.execPath, [join(copy, 'scripts', 'build.mjs')], { cwd: copy });
  return copy;
}

// Issue 49 item 9: node keeps the source of every chunk it loads (bench/README.md "Memory"), so code the relay
// never runs must not be in them. The bundle's own boundaries, beyond the sources' (above).
describe('what the bundle loads for a plain configuration', () => {
  test('no fastify schema compilers, no inject, no zod locale but English, no http2, no code loaded on first use', async () => {
    const copy = await builtCopy();
    const lines = await modulesLoadedBy({ SERVER_ALLOW_MANUAL_SCAN: true, PLEX_TOKEN: 'token', PLEX_LOCAL_URL: 'http://127.0.0.1:9' }, { cli: join(copy, 'bin', 'scanrelay.js') });
    const chunks = [...new Set(lines.map((l) => l.split(' ')[1] ?? '').filter((url) => url.startsWith(`file://${copy}/dist/`)))];
    assert.ok(chunks.some((url) => url.endsWith('/dist/scanrelay.js')), 'the relay ran the bundle');
    assert.ok(!lines.some((l) => l.includes('/dist/lazy/')), `a lazy package was loaded: ${lines.find((l) => l.includes('/dist/lazy/'))}`);
    const loaded = chunks.map((url) => readFileSync(fileURLToPath(url), 'utf8')).join('\n');
    const lazy = (name: string) => readFileSync(join(copy, 'dist', 'lazy', name), 'utf8');
    // A string of each package's code, found where it went (so its absence from the loaded chunks means something).
    const away = [
      { what: "ajv (fastify's validator compiler)", marker: 'removeAdditional', file: '@fastify+ajv-compiler.cjs' },
      { what: "fast-json-stringify (fastify's serializer compiler)", marker: 'removeAdditional', file: '@fastify+fast-json-stringify-compiler.cjs' },
      { what: "light-my-request (fastify's inject)", marker: 'payloadAsStream', file: 'light-my-request.cjs' },
    ];
    for (const { what, marker, file } of away) {
      assert.ok(lazy(file).includes(marker), `${what}: ${marker} not in dist/lazy/${file}`);
      assert.ok(!loaded.includes(marker), `${what} is in a chunk the relay loaded`);
    }
    // Issue 49 item 9: node's http2, which fastify requires at its top and calls only for `http2: true` (a stand-in
    // requires it on first use, scripts/build.mjs); node's http is the control that the builtins are traced.
    assert.ok(loads(lines, /^builtin http$/), 'node:http should be traced');
    assert.ok(!loads(lines, /^builtin http2$/), 'node:http2 was loaded');
    // Code loaded on first use (the page above was asked for, so the dashboard's pages are in): another target kind,
    // the JSON API, the setup wizard, autopulse's routes. Each is known by a function of its own, found in a chunk of
    // the bundle (names are kept; esbuild may add a number to one).
    const bundle = everythingIn(copy);
    const declared = (name: string) => new RegExp(`function ${name}\\d*\\(`);
    for (const name of ['createMediaBrowserTarget', 'createTdarrTarget', 'parseOr400', 'renderConnect', 'autopulseRoutes']) {
      assert.match(bundle, declared(name), `${name} is not in the bundle`);
      assert.doesNotMatch(loaded, declared(name), `${name} is in a chunk the relay loaded`);
    }
    assert.match(loaded, declared('renderDashboard'), "the dashboard's pages should be loaded (the page was asked for)");
    // zod's English messages are in, its Spanish ones (one of ~50 locales) are not in the bundle at all.
    assert.ok(loaded.includes('Invalid input: expected'), "zod's English messages should be loaded");
    assert.ok(!bundle.includes('Entrada inv'), 'a zod locale other than English was bundled');
  });
});

/** Every chunk of the copy's bundle (dist/*.js), as one text. */
function everythingIn(copy: string): string {
  return readdirSync(join(copy, 'dist'))
    .filter((f) => f.endsWith('.js'))
    .map((f) => readFileSync(join(copy, 'dist', f), 'utf8'))
    .join('\n');
}
