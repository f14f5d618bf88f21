import type { UpdateType } from '../../core/scan.ts';
import { classifyStatus, httpRequest } from '../http.ts';

export interface MediaUpdate {
  path: string;
  updateType: UpdateType;
}

/**
 * Jellyfin and Emby share this API (Emby is Jellyfin's ancestor): `POST /Library/Media/Updated` with
 * `{"Updates":[{"Path","UpdateType"}]}` and the key in `X-Emby-Token`; 204 is success. Emby serves it
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
  ) {
    const trimmed = url.replace(/\/+$/, '');
    this.base = prefix && trimmed.toLowerCase().endsWith(prefix) ? trimmed : `${trimmed}${prefix}`;
  }

  private async call(method: string, path: string, what: string, body?: unknown): Promise<string> {
    const headers: Record<string, string> = { Accept: 'application/json', 'X-Emby-Token': this.apiKey };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await httpRequest(
      { method, url: `${this.base}${path}`, headers, body: body === undefined ? undefined : JSON.stringify(body) },
      `${this.product} (${method} ${path})`,
    );
    const err = classifyStatus(res.status, `${this.product} ${what}`, res.text);
    if (err) throw err;
    return res.text;
  }

  /** The exact request a scan makes, for logs. */
  describeUpdate(): string {
    return `POST ${this.base}/Library/Media/Updated (header X-Emby-Token)`;
  }

  async mediaUpdated(updates: readonly MediaUpdate[]): Promise<void> {
    await this.call('POST', '/Library/Media/Updated', 'media update', { Updates: updates.map((u) => ({ Path: u.path, UpdateType: u.updateType })) });
  }

  async systemInfo(): Promise<{ serverName?: string; version?: string }> {
    const text = await this.call('GET', '/System/Info', 'system info');
    try {
      const info = JSON.parse(text);
      return { serverName: info?.ServerName, version: info?.Version };
    } catch {
      return {};
    }
  }
}
