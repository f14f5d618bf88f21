import { FakePlex, type FakeItem } from './plex.ts';

/** What Plex's agent would find for a Fix Match search: an entry of its metadata catalogue. */
export interface CatalogEntry {
  guid: string;
  type: 'movie' | 'show';
  name: string;
  year: number;
  /** The ids Plex lists for it under Guid[]: `tmdb://603`, `imdb://tt0133093`, `tvdb://121361`. */
  ids: string[];
}

/*
 * A fake Plex with the item endpoints Plex Web's Fix Match uses (docs/protocols.md, "Fix match"; python-plexapi
 * mixins.py `matches`, `fixMatch`; plex_autoscan plex.py:652-719):
 * - GET /library/metadata/{key}[?includeGuids=1]: the item; Guid[] only when asked for, as Plex does;
 * - GET (or PUT, as the OpenAPI spec lists it) /library/metadata/{key}/matches?manual=1&title=...: SearchResult[];
 *   a title `tmdb-603` / `tvdb-121361` / `imdb-tt0133093` searches by that id;
 * - PUT /library/metadata/{key}/match?guid=...&name=...: the item takes the guid (and, for an agent guid in the
 *   catalogue, its ids and name); no guid: 400;
 * - PUT /library/metadata/{key}/split: every version (Media) after the first becomes an item of its own,
 *   unmatched until matched;
 * - PUT /library/metadata/{key}/refresh: 200.
 * Another method on these paths, or an unknown item, is 404 (Plex's "method not allowed").
 */
export class FakePlexLibrary extends FakePlex {
  catalog: CatalogEntry[] = [];

  item(key: string): FakeItem | undefined {
    return this.items.find((i) => i.ratingKey === key);
  }

  protected override handleMore(method: string, url: URL, send: (status: number, body?: string) => void): boolean {
    const m = /^\/library\/metadata\/(\d+)(?:\/(matches|match|split|refresh))?$/.exec(url.pathname);
    if (!m) return false;
    const item = this.item(m[1]!);
    const action = m[2];
    const q = url.searchParams;
    if (!item) return (send(404, ''), true);
    if (action === undefined) {
      if (method !== 'GET') return (send(404, ''), true);
      const json = { ...this.itemJson(item), ...(q.get('includeGuids') === '1' && item.guids ? { Guid: item.guids.map((id) => ({ id })) } : {}) };
      send(200, JSON.stringify({ MediaContainer: { size: 1, librarySectionID: Number(item.sectionId), Metadata: [json] } }));
      return true;
    }
    if (action === 'matches') {
      if (method !== 'GET' && method !== 'PUT') return (send(404, ''), true);
      const title = q.get('title') ?? '';
      const byId = /^(tmdb|tvdb|imdb)-(.+)$/.exec(title);
      const type = item.type === 'movie' ? 'movie' : 'show';
      const found = this.catalog.filter((c) => c.type === type && (byId ? c.ids.includes(`${byId[1]}://${byId[2]}`) : title !== '' && c.name.toLowerCase().includes(title.toLowerCase())));
      send(200, JSON.stringify({
        MediaContainer: {
          size: found.length,
          identifier: 'com.plexapp.plugins.library',
          SearchResult: found.map((c) => ({ guid: c.guid, name: c.name, year: c.year, score: 100, type: c.type, thumb: `https://metadata-static.plex.tv/${c.guid.split('/').pop()}.jpg`, lifespanEnded: false })),
        },
      }));
      return true;
    }
    if (method !== 'PUT') return (send(404, ''), true);
    if (action === 'match') {
      const guid = q.get('guid');
      if (!guid) return (send(400, ''), true);
      const entry = this.catalog.find((c) => c.guid === guid);
      item.guid = guid;
      item.guids = entry ? [...entry.ids] : undefined;
      item.title = entry?.name ?? q.get('name') ?? item.title;
    } else if (action === 'split') {
      let last = Math.max(...this.items.map((i) => Number(i.ratingKey)));
      for (const file of item.moreFiles ?? []) {
        const key = String(++last);
        this.items.push({ ratingKey: key, sectionId: item.sectionId, type: item.type, file, guid: `local://${key}`, addedAt: item.addedAt });
      }
      item.moreFiles = [];
    }
    send(200, '');
    return true;
  }
}
