// Bundles the relay into dist/: src/cli/main.ts and every package it uses become dist/scanrelay.js and the
// chunks its lazily loaded commands need (esbuild, code splitting), so a production install needs no
// compiler, no tsx and no JavaScript package at run time: only better-sqlite3, the one native module.
// Non-TypeScript files (SQL migrations, page assets) are copied to dist/src/ at their place in src/.
// Runs from `npm ci` / `npm install` (the "prepare" script); esbuild comes with tsx, a dev dependency, so
// the production install is `npm ci && npm prune --omit=dev` (docs/systemd.md, the Dockerfile).
// It is the same transform tsx applies when the sources run directly. Type checking is `npm run typecheck`'s job.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeNativeLeftovers } from './native-leftovers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const require = createRequire(import.meta.url);

// The native module's compiler leftovers go first: a production install needs this step too.
const sqliteDir = join(root, 'node_modules', 'better-sqlite3');
if (existsSync(sqliteDir)) removeNativeLeftovers(sqliteDir);

let esbuild;
try {
  // esbuild as tsx resolves it (tsx depends on it), wherever npm placed it.
  esbuild = createRequire(require.resolve('tsx'))('esbuild');
} catch {
  // `npm ci --omit=dev` runs this script too, without esbuild: a dist/ that is there (a release tarball,
  // an image layer) is kept; otherwise say what to run.
  if (existsSync(join(dist, '.built'))) process.exit(0);
  console.error('scanrelay: dist/ is built with dev dependencies: install with `npm ci && npm prune --omit=dev` (docs/systemd.md)');
  process.exit(1);
}
const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'));

/** The commit being built: SCANRELAY_COMMIT (a Docker build argument), else git's HEAD when this is a checkout. */
function buildCommit() {
  if (process.env.SCANRELAY_COMMIT) return process.env.SCANRELAY_COMMIT.trim().slice(0, 12);
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'], encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Packages the sources load lazily, `createRequire(import.meta.url)('pkg')`, only when a config uses them. */
const lazyPackages = new Set();

/**
 * Each source file as it would run from dist/src/: `import.meta.url` names that place (migrations and assets
 * are found beside it, package.json above it). A lazy `createRequire(import.meta.url)('pkg')` becomes a require
 * of dist/lazy/pkg.cjs, that package bundled on its own: a relay that never uses it never loads its code (the
 * RE2 engine without patterns, pino-pretty off a terminal, the log rotation without --logfile).
 */
const asInDist = {
  name: 'as-in-dist',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (!args.path.startsWith(join(root, 'src') + sep)) return undefined;
      const place = relative(root, args.path).split(sep).join('/').replace(/\.ts$/, '.js');
      const contents = readFileSync(args.path, 'utf8')
        .replace(/createRequire\(import\.meta\.url\)\('([^']+)'\)/g, (_, pkg) => {
          lazyPackages.add(pkg);
          return `require(${JSON.stringify(`./lazy/${pkg.replace(/\//g, '+')}.cjs`)})`;
        })
        .replace(/\bimport\.meta\.url\b/g, `new URL(${JSON.stringify(`./${place}`)}, import.meta.url).href`);
      return { contents, loader: 'ts' };
    });
    // Resolved at run time, beside the chunk that requires it (every chunk is in dist/ itself).
    build.onResolve({ filter: /^\.\/lazy\// }, (args) => ({ path: args.path, external: true }));
  },
};

/**
 * Packages that fastify requires only inside a function the relay never calls (its schema compilers, which
 * server/app.ts replaces, and `inject`'s light-my-request): bundled apart in dist/lazy/ like the sources' lazy
 * packages, so the server's chunk does not carry their source (about 700 KB that node would keep in memory).
 */
const fastifyLazy = ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'light-my-request'];
const lazyInPackages = {
  name: 'lazy-in-packages',
  setup(build) {
    const filter = new RegExp(`^(${fastifyLazy.map((p) => p.replace(/[/.]/g, '\\$&')).join('|')})$`);
    build.onResolve({ filter }, (args) => {
      if (args.kind !== 'require-call') return undefined;
      lazyPackages.add(args.path);
      return { path: `./lazy/${args.path.replace(/\//g, '+')}.cjs`, external: true };
    });
    // fastify's server.js requires node:http2 at its top but calls it only for `http2: true`, which the relay never
    // passes; loading it costs an idle relay about 1 MB (bench/README.md "Memory"). It becomes a stand-in that
    // requires the module the first time one of its properties is read.
    build.onResolve({ filter: /^node:http2$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]fastify[\\/]lib[\\/]server\.js$/.test(args.importer)) return undefined;
      return { path: args.path, namespace: 'lazy-builtin' };
    });
    build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
      contents: lazyBuiltin(args.path),
      loader: 'js',
    }));
    // zod's namespace re-exports all of its ~50 message locales (about 370 KB); only English, its default, is
    // used (no source calls z.config or reads z.locales), so the bundle gets that one.
    build.onLoad({ filter: /[\\/]node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: 'export { default as en } from "./en.js";\n',
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};

/**
 * A CommonJS stand-in for node's module `name`: every read of a property (or `in`, or a listing of its keys)
 * requires the module, once, and answers from it.
 */
function lazyBuiltin(name) {
  return `let loaded;
const load = () => (loaded ??= require(${JSON.stringify(name)}));
module.exports = new Proxy({}, {
  get: (_, key) => load()[key],
  has: (_, key) => key in load(),
  ownKeys: () => Reflect.ownKeys(load()),
  getOwnPropertyDescriptor: (_, key) => {
    const own = Reflect.getOwnPropertyDescriptor(load(), key);
    return own && { ...own, configurable: true };
  },
});
`;
}

function copyAssets(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(path);
    else if (!entry.name.endsWith('.ts')) {
      const out = join(dist, relative(root, path));
      mkdirSync(dirname(out), { recursive: true });
      cpSync(path, out);
    }
  }
}

/** The `require` a chunk of CommonJS code calls, made with node's createRequire. */
const REQUIRE_BANNER = "import { createRequire as __scanrelayRequire } from 'node:module'; const require = __scanrelayRequire(import.meta.url);";

/**
 * The banner out of every chunk that never names `require`: most chunks are ESM sources. Each require made costs
 * a chunk about 1.7 KB of heap (a Module and its require function), and a plain relay loads some 80 chunks.
 */
function dropUnusedRequires() {
  for (const file of readdirSync(dist).filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(join(dist, file), 'utf8');
    if (!text.startsWith(`${REQUIRE_BANNER}\n`)) throw new Error(`${file} does not start with the require banner`);
    const rest = text.slice(REQUIRE_BANNER.length + 1);
    if (!/\brequire\b/.test(rest)) writeFileSync(join(dist, file), rest);
  }
}

rmSync(dist, { recursive: true, force: true });
await esbuild.build({
  absWorkingDir: root,
  entryPoints: { scanrelay: 'src/cli/main.ts' },
  outdir: dist,
  // Every chunk sits in dist/ itself, where the rewritten import.meta.url of each module expects it.
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: compilerOptions.target.toLowerCase(),
  tsconfigRaw: { compilerOptions },
  // The native module stays a package; the rest are optional native speed-ups their packages try and do without.
  external: ['better-sqlite3', 'pg-native', 'bufferutil', 'utf-8-validate'],
  // Packages written as CommonJS call require() for node's own modules (taken out again where no chunk needs it, below).
  banner: { js: REQUIRE_BANNER },
  legalComments: 'linked',
  // Node keeps the text of every chunk it loads: without comments and blank space it is about a third smaller.
  // Names stay (no minifyIdentifiers), so stack traces still name their functions.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  plugins: [asInDist, lazyInPackages],
});
await esbuild.build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries([...lazyPackages].map((pkg) => [pkg.replace(/\//g, '+'), pkg])),
  outdir: join(dist, 'lazy'),
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: compilerOptions.target.toLowerCase(),
  legalComments: 'linked',
  logLevel: 'warning',
});
dropUnusedRequires();
copyAssets(join(root, 'src'));
// The launcher runs dist/ while this stamp is newer than every source file; version.ts reads the commit.
writeFileSync(join(dist, '.built'), `${JSON.stringify({ builtAt: new Date().toISOString(), commit: buildCommit() })}\n`);
