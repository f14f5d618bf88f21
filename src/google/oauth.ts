import { z } from 'zod';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * OAuth 2.0 authorization-code flow for installed apps, with a loopback redirect
 * (http://127.0.0.1:<port>/). Google blocked the out-of-band redirect for production clients in 2022-2023;
 * the loopback redirect works for "Desktop app" clients. Shared by `scanrelay authorize` (drive monitor)
 * and the rclone remote walkthrough.
 */

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  authUrl: string;
  tokenUrl: string;
}

/** A token as Google's token endpoint answers it (looseObject: Google adds fields), plus the absolute expiry we compute. */
const oauthTokenSchema = z.looseObject({
  access_token: z.string(),
  token_type: z.string().default('Bearer'),
  refresh_token: z.string().optional(),
  expires_in: z.number().optional(),
  scope: z.string().optional(),
  /** RFC 3339 expiry time. */
  expiry: z.string().optional(),
});
export type OAuthToken = z.infer<typeof oauthTokenSchema>;

export const OOB_REDIRECT = 'urn:ietf:wg:oauth:2.0:oob';
export const DRIVE_SCOPE = 'https://www.googleapis.com/auth/drive';

export class OAuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OAuthError';
  }
}

export function authorizationUrl(
  client: Pick<OAuthClient, 'clientId' | 'authUrl'>,
  opts: { redirectUri: string; scope: string; state?: string; prompt?: string | null },
): string {
  const url = new URL(client.authUrl);
  url.searchParams.set('scope', opts.scope);
  url.searchParams.set('redirect_uri', opts.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', client.clientId);
  url.searchParams.set('access_type', 'offline');
  if (opts.prompt !== null) url.searchParams.set('prompt', opts.prompt ?? 'consent');
  if (opts.state) url.searchParams.set('state', opts.state);
  return url.toString();
}

/**
 * What a user pasted after authorizing: the bare code, or the whole URL the browser ended on
 * (http://127.0.0.1:PORT/?code=...&scope=...). Returns the code, or throws with the reason.
 */
export function codeFromPaste(pasted: string): string {
  const text = pasted.trim();
  if (!text) throw new OAuthError('nothing was pasted: paste the authorization code or the whole address from the browser');
  if (/^https?:\/\//i.test(text)) {
    const url = new URL(text);
    const error = url.searchParams.get('error');
    if (error) throw new OAuthError(`the authorization was refused: ${error}`);
    const code = url.searchParams.get('code');
    if (!code) throw new OAuthError('the pasted address holds no "code" parameter');
    return code;
  }
  if (/\s/.test(text)) throw new OAuthError('an authorization code has no spaces: paste only the code or the address');
  return text;
}

export interface LoopbackReceiver {
  redirectUri: string;
  /** Resolves with the code once the browser reaches the loopback address. */
  code: Promise<string>;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 (a free port unless given) for the browser's redirect carrying the code. */
export async function startLoopbackReceiver(opts: { port?: number; state?: string; successHtml?: string } = {}): Promise<LoopbackReceiver> {
  let settle!: { resolve: (c: string) => void; reject: (e: Error) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  code.catch(() => {});
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const got = url.searchParams.get('code');
    const error = url.searchParams.get('error');
    if (!got && !error) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('waiting for the authorization redirect');
      return;
    }
    if (opts.state && url.searchParams.get('state') !== opts.state) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('state mismatch: start the authorization again');
      settle.reject(new OAuthError('state mismatch in the redirect: start the authorization again'));
      return;
    }
    if (error) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`authorization refused: ${error}`);
      settle.reject(new OAuthError(`the authorization was refused: ${error}`));
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(opts.successHtml ?? '<!DOCTYPE html><title>scanrelay</title><p>Success. You can close this window and go back to the terminal.</p>');
    settle.resolve(got!);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    redirectUri: `http://127.0.0.1:${port}/`,
    code,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/**
 * POSTs a grant to a token endpoint (form body, client credentials in it) and returns the token, with its
 * absolute expiry. `what` names the request in the error ("the request", "the service account a@b").
 */
export async function postTokenForm(tokenUrl: string, form: Record<string, string>, what = 'the request'): Promise<OAuthToken> {
  let res: Response;
  try {
    res = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    throw new OAuthError(`cannot reach the token endpoint ${tokenUrl}: ${cause?.code ?? (err as Error).message}`);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    /* reported below */
  }
  const token = oauthTokenSchema.safeParse(body);
  if (!res.ok || !token.success) {
    const fields = (body ?? {}) as { error?: unknown; error_description?: unknown };
    const reason = [fields.error, fields.error_description].filter((v) => typeof v === 'string' && v).join(': ') || text.slice(0, 200) || `HTTP ${res.status}`;
    throw new OAuthError(`the token endpoint refused ${what} (HTTP ${res.status}): ${reason}`);
  }
  return withExpiry(token.data);
}

const tokenRequest = (client: OAuthClient, form: Record<string, string>) => postTokenForm(client.tokenUrl, form);

export function withExpiry(token: OAuthToken, now = Date.now()): OAuthToken {
  if (token.expires_in === undefined || token.expiry) return token;
  return { ...token, expiry: new Date(now + token.expires_in * 1000).toISOString() };
}

/** Exchanges the code; the redirect_uri must repeat exactly the one in the authorization URL. */
export function exchangeCode(client: OAuthClient, code: string, redirectUri: string): Promise<OAuthToken> {
  return tokenRequest(client, {
    grant_type: 'authorization_code',
    code,
    client_id: client.clientId,
    client_secret: client.clientSecret,
    redirect_uri: redirectUri,
  });
}

/** A fresh access token from a refresh token; the refresh token is kept when none is re-issued. */
export async function refreshAccessToken(client: OAuthClient, refreshToken: string): Promise<OAuthToken> {
  const token = await tokenRequest(client, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: client.clientId,
    client_secret: client.clientSecret,
  });
  return { ...token, refresh_token: token.refresh_token ?? refreshToken };
}

/** True when the token expires within `marginMs` (or has no known expiry and no access token). */
export function isExpiring(token: Pick<OAuthToken, 'expiry' | 'access_token'>, marginMs = 60_000, now = Date.now()): boolean {
  if (!token.access_token) return true;
  if (!token.expiry) return false;
  return Date.parse(token.expiry) - now < marginMs;
}
