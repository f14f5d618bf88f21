import { classifyStatus, httpRequest, TargetError, TlsError } from '../http.ts';

export interface PlexSection {
  id: string;
  title: string;
  type: string;
  locations: string[];
}

export interface PlexActivity {
  type: string;
  sectionId?: string;
  title?: string;
}

/** Thin client for the Plex Media Server HTTP API: JSON in, typed results out, errors by kind. */
export class PlexApi {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    /** PLEX_VERIFY_SSL: false accepts any certificate from an https PLEX_LOCAL_URL. */
    private readonly opts: { verifyTls?: boolean } = {},
  ) {}

  private url(path: string): string {
    return new URL(path.replace(/^\//, ''), this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`).toString();
  }

  private async call(method: string, path: string, what: string): Promise<string> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.token) headers['X-Plex-Token'] = this.token;
    let res;
    try {
      res = await httpRequest({ method, url: this.url(path), headers, verifyTls: this.opts.verifyTls }, `Plex (${method} ${path.split('?')[0]})`);
    } catch (err) {
      if (err instanceof TlsError) {
        // A LAN address has no certificate a client can check: say which key to change, in one line.
        throw new TlsError(
          `${err.message}: PLEX_LOCAL_URL ${this.baseUrl} does not pass the certificate check; use http:// for PLEX_LOCAL_URL on a LAN, or set PLEX_VERIFY_SSL to false`,
          err.code,
        );
      }
      throw err;
    }
    const err = classifyStatus(res.status, `Plex ${what}`, res.text);
    if (err) throw err;
    return res.text;
  }

  /** A GET whose answer is JSON (item listings and children for analyze). */
  async getJson(path: string, what: string): Promise<any> {
    return parseJson(await this.call('GET', path, what), what);
  }

  /** The exact request a scan makes, for logs and `scanrelay scan --dry-run`. */
  describeRefresh(sectionId: string, folder: string): string {
    return `GET ${this.url(refreshPath(sectionId, folder))} (header X-Plex-Token)`;
  }

  /** `/library/sections/all` is the same list; plex_autoscan's sections+ asks for that one. */
  async sections(path: '/library/sections' | '/library/sections/all' = '/library/sections'): Promise<PlexSection[]> {
    const text = await this.call('GET', path, 'section list');
    return parseSections(text);
  }

  /** Partial scan of one folder. GET: Plex 1.32.7+ answers PUT/POST on refresh with 404. */
  async refresh(sectionId: string, folder: string): Promise<void> {
    await this.call('GET', refreshPath(sectionId, folder), 'refresh');
  }

  async identity(): Promise<{ machineIdentifier?: string; version?: string }> {
    const text = await this.call('GET', '/identity', 'identity');
    const mc = parseJson(text, 'identity')?.MediaContainer ?? {};
    return { machineIdentifier: mc.machineIdentifier, version: mc.version };
  }

  /**
   * plex_autoscan's liveness test for PLEX_CHECK_BEFORE_SCAN: `GET /myplex/account` with the token answers
   * 200 and JSON holding `MyPlex` once Plex is ready for scans. Returns the account name.
   */
  async myplexAccount(): Promise<string> {
    const text = await this.call('GET', '/myplex/account', 'account check');
    const body = parseJson(text, 'account check');
    if (!body || typeof body !== 'object' || !('MyPlex' in body)) {
      throw new TargetError('unavailable', 'Plex account check: answer has no MyPlex object');
    }
    return String(body.MyPlex?.username ?? 'Unknown');
  }

  async activities(): Promise<PlexActivity[]> {
    const text = await this.call('GET', '/activities', 'activities');
    const list = parseJson(text, 'activities')?.MediaContainer?.Activity ?? [];
    return (Array.isArray(list) ? list : []).map((a: any) => ({
      type: String(a?.type ?? ''),
      sectionId: a?.Context?.librarySectionID !== undefined ? String(a.Context.librarySectionID) : undefined,
      title: a?.title,
    }));
  }

  async emptyTrash(sectionId: string): Promise<void> {
    await this.call('PUT', `/library/sections/${encodeURIComponent(sectionId)}/emptyTrash`, 'empty trash');
  }

  async analyze(metadataIds: readonly (string | number)[]): Promise<void> {
    await this.call('PUT', `/library/metadata/${metadataIds.map(String).join(',')}/analyze`, 'analyze');
  }
}

export function refreshPath(sectionId: string, folder: string): string {
  return `/library/sections/${encodeURIComponent(sectionId)}/refresh?path=${encodeURIComponent(folder)}`;
}

function parseJson(text: string, what: string): any {
  try {
    return JSON.parse(text);
  } catch {
    throw new TargetError('unavailable', `Plex ${what}: answer is not JSON`);
  }
}

/** `MediaContainer.Directory[]{key,title,type,Location[]{path}}`; key is a string holding an int (or an int). */
export function parseSections(text: string): PlexSection[] {
  const dirs = parseJson(text, 'section list')?.MediaContainer?.Directory ?? [];
  if (!Array.isArray(dirs)) return [];
  return dirs
    .filter((d: any) => d && d.key !== undefined)
    .map((d: any) => ({
      id: String(d.key),
      title: String(d.title ?? ''),
      type: String(d.type ?? ''),
      locations: (Array.isArray(d.Location) ? d.Location : []).map((l: any) => String(l?.path ?? '')).filter(Boolean),
    }));
}
