// Compiles src/ to dist/src/ (imports rewritten from .ts to .js) and copies every non-TypeScript file
// (SQL migrations, page assets) beside it, so files read relative to a module are found in both trees.
// Runs from `npm ci` / `npm install` (the "prepare" script), `npm ci --omit=dev` included: the compiler is
// esbuild, which tsx (a runtime dependency) brings, so the build needs no dev dependency. It is the same
// transform tsx applies when the sources run directly, so dist/ runs what the tests ran. Type checking is
// `npm run typecheck`'s job. The launcher uses dist/ while it is fresh.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
// esbuild as tsx resolves it (tsx depends on it), wherever npm placed it.
const require = createRequire(import.meta.url);
const esbuild = createRequire(require.resolve('tsx'))('esbuild');
const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'));

rmSync(dist, { recursive: true, force: true });

/** Relative imports name the .ts file (allowImportingTsExtensions); the compiled tree has .js files. */
const rewriteImports = (code) => code.replace(/(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"(\.\.?\/[^"]*)\.ts"/g, '$1"$2.js"');

function build(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const out = join(dist, relative(root, path));
    if (entry.isDirectory()) {
      build(path);
      continue;
    }
    mkdirSync(dirname(out), { recursive: true });
    if (!entry.name.endsWith('.ts')) {
      cpSync(path, out);
      continue;
    }
    const { code } = esbuild.transformSync(readFileSync(path, 'utf8'), {
      loader: 'ts',
      format: 'esm',
      platform: 'node',
      target: compilerOptions.target.toLowerCase(),
      tsconfigRaw: { compilerOptions },
      sourcefile: path,
    });
    writeFileSync(out.replace(/\.ts$/, '.js'), rewriteImports(code));
  }
}
build(join(root, 'src'));
writeFileSync(join(dist, '.built'), `${new Date().toISOString()}\n`);
