// better-sqlite3 compiles SQLite when no prebuilt binary fits (a new Node, an arm64 image): node-gyp leaves
// its object files, a static library and a test extension beside the module, about 15 MB that nothing
// loads. Only build/Release/better_sqlite3.node is needed at run time (the `bindings` package looks there);
// `npm rebuild` makes the rest again from deps/, which stays.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Removes the build leftovers under `moduleDir` (node_modules/better-sqlite3); returns what it removed. */
export function removeNativeLeftovers(moduleDir) {
  const release = join(moduleDir, 'build', 'Release');
  if (!existsSync(join(release, 'better_sqlite3.node'))) return [];
  const removed = [];
  for (const name of readdirSync(release)) {
    if (name === 'better_sqlite3.node') continue;
    rmSync(join(release, name), { recursive: true, force: true });
    removed.push(join('build', 'Release', name));
  }
  for (const name of readdirSync(join(moduleDir, 'build'))) {
    if (name === 'Release') continue;
    rmSync(join(moduleDir, 'build', name), { recursive: true, force: true });
    removed.push(join('build', name));
  }
  return removed;
}
