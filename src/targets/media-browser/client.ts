import { z } from 'zod';
import type { UpdateType } from '../../core/scan.ts';
import type { TargetRequest } from '../../config/target-base.ts';
import { classifyStatus, httpRequest, parseJsonAnswer } from '../http.ts';

/** The answers read (docs/protocols.md section 4); the servers add fields freely. */
const virtualFoldersAnswer = z.array(z.looseObject({ Name: z.string().optional(), Locations: z.array(z.string()).optional().default([]) }));
const systemInfoAnswer = z.looseObject({ ServerName: z.string().optional(), Version: z.string().optional() });
/** `GET /System/Info/Public` (no key needed): the server's own Id and name. */
const publicInfoAnswer = z.looseObject({ Id: z.string().min(1), ServerName: z.string().optional() });

export interface MediaUpdate {
  path: string;
  updateType: UpdateType;
}

/**
 * Jellyfin and Emby share this API (Emby is Jellyfin's ancestor): `POST /Library/Media/Updated` with
 * `{"Updates":[{"Path","UpdateType"}]}`; 204 is success. The key goes in `Authorization: MediaBrowser
 * Token="…"` to Jellyfin: Jellyfin 12 turns EnableLegacyAuthorization off by default and then ignores
 * `X-Emby-Token`, `X-Emby-Authorization` and `api_key`, while 10.x takes both. Emby keeps `X-Emby-Token`. Emby serves it
 * under `/emby` (Cloudbox/autoscan's Emby target), so the Emby client has that prefix; a URL that
 * already ends in `/emby` gets no second one.
 */
export class MediaBrowserClient {
  private readonly base: string;

  constructor(
    readonly product: 'Jellyfin' | 'Emby',
    url: string,
    private readonly apiKey: string,
    prefix: '' | '/emby' = '',
    /** The target's REQUEST options (config/target-base.ts): timeout in seconds, certificate check, extra headers. */
    private readonly request: Partial<TargetRequest> = {},
  ) {
    const trimmed = url.replace(/\/+$/, '');
    this.base = prefix && trimmed.toLowerCase().endsWith(prefix) ? trimmed : `${trimmed}${prefix}`;
  }

  private async call(method: string, path: string, what: string, body?: unknown): Promise<string> {
    // The user's HEADERS first: the key and the content type are the API's own.
    const headers: Record<string, string> = { ...this.request.HEADERS, Accept: 'application/json', ...this.authHeader() };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const { TIMEOUT, VERIFY_SSL } = this.request;
    const res = await httpRequest(
      {
        method,
        url: `${this.base}${path}`,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        ...(TIMEOUT !== undefined ? { timeoutMs: TIMEOUT * 1000 } : {}),
        ...(VERIFY_SSL !== undefined ? { verifyTls: VERIFY_SSL } : {}),
      },
      `${this.product} (${method} ${path})`,
    );
    const err = classifyStatus(res.status, `${this.product} ${what}`, res.text, { server: this.product, key: `${this.product.toUpperCase()}.API_KEY` });
    if (err) throw err;
    return res.text;
  }

  private authHeader(): Record<string, string> {
    if (this.product === 'Emby') return { 'X-Emby-Token': this.apiKey };
    // A quote would end the quoted value; a key never holds one (Jellyfin's keys are hex).
    return { Authorization: `MediaBrowser Token="${this.apiKey.replace(/"/g, '')}"` };
  }

  /** The exact request a scan makes, for logs. */
  describeUpdate(): string {
    const header = this.product === 'Emby' ? 'X-Emby-Token' : 'Authorization: MediaBrowser Token';
    return `POST ${this.base}/Library/Media/Updated (header ${header})`;
  }

  async mediaUpdated(updates: readonly MediaUpdate[]): Promise<void> {
    await this.call('POST', '/Library/Media/Updated', 'media update', { Updates: updates.map((u) => ({ Path: u.path, UpdateType: u.updateType })) });
  }

  /** Every folder of every library (`GET /Library/VirtualFolders`: `[{"Name", "Locations": [...]}]`). */
  async libraryLocations(): Promise<string[]> {
    const folders = parseJsonAnswer(await this.call('GET', '/Library/VirtualFolders', 'library list'), virtualFoldersAnswer, `${this.product} library list`);
    return folders.flatMap((f) => f.Locations.filter((l) => l !== ''));
  }

  /** The server's own Id and name: the same whichever URL or key asks. */
  async publicInfo(): Promise<{ id: string; serverName?: string }> {
    const info = parseJsonAnswer(await this.call('GET', '/System/Info/Public', 'public system info'), publicInfoAnswer, `${this.product} public system info`);
    return { id: info.Id, serverName: info.ServerName };
  }

  async systemInfo(): Promise<{ serverName?: string; version?: string }> {
    const info = parseJsonAnswer(await this.call('GET', '/System/Info', 'system info'), systemInfoAnswer, `${this.product} system info`);
    return { serverName: info.ServerName, version: info.Version };
  }
}
