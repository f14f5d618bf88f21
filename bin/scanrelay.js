#!/usr/bin/env node
// Launcher. Runs the bundle (dist/scanrelay.js, built by `npm ci`) while it is newer than every source file,
// otherwise the TypeScript sources through tsx (a dev dependency), so an edited checkout never runs stale code.
// A production install (`npm ci && npm prune --omit=dev`) has no tsx: it runs the bundle, and says so when
// the sources changed after the build. The bundle starts faster and uses ~25 MB less memory (no loader thread).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// A relay allocates steadily while it drains a backlog; V8's default heap growth then lets garbage pile up
// to several times the live heap (RSS near 370 MB in a 30,000-scan drain). Growing the heap by at most
// 25% between full collections keeps that near 200 MB at the same drain speed (bench/README.md).
setFlagsFromString('--heap-growing-percent=25');

// Start-up (loading modules, opening the queue, the first checks) allocates in bursts that make V8 grow the
// young generation to its 16 MB maximum and keep it, so an idle relay held ~14 MB it never used. Growth is
// held off while the command starts and allowed again (V8's default factor, 2) once it runs, so a loaded
// relay still gets the young generation it needs (bench/README.md, memory). Its ceiling is a command-line
// flag V8 reads only at start: `npm start`, the Dockerfile and the systemd unit pass --max-semi-space-size=4.
setFlagsFromString('--semi-space-growth-factor=1');

// Start-up also runs code often enough (module loading, the config schema) for TurboFan to optimize it, on
// background threads whose compile memory stays with the process: about 8 MB of an idle relay. Nothing
// run once at start needs optimized code, so TurboFan is off until the command runs; request handling
// is optimized as soon as it gets hot (test/cli/launcher.test.ts; intake unchanged, bench/README.md).
setFlagsFromString('--no-turbofan');

const root = fileURLToPath(new URL('..', import.meta.url));

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const stamp = join(root, 'dist', '.built');
const src = join(root, 'src');
const built = existsSync(stamp);
const fresh = !process.env.SCANRELAY_FROM_SOURCE && built && (!existsSync(src) || newestMtime(src) <= statSync(stamp).mtimeMs);
/** tsx's loader, when the dev dependencies are installed. */
async function tsx() {
  try {
    return await import('tsx/esm/api');
  } catch {
    return undefined;
  }
}
const loader = fresh ? undefined : await tsx();
if (loader) {
  loader.register();
  await import('../src/cli/main.ts');
} else if (built) {
  if (!fresh) process.stderr.write('scanrelay: src/ changed after dist/ was built; running dist/ (run `npm ci` or `npm run build` to include the change)\n');
  await import('../dist/scanrelay.js');
} else {
  process.stderr.write('scanrelay: dist/ is not built: install with `npm ci` (a production install: `npm ci && npm prune --omit=dev`)\n');
  process.exit(2);
}
// A server's command resolves once it listens; from here on the young generation may grow under load and
// hot code is optimized.
setFlagsFromString('--semi-space-growth-factor=2');
setFlagsFromString('--turbofan');
