import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

/**
 * Debian's real rclone (1.60.1) as the reference reader and writer. Only local commands are used:
 * nothing here reaches the network (config create/update with --non-interactive and no token stop at
 * the config_token question).
 */
export const RCLONE = 'rclone';

function run(args: string[], env: NodeJS.ProcessEnv = {}): string {
  return execFileSync(RCLONE, args, { encoding: 'utf8', env: { ...process.env, RCLONE_CONFIG_PASS: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
}

/** `rclone config dump`: {remote: {key: value}}. */
export function rcloneDump(conf: string): Record<string, Record<string, string>> {
  return JSON.parse(run(['--config', conf, 'config', 'dump']));
}

export function rcloneShow(conf: string, name: string): string {
  return run(['--config', conf, 'config', 'show', name]);
}

export function rcloneListRemotes(conf: string): string[] {
  return run(['--config', conf, 'listremotes']).split('\n').filter(Boolean);
}

interface StateAnswer {
  State: string;
  Option: { Name: string; Help: string } | null;
  Error: string;
}

/** `rclone config create NAME drive k=v... --non-interactive`: the first question rclone asks. */
export function rcloneCreate(conf: string, name: string, options: Record<string, string>): StateAnswer {
  return JSON.parse(run(['--config', conf, 'config', 'create', name, 'drive', ...Object.entries(options).map(([k, v]) => `${k}=${v}`), '--non-interactive']));
}

/** Answers one question of rclone's config state machine. */
export function rcloneContinue(conf: string, name: string, state: string, result: string): StateAnswer {
  return JSON.parse(run(['--config', conf, 'config', 'update', name, '--continue', '--state', state, '--result', result, '--non-interactive']));
}

/**
 * The `rclone authorize "drive" "<blob>"` line real rclone prints for these answers: create, then answer
 * "Use auto config?" with false and read the config_token question. '' when rclone prints no blob.
 */
export function rcloneAuthorizeLine(conf: string, name: string, options: Record<string, string>): string {
  const first = rcloneCreate(conf, name, options);
  if (first.Option?.Name !== 'config_is_local') throw new Error(`rclone asked ${first.Option?.Name} instead of config_is_local`);
  const second = rcloneContinue(conf, name, first.State, 'false');
  if (second.Option?.Name !== 'config_token') throw new Error(`rclone asked ${second.Option?.Name} instead of config_token`);
  const line = second.Option.Help.split('\n').find((l) => l.includes('rclone authorize'));
  if (!line) throw new Error(`no authorize line in: ${second.Option.Help}`);
  return line.trim();
}

/**
 * A real crypt remote in its own rclone.conf: `name` (crypt over a local folder) with its password
 * obscured by rclone itself. Nothing is ever written to the wrapped folder.
 */
export function cryptConf(file: string, remotes: Record<string, string>): void {
  const sections = Object.entries(remotes).map(
    ([name, password]) => `[${name}]\ntype = crypt\nremote = /nonexistent/${name}\npassword = ${run(['obscure', password]).trim()}\n`,
  );
  writeFileSync(file, sections.join('\n'));
}

/** Names as the crypt remote stores them: `rclone cryptdecode --reverse` (rclone 1.60 has no cryptencode). */
export function cryptEncode(conf: string, remote: string, clear: string[]): string[] {
  // rclone 1.60 takes at most 10 names a run.
  if (clear.length > 10) return [...cryptEncode(conf, remote, clear.slice(0, 10)), ...cryptEncode(conf, remote, clear.slice(10))];
  const out = run(['--config', conf, 'cryptdecode', '--reverse', '--', remote, ...clear]);
  return clear.map((name) => {
    const line = out.split('\n').find((l) => l.startsWith(`${name} \t `));
    if (!line) throw new Error(`rclone did not encrypt ${name}: ${out}`);
    return line.slice(name.length + 3);
  });
}
