import type { Config } from '../config/schema.ts';
import type { LibraryLocation } from '../paths/pairing.ts';
import { baseUrl, okJson, ServiceError } from './http.ts';

/** A media server setup reads libraries and items from. */
export interface MediaServer {
  /** `plex`, `jellyfin` or `emby`: the relay's target of the same name. */
  name: 'plex' | 'jellyfin' | 'emby';
  service: string;
  locations(timeoutMs?: number): Promise<LibraryLocation[]>;
  /** Some file or folder paths of a library's items (a few hundred at most): for pairing by items. */
  itemPaths(libraryId: string, timeoutMs?: number): Promise<string[]>;
}

const ITEM_SAMPLE = 300;

const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const rec = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});

/** Plex's numeric item type of a section's files: episodes of shows, tracks of artists, movies. */
const PLEX_FILE_TYPE: Record<string, number> = { show: 4, artist: 10, movie: 1 };

export function plexServer(url: string, token: string): MediaServer {
  const base = baseUrl(url, `Plex at ${url}`);
  const service = `Plex at ${base}`;
  const headers = { 'X-Plex-Token': token };
  let types = new Map<string, string>();
  return {
    name: 'plex',
    service,
    async locations(timeoutMs) {
      const body = rec(await okJson({ service, what: 'GET /library/sections (library list)', url: `${base}/library/sections`, headers, timeoutMs }, 'token'));
      const dirs = asArray(rec(body.MediaContainer).Directory);
      if (!body.MediaContainer) throw new ServiceError(`${service}: /library/sections did not answer a Plex library list`);
      types = new Map(dirs.map((d) => [String(rec(d).key), String(rec(d).type)]));
      return dirs.flatMap((d) =>
        asArray(rec(d).Location).map((l) => ({ server: 'plex', libraryId: String(rec(d).key), library: String(rec(d).title ?? rec(d).key), path: String(rec(l).path ?? '') })),
      ).filter((l) => l.path);
    },
    async itemPaths(libraryId, timeoutMs) {
      const type = PLEX_FILE_TYPE[types.get(libraryId) ?? ''] ?? 1;
      const q = new URLSearchParams({ type: String(type), 'X-Plex-Container-Start': '0', 'X-Plex-Container-Size': String(ITEM_SAMPLE) });
      const body = rec(await okJson({ service, what: `the items of library ${libraryId}`, url: `${base}/library/sections/${encodeURIComponent(libraryId)}/all?${q}`, headers, timeoutMs }, 'token'));
      return asArray(rec(body.MediaContainer).Metadata).flatMap((m) => asArray(rec(m).Media).flatMap((md) => asArray(rec(md).Part).map((p) => String(rec(p).file ?? '')))).filter(Boolean);
    },
  };
}

/** Jellyfin (or Emby): `Authorization: MediaBrowser Token="..."`, which both take (Jellyfin 12 takes no other form). */
export function mediaBrowserServer(name: 'jellyfin' | 'emby', url: string, key: string): MediaServer {
  const label = name === 'jellyfin' ? 'Jellyfin' : 'Emby';
  const base = baseUrl(url, `${label} at ${url}`);
  const service = `${label} at ${base}`;
  const headers = { Authorization: `MediaBrowser Token="${key}"`, 'X-Emby-Token': key };
  return {
    name,
    service,
    async locations(timeoutMs) {
      const body = await okJson({ service, what: 'GET /Library/VirtualFolders (library list)', url: `${base}/Library/VirtualFolders`, headers, timeoutMs }, 'API key');
      if (!Array.isArray(body)) throw new ServiceError(`${service}: /Library/VirtualFolders did not answer a library list`);
      return body.flatMap((f) =>
        asArray(rec(f).Locations).map((l) => ({ server: name, libraryId: String(rec(f).ItemId ?? rec(f).Name), library: String(rec(f).Name ?? ''), path: String(l) })),
      ).filter((l) => l.path);
    },
    async itemPaths(libraryId, timeoutMs) {
      const q = new URLSearchParams({ ParentId: libraryId, Recursive: 'true', Fields: 'Path', EnableImages: 'false', StartIndex: '0', Limit: String(ITEM_SAMPLE) });
      const body = rec(await okJson({ service, what: `the items of library ${libraryId}`, url: `${base}/Items?${q}`, headers, timeoutMs }, 'API key'));
      return asArray(body.Items).map((i) => String(rec(i).Path ?? '')).filter(Boolean);
    },
  };
}

/**
 * The media servers the config already has, for those no flag names: the targets `plex` (with a token), `jellyfin`
 * and `emby` (with a URL), whether the file's PLEX_*, JELLYFIN and EMBY keys or TARGETS entries of those names.
 */
export function configuredServers(config: Pick<Config, 'targets'>, skip: { plex?: boolean; jellyfin?: boolean } = {}): MediaServer[] {
  const out: MediaServer[] = [];
  const plex = config.targets.get('plex');
  if (!skip.plex && plex?.TYPE === 'plex' && plex.TOKEN) out.push(plexServer(plex.URL, plex.TOKEN));
  for (const name of ['jellyfin', 'emby'] as const) {
    const entry = config.targets.get(name);
    if (name === 'jellyfin' && skip.jellyfin) continue;
    if (entry?.TYPE === name && entry.URL) out.push(mediaBrowserServer(name, entry.URL, entry.API_KEY));
  }
  return out;
}
