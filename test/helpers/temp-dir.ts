import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The folders this process made with tempDir(), each with what must happen before it goes (a PostgreSQL cluster
 * in it is stopped first). They are removed when the process exits: node's test runner runs each test file in a
 * process of its own, so a file's folders go when the file is done, whatever its tests did or failed to do, and a
 * long-lived machine or CI runner does not fill /tmp run after run.
 */
const made = new Map<string, (() => void) | undefined>();
let hooked = false;

/**
 * A child process the test left running (the OS ends it) may still write in the folder, e.g. a relay its log: a
 * file it adds while the folder is emptied makes the last step fail (ENOTEMPTY), and rmSync's own retries only
 * repeat that step, so the whole removal is tried again. Its open files go with the folder; its next write fails.
 */
function remove(dir: string): void {
  for (let attempt = 1; ; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true });
      return;
    } catch (err) {
      if (attempt >= 10 || (err as NodeJS.ErrnoException).code !== 'ENOTEMPTY') throw err;
    }
  }
}

function removeAll(): void {
  for (const [dir, before] of made) {
    // An exit handler must not throw: the runner would count the file failed after all its tests passed.
    try {
      before?.();
    } catch {
      // Removed anyway: PostgreSQL shuts itself down when its data folder's lock file is gone.
    }
    try {
      remove(dir);
    } catch {
      // Left behind rather than failing the file.
    }
  }
  made.clear();
}

/**
 * A new, empty folder of its own under the OS's temp folder (named `<prefix>XXXXXX`, for whoever looks at
 * /tmp while a test runs), removed when this process exits. `beforeRemoval` runs first, at exit.
 */
export function tempDir(prefix = 'scanrelay-test-', beforeRemoval?: () => void): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (!hooked) {
    hooked = true;
    process.once('exit', removeAll);
  }
  made.set(dir, beforeRemoval);
  return dir;
}
