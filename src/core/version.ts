import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What a user reads to tell releases apart: package.json's version, and the commit where it is known. */
export interface BuildInfo {
  version: string;
  commit?: string;
}

/** The checkout or install root: the folder of scanrelay's package.json above this module (src/ and dist/src/ alike). */
function packageRoot(): { root: string; version: string } | undefined {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'scanrelay' && pkg.version) return { root: dir, version: pkg.version };
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The commit: the bundle records the one it was built from (scripts/build.mjs: git's HEAD, or SCANRELAY_COMMIT
 * in a Docker build); the sources ask git when they run from a checkout. Undefined when neither knows.
 */
function commitOf(root: string): string | undefined {
  const fromDist = !relative(join(root, 'dist'), fileURLToPath(import.meta.url)).startsWith('..' + sep);
  if (fromDist) {
    try {
      const stamp = JSON.parse(readFileSync(join(root, 'dist', '.built'), 'utf8')) as { commit?: unknown };
      return typeof stamp.commit === 'string' && stamp.commit ? stamp.commit : undefined;
    } catch {
      return undefined;
    }
  }
  if (!existsSync(join(root, '.git'))) return undefined;
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'], encoding: 'utf8', timeout: 5000 }).trim() || undefined;
  } catch {
    return undefined;
  }
}

let cached: BuildInfo | undefined;
export function buildInfo(): BuildInfo {
  if (!cached) {
    const pkg = packageRoot();
    cached = pkg ? { version: pkg.version, commit: commitOf(pkg.root) } : { version: 'unknown' };
  }
  return cached;
}

/** scanrelay's version: package.json above this module, from src/core/ and from the bundle alike. */
export function packageVersion(): string {
  return buildInfo().version;
}

/** "0.2.0 (commit 1a2b3c4d5e6f)", or "0.2.0" where the commit is not known. */
export function versionText(info: BuildInfo = buildInfo()): string {
  return info.commit ? `${info.version} (commit ${info.commit})` : info.version;
}
