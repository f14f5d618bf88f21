import { createSign } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** rclone's env.ShellExpand: a leading `~` is the home folder, then `$VAR` / `${VAR}` are replaced. */
export function expandPath(path: string, env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  let out = path;
  if (out === '~') out = home;
  else if (out.startsWith('~/')) out = join(home, out.slice(2));
  return out.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, a: string | undefined, b: string | undefined) => env[(a ?? b)!] ?? '');
}

export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri?: string;
}

/** Reads a service-account key file (path as typed; expanded here). Throws with the reason. */
export function readServiceAccountFile(typed: string, env: NodeJS.ProcessEnv = process.env): ServiceAccountKey {
  const path = expandPath(typed, env);
  if (!existsSync(path)) throw new Error(`${path} does not exist`);
  if (!statSync(path).isFile()) throw new Error(`${path} is not a file`);
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new Error(`${path} is not JSON`);
  }
  if (json.type !== 'service_account') throw new Error(`${path} is not a service account key: its "type" is ${JSON.stringify(json.type ?? null)}, not "service_account"`);
  for (const k of ['client_email', 'private_key'] as const) if (typeof json[k] !== 'string' || !json[k]) throw new Error(`${path} has no "${k}"`);
  return json as unknown as ServiceAccountKey;
}

/** An access token for a service account (JWT bearer grant, RFC 7523), e.g. to list shared drives. */
export async function serviceAccountToken(key: ServiceAccountKey, scope: string, tokenUrl?: string, subject?: string): Promise<string> {
  const aud = tokenUrl ?? key.token_uri ?? 'https://oauth2.googleapis.com/token';
  const now = Math.floor(Date.now() / 1000);
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const header = b64({ alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) });
  const claims = b64({ iss: key.client_email, scope, aud, iat: now, exp: now + 3600, ...(subject ? { sub: subject } : {}) });
  const signature = createSign('RSA-SHA256').update(`${header}.${claims}`).sign(key.private_key).toString('base64url');
  const res = await fetch(aud, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: `${header}.${claims}.${signature}` }).toString(),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await res.json().catch(() => ({}))) as { access_token?: string; error?: string; error_description?: string };
  if (!res.ok || !body.access_token) throw new Error(`the token endpoint refused the service account (HTTP ${res.status}): ${body.error_description ?? body.error ?? ''}`);
  return body.access_token;
}
