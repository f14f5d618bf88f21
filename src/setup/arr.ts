import { baseUrl, callJson, okJson, ServiceError } from './http.ts';

export const ARR_KINDS = ['sonarr', 'radarr', 'lidarr', 'readarr'] as const;
export type ArrKind = (typeof ARR_KINDS)[number];

const INFO: Record<ArrKind, { label: string; api: string; items: string }> = {
  sonarr: { label: 'Sonarr', api: 'v3', items: 'series' },
  radarr: { label: 'Radarr', api: 'v3', items: 'movie' },
  // Lidarr and Readarr keep API v1 (their Api.V1 projects); the provider and root folder resources are the same.
  lidarr: { label: 'Lidarr', api: 'v1', items: 'artist' },
  readarr: { label: 'Readarr', api: 'v1', items: 'author' },
};

/** A notification connection as the *arrs' API has it (ProviderResource + NotificationResource). */
export interface Connection {
  id?: number;
  name: string;
  implementation: string;
  configContract?: string;
  fields: Array<{ name: string; value?: unknown; [k: string]: unknown }>;
  tags?: number[];
  [flag: string]: unknown;
}

export function fieldValue(c: Connection, name: string): unknown {
  return c.fields.find((f) => f.name === name)?.value;
}

export function withField(c: Connection, name: string, value: unknown): Connection {
  const fields = c.fields.some((f) => f.name === name) ? c.fields.map((f) => (f.name === name ? { ...f, value } : f)) : [...c.fields, { name, value }];
  return { ...c, fields };
}

/** The connections that make the *arr tell a media server itself (Sonarr's/Radarr's PlexServer and MediaBrowser = Emby/Jellyfin). */
export const LIBRARY_UPDATERS = ['PlexServer', 'MediaBrowser', 'Emby', 'Jellyfin'];

/** One Sonarr, Radarr, Lidarr or Readarr, reached with its API key in X-Api-Key. */
export class ArrClient {
  readonly label: string;
  readonly base: string;
  readonly service: string;
  private readonly api: string;

  constructor(
    readonly kind: ArrKind,
    url: string,
    private readonly key: string,
    private readonly timeoutMs?: number,
  ) {
    this.label = INFO[kind].label;
    this.base = baseUrl(url, `${INFO[kind].label} at ${url}`);
    this.service = `${this.label} at ${this.base}`;
    this.api = `${this.base}/api/${INFO[kind].api}`;
    if (!key) throw new ServiceError(`${this.service}: no API key given (--${kind}-key)`);
  }

  private call(what: string, path: string, method = 'GET', body?: unknown): Promise<unknown> {
    return okJson({ service: this.service, what, method, url: `${this.api}${path}`, headers: { 'X-Api-Key': this.key }, body, timeoutMs: this.timeoutMs }, 'API key');
  }

  async status(): Promise<{ appName: string; version: string; instanceName?: string }> {
    const s = (await this.call('GET system/status', '/system/status')) as Record<string, unknown>;
    if (!s || typeof s !== 'object' || Array.isArray(s)) throw new ServiceError(`${this.service}: system/status did not answer as a ${this.label} does (is the URL right?)`);
    const appName = typeof s.appName === 'string' ? s.appName : '';
    if (appName && appName.toLowerCase() !== this.kind) throw new ServiceError(`${this.service}: this is ${appName}, not ${this.label} (check --${this.kind})`);
    return { appName, version: String(s.version ?? ''), ...(typeof s.instanceName === 'string' ? { instanceName: s.instanceName } : {}) };
  }

  async rootFolders(): Promise<string[]> {
    const list = await this.call('GET rootfolder (root folders)', '/rootfolder');
    if (!Array.isArray(list)) throw new ServiceError(`${this.service}: rootfolder did not answer a list`);
    return list.map((r) => String((r as Record<string, unknown>).path ?? '')).filter(Boolean);
  }

  /** The folders of its series, movies, artists or authors (the first `max`). */
  async itemFolders(max = 20): Promise<string[]> {
    // Only a help for pairing and the sample path: an *arr that does not list them is still set up.
    const { status, body: list } = await callJson({ service: this.service, what: `GET ${INFO[this.kind].items} (items)`, url: `${this.api}/${INFO[this.kind].items}`, headers: { 'X-Api-Key': this.key }, timeoutMs: this.timeoutMs });
    if (status < 200 || status >= 300 || !Array.isArray(list)) return [];
    return list
      .map((r) => String((r as Record<string, unknown>).path ?? ''))
      .filter(Boolean)
      .slice(0, max);
  }

  async connections(): Promise<Connection[]> {
    const list = await this.call('GET notification (connections)', '/notification');
    return Array.isArray(list) ? (list as Connection[]) : [];
  }

  async webhookTemplate(): Promise<Connection> {
    const list = await this.call('GET notification/schema', '/notification/schema');
    const hook = Array.isArray(list) ? (list as Connection[]).find((c) => c.implementation === 'Webhook') : undefined;
    if (!hook) throw new ServiceError(`${this.service}: its notification/schema lists no Webhook connection`);
    return hook;
  }

  async create(c: Connection): Promise<Connection> {
    return (await this.call('POST notification (add the Webhook connection)', '/notification', 'POST', c)) as Connection;
  }

  /** PUT notification/{id}; forceSave skips the *arr's own test of the connection (ProviderControllerBase.cs:98-117). */
  async update(c: Connection, what: string, forceSave = false): Promise<Connection> {
    return (await this.call(what, `/notification/${c.id}${forceSave ? '?forceSave=true' : ''}`, 'PUT', c)) as Connection;
  }

  /** POST notification/test: the *arr sends its Test event to the connection; 2xx when the receiver took it. */
  async test(c: Connection): Promise<void> {
    await this.call('POST notification/test', '/notification/test', 'POST', c);
  }
}

/** The event flags a scan relay wants on: imports, upgrades, renames, retags and deletes, where the *arr supports them. */
export function wantedEvent(flag: string): boolean {
  return /^on(Download|ReleaseImport|Upgrade|Rename|[A-Za-z]*Retag|[A-Za-z]*Delete)$/.test(flag);
}

/**
 * Each *arr's import, upgrade, rename, retag and delete flags, set even when the schema's template leaves them out:
 * a connection with no event on is disabled and never sent anything. From each NotificationResource.cs (Sonarr and
 * Radarr Api.V3, Lidarr and Readarr Api.V1); a flag an older version lacks is ignored by it.
 */
export const EVENT_FLAGS: Record<ArrKind, string[]> = {
  sonarr: ['onDownload', 'onUpgrade', 'onRename', 'onEpisodeFileDelete', 'onSeriesDelete'],
  radarr: ['onDownload', 'onUpgrade', 'onRename', 'onMovieFileDelete', 'onMovieDelete'],
  lidarr: ['onReleaseImport', 'onUpgrade', 'onRename', 'onTrackRetag', 'onArtistDelete', 'onAlbumDelete'],
  readarr: ['onReleaseImport', 'onUpgrade', 'onRename', 'onBookRetag', 'onAuthorDelete', 'onBookDelete', 'onBookFileDelete'],
};

/** The Webhook connection setup registers: the template with URL, POST, the relay's credentials and the events. */
export function webhookConnection(template: Connection, opts: { kind: ArrKind; name: string; url: string; username: string; password: string }): Connection {
  let c: Connection = { ...template, name: opts.name, implementation: 'Webhook', configContract: template.configContract ?? 'WebhookSettings', tags: template.tags ?? [] };
  delete c.presets;
  for (const key of Object.keys(template)) {
    if (!/^on[A-Z]/.test(key)) continue;
    const supported = template[`supportsO${key.slice(1)}`];
    c[key] = wantedEvent(key) && supported !== false;
  }
  for (const key of EVENT_FLAGS[opts.kind]) if (template[`supportsO${key.slice(1)}`] !== false) c[key] = true;
  c = withField(c, 'url', opts.url);
  c = withField(c, 'method', 1); // WebhookMethod.POST = 1 (Webhook/WebhookMethod.cs)
  c = withField(c, 'username', opts.username);
  c = withField(c, 'password', opts.password);
  return c;
}
