import { createSign } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { UserError } from '../core/errors.ts';
import { expandPath } from '../paths/expand.ts';
import type { AccessTokenSource } from './drive-client.ts';
import { DRIVE_SCOPE, postTokenForm } from './oauth.ts';

/**
 * A Google service account's JSON key, as far as the JWT grant needs it (docs/protocols.md section 6). Google
 * adds fields freely; `type` is "service_account" in every key Google issues, and when present must say so.
 */
const serviceAccountKeySchema = z.looseObject({
  type: z.literal('service_account').optional(),
  client_email: z.string().min(1),
  private_key: z.string().min(1),
  private_key_id: z.string().optional(),
  token_uri: z.string().optional(),
});
export type ServiceAccountKey = z.infer<typeof serviceAccountKeySchema>;

/** Parses a key's text; `where` names it in the error ("service account file /x/sa.json"). */
export function parseServiceAccountKey(text: string, where: string): ServiceAccountKey {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UserError(`${where} is not a service account key (not JSON)`);
  }
  const parsed = serviceAccountKeySchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const type = (json as { type?: unknown } | null)?.type;
  if (type !== undefined && type !== 'service_account') {
    throw new UserError(`${where} is not a service account key: its "type" is ${JSON.stringify(type)}, not "service_account"`);
  }
  throw new UserError(`${where} is not a service account key: it needs "client_email" and "private_key" (download a JSON key for the service account)`);
}

/** Reads a key file; the path is expanded (`~`, `$VAR`) as typed in a config or a prompt. */
export function readServiceAccountKey(typed: string, env: NodeJS.ProcessEnv = process.env): ServiceAccountKey {
  const file = expandPath(typed, env);
  let text: string;
  try {
    if (!statSync(file).isFile()) throw new UserError(`${file} is not a file`);
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof UserError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UserError(`${file} does not exist`);
    throw new UserError(`cannot read the service account file ${file}: ${(err as Error).message}`);
  }
  return parseServiceAccountKey(text, `service account file ${file}`);
}

/** A signed RS256 JWT assertion for the jwt-bearer grant (RFC 7523), valid one hour; `subject` acts as that user. */
export function signAssertion(key: ServiceAccountKey, audience: string, opts: { scope?: string; subject?: string; nowMs?: number } = {}): string {
  const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');
  const iat = Math.floor((opts.nowMs ?? Date.now()) / 1000);
  const header = { alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) };
  const claims = { iss: key.client_email, scope: opts.scope ?? DRIVE_SCOPE, aud: audience, iat, exp: iat + 3600, ...(opts.subject ? { sub: opts.subject } : {}) };
  const unsigned = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature = createSign('RSA-SHA256').update(unsigned).sign(key.private_key);
  return `${unsigned}.${b64url(signature)}`;
}

/**
 * Access tokens for a service account: a new assertion is exchanged whenever the last token nears expiry (a
 * service account has no refresh token). The token URL is the configured one, else the key's `token_uri`.
 */
export class ServiceAccountSource implements AccessTokenSource {
  readonly description: string;
  private readonly tokenUrl: string;
  private token: { value: string; expiresAt: number } | undefined;

  constructor(
    private readonly key: ServiceAccountKey,
    tokenUrl: string | undefined,
    private readonly opts: { scope?: string; subject?: string } = {},
  ) {
    this.tokenUrl = tokenUrl || key.token_uri || 'https://oauth2.googleapis.com/token';
    this.description = `service account ${key.client_email}`;
  }

  async accessToken(forceRefresh = false): Promise<string> {
    if (!forceRefresh && this.token && this.token.expiresAt - Date.now() > 60_000) return this.token.value;
    const assertion = signAssertion(this.key, this.tokenUrl, this.opts);
    const answer = await postTokenForm(this.tokenUrl, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }, `the service account ${this.key.client_email}`);
    this.token = { value: answer.access_token, expiresAt: Date.now() + (answer.expires_in ?? 3600) * 1000 };
    return this.token.value;
  }
}
