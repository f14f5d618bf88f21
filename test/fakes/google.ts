import { createVerify, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { answerWithFields, DEFAULT_FIELDS } from './drive-fields.ts';

/**
 * A fake of Google's OAuth endpoints and the Drive v3 calls drive monitoring uses, on 127.0.0.1
 * (docs/protocols.md section 6): paths, query parameters, form grants, status codes and
 * JSON error shapes follow the real services. Every call is recorded.
 *
 * Paths: GET /o/oauth2/auth (consent: 302 to a loopback redirect, or the OOB success page),
 * POST /token (authorization_code, refresh_token, jwt-bearer), and under /drive/v3/:
 * changes/startPageToken, changes, files/{id}, drives, drives/{id}.
 */

export interface FakeFile {
  id: string;
  name: string;
  mimeType: string;
  parents?: string[];
  md5Checksum?: string;
  size?: string;
  trashed?: boolean;
  driveId?: string;
}

export interface FakeChange {
  seq: number;
  change: Record<string, unknown>;
}

export interface GoogleCall {
  method: string;
  path: string;
  query: Record<string, string>;
  form: Record<string, string>;
  bearer: string | undefined;
  status: number;
}

export const FOLDER = 'application/vnd.google-apps.folder';

interface Failure {
  path: string;
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export class FakeGoogle {
  readonly calls: GoogleCall[] = [];
  readonly client = { id: 'fake-client.apps.googleusercontent.com', secret: 'fake-secret' };
  readonly rootId = 'root-folder-id';
  /** Localised name of My Drive's root ("My Drive", "Mon Drive"...). */
  rootName: string;
  readonly files = new Map<string, FakeFile>();
  readonly sharedDrives = new Map<string, { id: string; name: string }>();
  /** Change logs: "root" for My Drive, else the shared drive's id. */
  private readonly logs = new Map<string, FakeChange[]>([['root', []]]);
  readonly validAccessTokens = new Set<string>();
  readonly refreshTokens = new Map<string, string>();
  /** Codes issued by the consent page: code -> redirect_uri it was issued for. */
  readonly codes = new Map<string, string>();
  /** Service accounts allowed to use the jwt-bearer grant: email -> public key. */
  readonly serviceAccounts = new Map<string, KeyObject>();
  /** Decoded claims of every accepted JWT assertion. */
  readonly assertions: Array<{ header: Record<string, unknown>; claims: Record<string, unknown> }> = [];
  private failures: Failure[] = [];
  private counter = 0;
  private server: Server | undefined;
  private sockets = new Set<Socket>();
  private port = 0;

  constructor(opts: { rootName?: string } = {}) {
    this.rootName = opts.rootName ?? 'My Drive';
    this.files.set(this.rootId, { id: this.rootId, name: this.rootName, mimeType: FOLDER });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  get authUrl(): string {
    return `${this.url}/o/oauth2/auth`;
  }
  get tokenUrl(): string {
    return `${this.url}/token`;
  }
  get driveUrl(): string {
    return `${this.url}/drive/v3/`;
  }

  /** The GOOGLE keys that point scanrelay at this fake (client and endpoints). */
  configKeys(): { CLIENT_ID: string; CLIENT_SECRET: string; OAUTH_AUTH_URL: string; OAUTH_TOKEN_URL: string; DRIVE_API_URL: string } {
    return { CLIENT_ID: this.client.id, CLIENT_SECRET: this.client.secret, OAUTH_AUTH_URL: this.authUrl, OAUTH_TOKEN_URL: this.tokenUrl, DRIVE_API_URL: this.driveUrl };
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  // ---- state helpers for tests -------------------------------------------------------------

  /** A fresh access token the Drive API accepts (and a refresh token for it). */
  issueToken(opts: { expiresIn?: number } = {}): { access_token: string; refresh_token: string; token_type: string; expiry: string } {
    const access = `ya29.fake-${++this.counter}`;
    const refresh = `1//fake-refresh-${this.counter}`;
    this.validAccessTokens.add(access);
    this.refreshTokens.set(refresh, this.client.id);
    return { access_token: access, refresh_token: refresh, token_type: 'Bearer', expiry: new Date(Date.now() + (opts.expiresIn ?? 3599) * 1000).toISOString() };
  }

  /** A shared drive; `id` picks its id (e.g. one a fixture already names), else a fresh one. */
  addSharedDrive(name: string, id = `0A-drive-${++this.counter}`): string {
    this.sharedDrives.set(id, { id, name });
    this.logs.set(id, []);
    return id;
  }

  /** Creates or updates an item and records a change for it, as Drive does. */
  put(file: Omit<FakeFile, 'mimeType'> & { mimeType?: string }): FakeFile {
    const full: FakeFile = { mimeType: 'video/x-matroska', ...file };
    this.files.set(full.id, full);
    this.record(full.driveId, { kind: 'drive#change', changeType: 'file', fileId: full.id, removed: false, file: this.view(full), ...(full.driveId ? { driveId: full.driveId } : {}) });
    return full;
  }

  /** Creates items without recording changes (they existed before monitoring started). */
  seed(file: Omit<FakeFile, 'mimeType'> & { mimeType?: string }): FakeFile {
    const full: FakeFile = { mimeType: FOLDER, ...file };
    this.files.set(full.id, full);
    return full;
  }

  trash(id: string): void {
    const f = this.files.get(id)!;
    f.trashed = true;
    this.record(f.driveId, { kind: 'drive#change', changeType: 'file', fileId: id, removed: false, file: this.view(f) });
  }

  /** Permanently deleted: the change carries no file. */
  remove(id: string): void {
    const f = this.files.get(id)!;
    this.files.delete(id);
    this.record(f.driveId, { kind: 'drive#change', changeType: 'file', fileId: id, removed: true });
  }

  /** The next `count` calls whose path ends with `path` fail with this status and body. */
  failNext(path: string, status: number, body?: unknown, count = 1, headers?: Record<string, string>): void {
    for (let i = 0; i < count; i++) this.failures.push({ path, status, body: body ?? googleError(status), headers });
  }

  driveCalls(): GoogleCall[] {
    return this.calls.filter((c) => c.path.startsWith('/drive/v3/'));
  }

  // ---- HTTP ----------------------------------------------------------------------------------

  private record(driveId: string | undefined, change: Record<string, unknown>): void {
    const log = this.logs.get(driveId ?? 'root')!;
    log.push({ seq: log.length + 1, change: { ...change, time: new Date().toISOString() } });
  }

  private view(f: FakeFile): Record<string, unknown> {
    const out: Record<string, unknown> = { kind: 'drive#file', id: f.id, name: f.name, mimeType: f.mimeType, trashed: f.trashed ?? false };
    if (f.parents) out.parents = f.parents;
    if (f.md5Checksum) out.md5Checksum = f.md5Checksum;
    if (f.size) out.size = f.size;
    if (f.driveId) out.driveId = f.driveId;
    return out;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const form = (req.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded') ? Object.fromEntries(new URLSearchParams(body)) : {};
    const auth = req.headers.authorization;
    const call: GoogleCall = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      form,
      bearer: auth?.startsWith('Bearer ') ? auth.slice(7) : undefined,
      status: 0,
    };
    this.calls.push(call);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      call.status = status;
      const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
      res.writeHead(status, { 'content-type': typeof payload === 'string' ? 'text/html; charset=utf-8' : 'application/json; charset=UTF-8', ...headers }).end(text);
    };
    const failure = this.failures.findIndex((f) => url.pathname.endsWith(f.path));
    if (failure >= 0) {
      const [f] = this.failures.splice(failure, 1);
      return send(f!.status, f!.body, f!.headers);
    }
    if (url.pathname === '/o/oauth2/auth' && req.method === 'GET') return this.consent(url, send, res, call);
    if (url.pathname === '/token' && req.method === 'POST') return this.token(form, send);
    if (url.pathname.startsWith('/drive/v3/') && req.method === 'GET') {
      if (!call.bearer || !this.validAccessTokens.has(call.bearer)) return send(401, googleError(401));
      return this.drive(url.pathname.slice('/drive/v3/'.length), url.searchParams, send);
    }
    send(404, { error: { code: 404, message: 'Not Found', errors: [{ reason: 'notFound', message: 'Not Found' }] } });
  }

  /** The user consents at once: a loopback redirect gets the code; OOB shows Google's success page. */
  private consent(url: URL, send: (s: number, p: unknown, h?: Record<string, string>) => void, res: ServerResponse, call: GoogleCall): void {
    const p = url.searchParams;
    if (p.get('client_id') !== this.client.id) return send(401, '<title>Error 401: invalid_client</title>');
    const redirect = p.get('redirect_uri') ?? '';
    if (p.get('response_type') !== 'code' || !p.get('scope')) return send(400, '<title>Error 400: invalid_request</title>');
    const code = `4/fake-code-${++this.counter}`;
    this.codes.set(code, redirect);
    if (redirect.startsWith('urn:ietf:wg:oauth:2.0:oob')) return send(200, `<html><head><title>Success code=${code}</title></head><body><textarea>${code}</textarea></body></html>`);
    const target = new URL(redirect);
    target.searchParams.set('code', code);
    target.searchParams.set('scope', p.get('scope')!);
    if (p.get('state')) target.searchParams.set('state', p.get('state')!);
    call.status = 302;
    res.writeHead(302, { location: target.toString() }).end();
  }

  private token(form: Record<string, string>, send: (s: number, p: unknown) => void): void {
    const grant = form.grant_type;
    if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer') return this.jwtGrant(form.assertion ?? '', send);
    if (form.client_id !== this.client.id || form.client_secret !== this.client.secret) {
      return send(401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
    }
    if (grant === 'authorization_code') {
      const issuedFor = this.codes.get(form.code ?? '');
      if (issuedFor === undefined) return send(400, { error: 'invalid_grant', error_description: 'Malformed auth code.' });
      if (issuedFor !== form.redirect_uri) return send(400, { error: 'redirect_uri_mismatch', error_description: 'Bad Request' });
      this.codes.delete(form.code!);
      const t = this.issueToken();
      return send(200, { access_token: t.access_token, expires_in: 3599, refresh_token: t.refresh_token, scope: 'https://www.googleapis.com/auth/drive', token_type: 'Bearer' });
    }
    if (grant === 'refresh_token') {
      if (!this.refreshTokens.has(form.refresh_token ?? '')) return send(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
      const access = `ya29.fake-${++this.counter}`;
      this.validAccessTokens.add(access);
      return send(200, { access_token: access, expires_in: 3599, scope: 'https://www.googleapis.com/auth/drive', token_type: 'Bearer' });
    }
    send(400, { error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${grant ?? ''}` });
  }

  private jwtGrant(assertion: string, send: (s: number, p: unknown) => void): void {
    const parts = assertion.split('.');
    const bad = (why: string) => send(400, { error: 'invalid_grant', error_description: why });
    if (parts.length !== 3) return bad('Invalid JWT: Token must be a short-lived token and in a reasonable timeframe');
    const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const key = this.serviceAccounts.get(String(claims.iss));
    if (!key) return bad('Invalid grant: account not found');
    const ok = createVerify('RSA-SHA256').update(`${parts[0]}.${parts[1]}`).verify(key, Buffer.from(parts[2]!, 'base64url'));
    if (!ok || header.alg !== 'RS256') return bad('Invalid JWT Signature.');
    const now = Math.floor(Date.now() / 1000);
    if (claims.aud !== this.tokenUrl) return bad('Invalid JWT: audience');
    if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number' || claims.exp - claims.iat > 3600 || claims.exp < now) return bad('Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
    this.assertions.push({ header, claims });
    const access = `ya29.fake-sa-${++this.counter}`;
    this.validAccessTokens.add(access);
    send(200, { access_token: access, expires_in: 3599, token_type: 'Bearer' });
  }

  private drive(path: string, q: URLSearchParams, sendAll: (s: number, p: unknown) => void): void {
    // Success answers hold only the fields asked for, as Drive's do; errors are whole.
    const send = (status: number, payload: unknown, defaults?: string) =>
      status === 200 && defaults ? answerWithFields(q, defaults, payload, sendAll) : sendAll(status, payload);
    const driveId = q.get('driveId') ?? undefined;
    if (driveId && !this.sharedDrives.has(driveId)) return send(404, googleError(404, `Shared drive not found: ${driveId}`));
    if (path === 'changes/startPageToken') {
      return send(200, { kind: 'drive#startPageToken', startPageToken: String(this.logs.get(driveId ?? 'root')!.length + 1) }, DEFAULT_FIELDS.startPageToken);
    }
    if (path === 'changes') {
      const token = Number(q.get('pageToken'));
      if (!Number.isInteger(token) || token < 1) return send(400, googleError(400, 'Invalid Value', 'invalid'));
      if (driveId && q.get('includeItemsFromAllDrives') !== 'true') {
        return send(403, googleError(403, 'The includeItemsFromAllDrives parameter must be set to true when driveId is specified.', 'teamDriveParametersRequired'));
      }
      const log = this.logs.get(driveId ?? 'root')!;
      const size = Math.min(Number(q.get('pageSize') ?? 100), 1000);
      const rest = log.filter((c) => c.seq >= token);
      const page = rest.slice(0, size);
      const out: Record<string, unknown> = { kind: 'drive#changeList', changes: page.map((c) => c.change) };
      if (rest.length > size) out.nextPageToken = String(rest[size]!.seq);
      else out.newStartPageToken = String(log.length + 1);
      return send(200, out, DEFAULT_FIELDS.changeList);
    }
    if (path.startsWith('files/')) {
      const id = decodeURIComponent(path.slice('files/'.length));
      const f = id === 'root' ? this.files.get(this.rootId) : this.files.get(id);
      if (!f) return send(404, googleError(404, `File not found: ${id}.`, 'notFound'));
      if (f.id === this.rootId) f.name = this.rootName;
      return send(200, this.view(f), DEFAULT_FIELDS.file);
    }
    if (path === 'drives') {
      return send(200, { kind: 'drive#driveList', drives: [...this.sharedDrives.values()].map((d) => ({ kind: 'drive#drive', ...d })) }, DEFAULT_FIELDS.driveList);
    }
    if (path.startsWith('drives/')) {
      const d = this.sharedDrives.get(decodeURIComponent(path.slice('drives/'.length)));
      if (!d) return send(404, googleError(404, 'Shared drive not found', 'notFound'));
      return send(200, { kind: 'drive#drive', ...d }, DEFAULT_FIELDS.drive);
    }
    send(404, googleError(404, 'Not Found', 'notFound'));
  }
}

/** Google's JSON error envelope (developers.google.com/workspace/drive/api/guides/handle-errors). */
export function googleError(code: number, message?: string, reason?: string): unknown {
  const defaults: Record<number, [string, string]> = {
    400: ['Bad Request', 'badRequest'],
    401: ['Request had invalid authentication credentials.', 'authError'],
    403: ['User Rate Limit Exceeded', 'userRateLimitExceeded'],
    404: ['Not Found', 'notFound'],
    429: ['Too Many Requests', 'rateLimitExceeded'],
    500: ['Internal Error', 'backendError'],
    503: ['Service Unavailable', 'backendError'],
  };
  const [m, r] = defaults[code] ?? ['Error', 'unknown'];
  return { error: { code, message: message ?? m, errors: [{ domain: 'global', reason: reason ?? r, message: message ?? m }] } };
}
