import type { z } from 'zod';
import { classifyStatus, httpRequest, TargetError, TlsError, type Credential } from '../http.ts';
import { accountAnswer, activitiesAnswer, identityAnswer, parseAnswer, sectionsAnswer, serverAnswer } from './answers.ts';

export interface PlexSection {
  id: string;
  title: string;
  type: string;
  locations: string[];
  /** Plex is scanning the section now. */
  refreshing?: boolean;
}

export interface PlexActivity {
  uuid?: string;
  type: string;
  sectionId?: string;
  title?: string;
}

/** Plex answers a token it does not accept with 401 and an HTML page: the error says what that means instead. */
const PLEX_CREDENTIAL: Credential = {
  server: 'Plex',
  key: 'PLEX_TOKEN',
  howTo: 'it is wrong, or it was signed out; copy the X-Plex-Token of the server owner from Plex Web, Get Info > View XML',
};

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
    const err = classifyStatus(res.status, `Plex ${what}`, res.text, PLEX_CREDENTIAL);
    if (err) throw err;
    return res.text;
  }

  /** A GET whose JSON answer is parsed with `schema` (item listings and children for analyze). */
  async getJson<S extends z.ZodType>(path: string, schema: S, what: string): Promise<z.infer<S>> {
    return parseAnswer(await this.call('GET', path, what), schema, what);
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
    const mc = parseAnswer(text, identityAnswer, 'identity').MediaContainer;
    return { machineIdentifier: mc.machineIdentifier, version: mc.version };
  }

  /** The server's name (`friendlyName` of `GET /`, which needs the token). */
  async friendlyName(): Promise<string | undefined> {
    return parseAnswer(await this.call('GET', '/', 'server info'), serverAnswer, 'server info').MediaContainer.friendlyName;
  }

  /**
   * plex_autoscan's liveness test for PLEX_CHECK_BEFORE_SCAN: `GET /myplex/account` with the token answers
   * 200 and JSON holding `MyPlex` once Plex is ready for scans. Returns the account name.
   */
  async myplexAccount(): Promise<string> {
    const text = await this.call('GET', '/myplex/account', 'account check');
    const body = accountAnswer.safeParse(parseAnswer(text, accountAnswer.partial(), 'account check'));
    if (!body.success) throw new TargetError('unavailable', 'Plex account check: answer has no MyPlex object');
    return body.data.MyPlex.username ?? 'Unknown';
  }

  async activities(): Promise<PlexActivity[]> {
    const text = await this.call('GET', '/activities', 'activities');
    return parseAnswer(text, activitiesAnswer, 'activities').MediaContainer.Activity.map((a) => ({
      uuid: a.uuid,
      type: a.type,
      sectionId: a.Context?.librarySectionID,
      title: a.title,
    }));
  }

  /** A PUT whose answer is only its status (match, split, item refresh for PLEX_FIX_MISMATCHED). */
  async put(path: string, what: string): Promise<void> {
    await this.call('PUT', path, what);
  }

  async emptyTrash(sectionId: string): Promise<void> {
    await this.call('PUT', `/library/sections/${encodeURIComponent(sectionId)}/emptyTrash`, 'empty trash');
  }

  /** Refreshes one item's metadata from its agents (plexapi's refresh(); autopulse's refresh_item). */
  async refreshMetadata(ratingKey: string): Promise<void> {
    await this.call('PUT', `/library/metadata/${encodeURIComponent(ratingKey)}/refresh`, 'metadata refresh');
  }

  async analyze(metadataIds: readonly (string | number)[]): Promise<void> {
    await this.call('PUT', `/library/metadata/${metadataIds.map(String).join(',')}/analyze`, 'analyze');
  }
}

export function refreshPath(sectionId: string, folder: string): string {
  return `/library/sections/${encodeURIComponent(sectionId)}/refresh?path=${encodeURIComponent(folder)}`;
}

/** `MediaContainer.Directory[]{key,title,type,Location[]{path}}`; key is a string holding an int (or an int). */
export function parseSections(text: string): PlexSection[] {
  return parseAnswer(text, sectionsAnswer, 'section list').MediaContainer.Directory.map((d) => ({
    id: d.key,
    title: d.title,
    type: d.type,
    locations: d.Location.map((l) => l.path).filter(Boolean),
    refreshing: d.refreshing,
  }));
}
