import type { z } from 'zod';
import type { Logger } from '../core/logger.ts';
import { silentLogger } from '../core/logger.ts';
import {
  CHANGE_FIELDS,
  FILE_FIELDS,
  changeListSchema,
  driveFileSchema,
  driveListSchema,
  sharedDriveSchema,
  startPageTokenSchema,
  type ChangeList,
  type DriveFile,
  type SharedDrive,
} from './drive-types.ts';

/** Where access tokens come from: a token file, a service account or an rclone remote. */
export interface AccessTokenSource {
  /** A valid access token; `forceRefresh` after the API answered 401. */
  accessToken(forceRefresh?: boolean): Promise<string>;
  /** For messages: "token file /x/token.json", "service account a@b", "rclone remote gdrive:". */
  readonly description: string;
}

export type DriveErrorKind = 'auth' | 'retryable' | 'not-found' | 'invalid' | 'network';

export class DriveApiError extends Error {
  constructor(
    message: string,
    readonly kind: DriveErrorKind,
    readonly status?: number,
    readonly reason?: string,
    /** The API path that failed, e.g. "changes" or "files/<id>". */
    readonly path?: string,
  ) {
    super(message);
    this.name = 'DriveApiError';
  }
}

export interface BackoffOptions {
  /** First wait; doubles each retry, plus up to 1 s of jitter scaled the same way (Google's advice). */
  baseMs: number;
  maxMs: number;
  /** Tries in all, the first included. */
  attempts: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, maxMs: 64_000, attempts: 7 };

export interface DriveClientOptions {
  baseUrl: string;
  auth: AccessTokenSource;
  log?: Logger;
  backoff?: BackoffOptions;
  timeoutMs?: number;
  /** Called for every failed API call, retried or not (metrics). */
  onApiError?: (kind: DriveApiErrorMetric) => void;
}

export type DriveApiErrorMetric = 'auth' | 'rate_limit' | 'network' | 'server' | 'other';

const RATE_REASONS = new Set(['userRateLimitExceeded', 'rateLimitExceeded']);

/** Google Drive v3 over plain fetch: the calls drive monitoring needs, with backoff and one 401 refresh. */
export class DriveClient {
  private readonly base: string;
  private readonly log: Logger;
  private readonly backoff: BackoffOptions;

  constructor(private readonly opts: DriveClientOptions) {
    this.base = opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`;
    this.log = opts.log ?? silentLogger();
    this.backoff = opts.backoff ?? DEFAULT_BACKOFF;
  }

  async startPageToken(driveId?: string): Promise<string> {
    const params: Record<string, string> = { supportsAllDrives: 'true' };
    if (driveId) params.driveId = driveId;
    return (await this.get('changes/startPageToken', params, startPageTokenSchema)).startPageToken;
  }

  /**
   * One page of changes. My Drive is listed without shared-drive items; each watched shared drive
   * is listed on its own with its driveId, so drives outside TEAMDRIVES never show up.
   */
  changesPage(pageToken: string, driveId?: string): Promise<ChangeList> {
    const params: Record<string, string> = {
      pageToken,
      pageSize: '1000',
      includeRemoved: 'true',
      supportsAllDrives: 'true',
      includeItemsFromAllDrives: driveId ? 'true' : 'false',
      fields: CHANGE_FIELDS,
    };
    if (driveId) params.driveId = driveId;
    return this.get('changes', params, changeListSchema);
  }

  getFile(id: string): Promise<DriveFile> {
    return this.get(`files/${encodeURIComponent(id)}`, { supportsAllDrives: 'true', fields: FILE_FIELDS }, driveFileSchema);
  }

  getDrive(id: string): Promise<SharedDrive> {
    return this.get(`drives/${encodeURIComponent(id)}`, { fields: 'id,name' }, sharedDriveSchema);
  }

  async listDrives(): Promise<SharedDrive[]> {
    const out: SharedDrive[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const params: Record<string, string> = { pageSize: '100', fields: 'nextPageToken,drives(id,name)' };
      if (pageToken) params.pageToken = pageToken;
      const list = await this.get('drives', params, driveListSchema);
      out.push(...list.drives);
      pageToken = list.nextPageToken;
      if (!pageToken) break;
    }
    return out;
  }

  private async get<S extends z.ZodType>(path: string, params: Record<string, string>, schema: S): Promise<z.infer<S>> {
    const url = `${this.base}${path}?${new URLSearchParams(params)}`;
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      const token = await this.opts.auth.accessToken(false);
      let res: Response;
      try {
        res = await fetch(url, {
          headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
        });
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
        this.opts.onApiError?.('network');
        if (attempt < this.backoff.attempts) {
          await this.wait(attempt, undefined, `cannot reach ${this.base}: ${cause}`);
          continue;
        }
        throw new DriveApiError(`cannot reach the Drive API at ${this.base}: ${cause}`, 'network');
      }
      const text = await res.text();
      if (res.ok) {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          throw new DriveApiError(`Drive API ${path} answered ${res.status} with a body that is not JSON`, 'invalid', res.status);
        }
        const parsed = schema.safeParse(json);
        if (!parsed.success) throw new DriveApiError(`Drive API ${path} answered an unexpected shape: ${parsed.error.message}`, 'invalid', res.status);
        return parsed.data;
      }
      const { reason, message } = errorOf(text);
      const rateLimited = res.status === 429 || (res.status === 403 && !!reason && RATE_REASONS.has(reason));
      this.opts.onApiError?.(rateLimited ? 'rate_limit' : res.status === 401 || res.status === 403 ? 'auth' : res.status >= 500 ? 'server' : 'other');
      if (res.status === 401) {
        if (!refreshed) {
          refreshed = true;
          this.log.warn({ path }, 'Drive API answered 401: refreshing the access token once');
          await this.opts.auth.accessToken(true);
          continue;
        }
        throw new DriveApiError(
          `Drive API refused the access token from ${this.opts.auth.description} even after a refresh (401: ${message}); authorize again with "scanrelay authorize"`,
          'auth',
          401,
          reason,
          path,
        );
      }
      const retryable = rateLimited || res.status >= 500;
      if (retryable && attempt < this.backoff.attempts) {
        await this.wait(attempt, retryAfterMs(res.headers.get('retry-after')), `HTTP ${res.status}${reason ? ` ${reason}` : ''}`);
        continue;
      }
      const kind: DriveErrorKind = retryable ? 'retryable' : res.status === 404 ? 'not-found' : res.status === 403 ? 'auth' : 'invalid';
      throw new DriveApiError(`Drive API ${path} answered ${res.status}${reason ? ` (${reason})` : ''}: ${message}`, kind, res.status, reason, path);
    }
  }

  private async wait(attempt: number, retryAfter: number | undefined, why: string): Promise<void> {
    const exp = this.backoff.baseMs * 2 ** (attempt - 1);
    const jitter = Math.random() * this.backoff.baseMs;
    const ms = Math.min(this.backoff.maxMs, retryAfter ?? exp + jitter);
    this.log.warn({ attempt, waitMs: Math.round(ms) }, `Drive API: ${why}; retrying in ${Math.round(ms)} ms`);
    await new Promise((r) => setTimeout(r, ms));
  }
}

function errorOf(text: string): { reason?: string; message: string } {
  try {
    const body = JSON.parse(text) as { error?: { message?: string; errors?: Array<{ reason?: string }>; status?: string } | string; error_description?: string };
    if (typeof body.error === 'object' && body.error) {
      return { reason: body.error.errors?.[0]?.reason ?? body.error.status, message: body.error.message ?? text.slice(0, 200) };
    }
    if (typeof body.error === 'string') return { reason: body.error, message: body.error_description ?? body.error };
  } catch {
    /* not JSON */
  }
  return { message: text.slice(0, 200) || 'no body' };
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
