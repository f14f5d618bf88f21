import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';

/** Where rclone.conf lives, and why we picked it (shown to the user). */
export interface RcloneConfPath {
  path: string;
  source: 'option' | 'env' | 'rclone' | 'search' | 'default';
}

/** The rclone executable on PATH, or undefined. */
export function findRcloneBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'rclone');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Parses `rclone config file` output: the path is the last non-empty line. */
export function pathFromConfigFileOutput(out: string): string | undefined {
  const lines = out.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const last = lines[lines.length - 1];
  return last && /rclone|\.conf$|\//.test(last) && !last.endsWith(':') ? last : undefined;
}

/**
 * rclone 1.60's own search order on Unix (fs/config/config.go makeConfigPath): rclone.conf beside the rclone
 * binary, `$XDG_CONFIG_HOME/rclone/rclone.conf`, `~/.config/rclone/rclone.conf`, `~/.rclone.conf`; the first
 * that exists wins. With none, a new file goes to the XDG folder when set, else ~/.config/rclone.
 */
export function searchRcloneConf(opts: { env?: NodeJS.ProcessEnv; home?: string; rcloneBinary?: string; exists?: (p: string) => boolean } = {}): RcloneConfPath {
  const env = opts.env ?? process.env;
  const home = opts.home ?? homedir();
  const exists = opts.exists ?? existsSync;
  const candidates: string[] = [];
  if (opts.rcloneBinary) {
    let bin = opts.rcloneBinary;
    try {
      bin = realpathSync(bin);
    } catch {
      /* keep the name as found */
    }
    candidates.push(join(dirname(bin), 'rclone.conf'));
  }
  const xdg = env.XDG_CONFIG_HOME ? join(env.XDG_CONFIG_HOME, 'rclone', 'rclone.conf') : undefined;
  if (xdg) candidates.push(xdg);
  const dotConfig = join(home, '.config', 'rclone', 'rclone.conf');
  candidates.push(dotConfig, join(home, '.rclone.conf'));
  const found = candidates.find((c) => exists(c));
  if (found) return { path: found, source: 'search' };
  return { path: xdg ?? dotConfig, source: 'default' };
}

/**
 * `--rclone-config`, else `$RCLONE_CONFIG`, else what `rclone config file` names when rclone is installed,
 * else rclone's own search order.
 */
export function resolveRcloneConfPath(option: string | undefined, env: NodeJS.ProcessEnv = process.env): RcloneConfPath {
  if (option) return { path: resolve(option), source: 'option' };
  if (env.RCLONE_CONFIG) return { path: resolve(env.RCLONE_CONFIG), source: 'env' };
  const rclone = findRcloneBinary(env);
  if (rclone) {
    try {
      const out = execFileSync(rclone, ['config', 'file'], { encoding: 'utf8', env, timeout: 15_000, stdio: ['ignore', 'pipe', 'ignore'] });
      const path = pathFromConfigFileOutput(out);
      if (path) return { path, source: 'rclone' };
    } catch {
      /* fall back to the search order below */
    }
  }
  return searchRcloneConf({ env, rcloneBinary: rclone });
}
