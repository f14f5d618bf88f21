import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * A path from a config file or a prompt, expanded as a shell (and rclone's env.ShellExpand) would: a leading
 * `~` is the home folder first, then `$VAR` and `${VAR}` are replaced (an unset variable by nothing).
 */
export function expandPath(path: string, env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  let out = path;
  if (out === '~') out = home;
  else if (out.startsWith('~/')) out = join(home, out.slice(2));
  return out.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, a: string | undefined, b: string | undefined) => env[(a ?? b)!] ?? '');
}
