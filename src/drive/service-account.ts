import { createSign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { UserError } from '../config/errors.ts';
import { DRIVE_SCOPE, OAuthError } from '../oauth/flow.ts';
import type { AccessTokenSource } from './client.ts';

/** The fields of a Google service account key file that the JWT grant needs. */
export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

/** `~` and `$VAR` / `${VAR}` expanded, as a shell would for a path in the config. */
export function expandPath(path: string, env: NodeJS.ProcessEnv = process.env): string {
  const withVars = path.replace(/\$\{(\w+)\}|\$(\w+)/g, (_m, a: string | undefined, b: string | undefined) => env[(a ?? b)!] ?? '');
  return withVars === '~' || withVars.startsWith('~/') ? homedir() + withVars.slice(1) : withVars;
}

export function parseServiceAccountKey(text: string, where: string): ServiceAccountKey {
  let key: Partial<ServiceAccountKey> & { type?: string };
  try {
    key = JSON.parse(text);
  } catch {
    throw new UserError(`${where} is not a service account key (not JSON)`);
  }
  if (!key || typeof key.client_email !== 'string' || typeof key.private_key !== 'string') {
    throw new UserError(`${where} is not a service account key: it needs "client_email" and "private_key" (download a JSON key for the service account)`);
  }
  return key as ServiceAccountKey;
}

export function readServiceAccountKey(file: string): ServiceAccountKey {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read the service account file ${file}: ${(err as Error).message}`);
  }
  return parseServiceAccountKey(text, `service account file ${file}`);
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** A signed RS256 JWT assertion for the jwt-bearer grant (RFC 7523), valid one hour. */
export function signAssertion(key: ServiceAccountKey, audience: string, scope = DRIVE_SCOPE, nowMs = Date.now()): string {
  const iat = Math.floor(nowMs / 1000);
  const header = { alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) };
  const claims = { iss: key.client_email, scope, aud: audience, iat, exp: iat + 3600 };
  const unsigned = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature = createSign('RSA-SHA256').update(unsigned).sign(key.private_key);
  return `${unsigned}.${b64url(signature)}`;
}

/** Access tokens for a service account: a new assertion is exchanged whenever the last token nears expiry. */
export class ServiceAccountSource implements AccessTokenSource {
  readonly description: string;
  private token: { value: string; expiresAt: number } | undefined;

  constructor(
    private readonly key: ServiceAccountKey,
    private readonly tokenUrl: string,
  ) {
    this.description = `service account ${key.client_email}`;
  }

  async accessToken(forceRefresh = false): Promise<string> {
    if (!forceRefresh && this.token && this.token.expiresAt - Date.now() > 60_000) return this.token.value;
    let res: Response;
    try {
      res = await fetch(this.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
          assertion: signAssertion(this.key, this.tokenUrl),
        }).toString(),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
      throw new OAuthError(`cannot reach the token endpoint ${this.tokenUrl}: ${cause}`);
    }
    const body = (await res.json().catch(() => ({}))) as { access_token?: string; expires_in?: number; error?: string; error_description?: string };
    if (!res.ok || typeof body.access_token !== 'string') {
      throw new OAuthError(
        `the token endpoint refused the service account ${this.key.client_email} (HTTP ${res.status}): ${[body.error, body.error_description].filter(Boolean).join(': ') || 'no detail'}`,
      );
    }
    this.token = { value: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 3600) * 1000 };
    return this.token.value;
  }
}
