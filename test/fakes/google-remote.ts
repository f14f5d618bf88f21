import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerWithFields, DEFAULT_FIELDS } from './drive-fields.ts';

/**
 * A small fake of the Google endpoints a drive remote setup touches, on 127.0.0.1:
 * - GET  /o/oauth2/auth   (consent screen: approves at once, 302 to redirect_uri with code and state)
 * - POST /token           (authorization_code, refresh_token and jwt-bearer grants, Google's JSON shapes)
 * - GET  /drive/v3/drives (drives.list with pageSize/pageToken, Bearer auth, Drive's error body on 401)
 * Every call is recorded.
 */
export interface FakeCall {
  method: string;
  path: string;
  query: Record<string, string>;
  form: Record<string, string>;
  authorization?: string;
}

export interface FakeGoogle {
  base: string;
  authUrl: string;
  tokenUrl: string;
  driveApiUrl: string;
  calls: FakeCall[];
  /** Shared drives drives.list returns (two per page, so paging is exercised). */
  drives: Array<{ id: string; name: string }>;
  /** Access tokens the Drive API accepts. */
  validTokens: Set<string>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => resolve(body));
  });
}

export async function startFakeGoogle(opts: { drives?: Array<{ id: string; name: string }> } = {}): Promise<FakeGoogle> {
  const calls: FakeCall[] = [];
  const drives = opts.drives ?? [];
  const validTokens = new Set<string>(['ya29.fake-access']);
  let issued = 0;
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const body = await readBody(req);
    const form = Object.fromEntries(new URLSearchParams(body));
    const call: FakeCall = { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), form, authorization: req.headers.authorization };
    calls.push(call);
    const json = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(value));

    if (req.method === 'GET' && url.pathname === '/o/oauth2/auth') {
      const redirect = url.searchParams.get('redirect_uri');
      if (!redirect || !url.searchParams.get('client_id') || url.searchParams.get('response_type') !== 'code') {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('Error 400: invalid_request');
        return;
      }
      const target = new URL(redirect);
      target.searchParams.set('code', `4/fake-code-${calls.length}`);
      target.searchParams.set('scope', url.searchParams.get('scope') ?? '');
      const state = url.searchParams.get('state');
      if (state) target.searchParams.set('state', state);
      res.writeHead(302, { location: target.toString() }).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      const grant = form.grant_type;
      if (grant === 'authorization_code' && form.code?.startsWith('4/fake-code-') && form.client_id && form.redirect_uri) {
        const access = `ya29.fake-access-${++issued}`;
        validTokens.add(access);
        json(200, { access_token: access, expires_in: 3599, refresh_token: `1//fake-refresh-${issued}`, scope: 'https://www.googleapis.com/auth/drive', token_type: 'Bearer' });
        return;
      }
      if (grant === 'refresh_token' && form.refresh_token) {
        const access = `ya29.fake-refreshed-${++issued}`;
        validTokens.add(access);
        json(200, { access_token: access, expires_in: 3599, scope: 'https://www.googleapis.com/auth/drive', token_type: 'Bearer' });
        return;
      }
      if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer' && form.assertion?.split('.').length === 3) {
        const access = `ya29.fake-sa-${++issued}`;
        validTokens.add(access);
        json(200, { access_token: access, expires_in: 3599, token_type: 'Bearer' });
        return;
      }
      json(400, { error: 'invalid_grant', error_description: 'Bad Request' });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/drive/v3/drives') {
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!validTokens.has(token)) {
        json(401, {
          error: {
            code: 401,
            message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
            errors: [{ message: 'Invalid Credentials', domain: 'global', reason: 'authError', location: 'Authorization', locationType: 'header' }],
            status: 'UNAUTHENTICATED',
          },
        });
        return;
      }
      const pageSize = Math.min(Number(url.searchParams.get('pageSize') ?? 10), 2);
      const start = Number(url.searchParams.get('pageToken') ?? 0);
      const page = drives.slice(start, start + pageSize).map((d) => ({ kind: 'drive#drive', ...d }));
      const next = start + pageSize < drives.length ? String(start + pageSize) : undefined;
      answerWithFields(url.searchParams, DEFAULT_FIELDS.driveList, { kind: 'drive#driveList', ...(next ? { nextPageToken: next } : {}), drives: page }, json);
      return;
    }
    json(404, { error: { code: 404, message: 'Not Found' } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    authUrl: `${base}/o/oauth2/auth`,
    tokenUrl: `${base}/token`,
    driveApiUrl: `${base}/drive/v3/`,
    calls,
    drives,
    validTokens,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
