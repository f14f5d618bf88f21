import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { UserError } from '../core/errors.ts';
import type { OAuthToken } from './oauth.ts';

/** Reads `--tokenfile`; undefined when it does not exist yet. */
export function readTokenFile(file: string): OAuthToken | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UserError(`cannot read the drive token file ${file}: ${(err as Error).message}`);
  }
  let token: OAuthToken;
  try {
    token = JSON.parse(text);
  } catch {
    throw new UserError(`the drive token file ${file} is not JSON: run "scanrelay authorize" again`);
  }
  if (!token || typeof token.access_token !== 'string') throw new UserError(`the drive token file ${file} holds no access_token: run "scanrelay authorize" again`);
  return token;
}

/** Writes the token readable by its owner only (0600), replacing the old file atomically. */
export function writeTokenFile(file: string, token: OAuthToken): void {
  writeFileAtomic(file, `${JSON.stringify(token, null, 2)}\n`, { mode: 0o600 });
}
