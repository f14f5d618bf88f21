import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { resolve } from 'node:path';

/**
 * The install's settings.yml names the rclone remote the install uses (`remote: cloud`). Only that one
 * top-level key is read or changed, line by line, so the rest of the file is left exactly as it was.
 */
export const DEFAULT_REMOTE_NAME = 'cloud';

const REMOTE_LINE = /^remote\s*:(.*)$/;

function unquote(raw: string): string {
  let v = raw.trim();
  if (!v.startsWith('"') && !v.startsWith("'")) v = v.replace(/\s+#.*$/, '');
  const q = v[0];
  if ((q === '"' || q === "'") && v.endsWith(q) && v.length >= 2) v = v.slice(1, -1);
  return v.trim();
}

/** The remote named by settings.yml text, or undefined when the key is absent or empty. */
export function remoteFromSettings(text: string): string | undefined {
  for (const line of text.split(/\r?\n/)) {
    const m = REMOTE_LINE.exec(line);
    if (m) return unquote(m[1]) || undefined;
  }
  return undefined;
}

/** settings.yml text with `remote:` set to name (added at the end when absent). */
export function setRemoteInSettings(text: string, name: string): string {
  const value = /^[A-Za-z0-9_.-]+$/.test(name) ? name : JSON.stringify(name);
  const lines = text.split('\n');
  const i = lines.findIndex((l) => REMOTE_LINE.test(l.replace(/\r$/, '')));
  if (i >= 0) {
    const cr = lines[i].endsWith('\r') ? '\r' : '';
    lines[i] = `remote: ${value}${cr}`;
    return lines.join('\n');
  }
  const sep = text === '' || text.endsWith('\n') ? '' : '\n';
  return `${text}${sep}remote: ${value}\n`;
}

export interface InstallSettings {
  path: string;
  exists: boolean;
  remote: string;
}

/** `--settings`, else $SCANRELAY_SETTINGS, else ./settings.yml; the remote defaults to `cloud`. */
export function readInstallSettings(option: string | undefined, env: NodeJS.ProcessEnv = process.env): InstallSettings {
  const path = resolve(option ?? env.SCANRELAY_SETTINGS ?? 'settings.yml');
  if (!existsSync(path)) return { path, exists: false, remote: DEFAULT_REMOTE_NAME };
  return { path, exists: true, remote: remoteFromSettings(readFileSync(path, 'utf8')) ?? DEFAULT_REMOTE_NAME };
}

export function writeRemoteToSettings(path: string, name: string): void {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  writeFileAtomic(path, setRemoteInSettings(text, name));
}
