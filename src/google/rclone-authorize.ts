import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { authorizationUrl, exchangeCode, startLoopbackReceiver } from './oauth.ts';
import { scopeUrls } from './rclone-drive-options.ts';
import type { GoogleEndpoints } from './endpoints.ts';
import { formatToken, parseToken } from './rclone-token.ts';

export const DEFAULT_AUTH_TIMEOUT_MS = 10 * 60_000;

/**
 * The browser half of rclone's oauth config for drive, with the user's own client id: a loopback receiver,
 * the authorization URL, the code exchange. Returns the token as rclone stores it (one-line JSON).
 */
export async function loopbackAuthorize(
  options: Record<string, string>,
  endpoints: GoogleEndpoints,
  say: (line: string) => void,
  timeoutMs = DEFAULT_AUTH_TIMEOUT_MS,
): Promise<string> {
  const client = { clientId: options.client_id, clientSecret: options.client_secret ?? '', authUrl: endpoints.authUrl, tokenUrl: endpoints.tokenUrl };
  const state = randomBytes(16).toString('hex');
  const receiver = await startLoopbackReceiver({ port: endpoints.loopbackPort, state }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE') {
      throw new Error(`port ${endpoints.loopbackPort} on 127.0.0.1 is in use (is another rclone or scanrelay authorization running?); set SCANRELAY_OAUTH_PORT=0 to use any free port`);
    }
    throw err;
  });
  try {
    const url = authorizationUrl(client, { redirectUri: receiver.redirectUri, scope: scopeUrls(options.scope ?? '').join(' '), state });
    say(`If your browser doesn't open automatically go to the following link: ${url}`);
    say('Log in and authorize scanrelay for access');
    say('Waiting for code...');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no authorization arrived within ${Math.round(timeoutMs / 60_000)} minutes`)), timeoutMs);
    });
    let code: string;
    try {
      code = await Promise.race([receiver.code, timeout]);
    } finally {
      clearTimeout(timer);
    }
    say('Got code');
    const token = await exchangeCode(client, code, receiver.redirectUri);
    return formatToken(parseToken(JSON.stringify(token)));
  } finally {
    await receiver.close();
  }
}

/**
 * Runs the real `rclone authorize "drive" ["<blob>"]` (needed for rclone's own client id, which only rclone
 * can use), showing its output to the user and returning it for the paste parser.
 */
export function runRcloneAuthorize(rclone: string, blob: string, show: (chunk: string) => void): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const args = ['authorize', 'drive', ...(blob ? [blob] : [])];
    const child = spawn(rclone, args, { stdio: ['inherit', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      stdout += text;
      show(text);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}
