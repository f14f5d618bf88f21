import { z } from 'zod';
import type { Target } from '../../core/scan.ts';
import type { Logger } from '../../core/logger.ts';
import type { RewriteRule } from '../../paths/rewrite.ts';
import { ServiceClient, type RequestOptions } from '../http.ts';
import { CachedList } from '../cached-list.ts';
import { deepestHolder } from '../path-match.ts';
import { serviceTarget } from '../service-target.ts';

/** `GET /api/v3/series` and `GET /api/v3/movie`: the fields read (SeriesResource / MovieResource). */
export const arrItemsAnswer = z.array(z.looseObject({ id: z.number().int(), title: z.string().optional(), path: z.string().nullish() }));
export type ArrItem = z.infer<typeof arrItemsAnswer>[number];

/** `GET /api/v3/rootfolder`: the folders the series or movies live in. */
const rootFoldersAnswer = z.array(z.looseObject({ path: z.string() }));

/** The series or movie whose folder holds `path` (or is it), by whole path segments (sonarr.rs:48-54). */
export function arrItemFor(path: string, items: readonly ArrItem[]): ArrItem | undefined {
  return deepestHolder(path, items, (i) => i.path ?? undefined);
}

export interface ArrKind {
  product: 'Sonarr' | 'Radarr';
  /** `/api/v3/series` or `/api/v3/movie`. */
  list: string;
  /** "series" or "movie", in messages. */
  noun: string;
  /**
   * The command for one item. Sonarr's RefreshSeries takes `seriesId` (v3) and fills `seriesIds` (v4) from it;
   * Radarr's RefreshMovie takes `movieIds`. Neither is ever sent empty: an empty list refreshes everything.
   */
  command(id: number): Record<string, unknown>;
}

/**
 * Sonarr or Radarr as a target (autoscan #210: a second *arr sees files another tool moved): finds the series
 * or movie whose folder holds the scan's folder, then asks for its refresh and rescan (`POST /api/v3/command`,
 * which answers 201 and runs it in the background). The key goes in `X-Api-Key`.
 */
export function createArrTarget(kind: ArrKind, name: string, entry: { URL: string; API_KEY: string; REWRITE: RewriteRule[]; REQUEST: RequestOptions }, log: Logger): Target {
  const client = new ServiceClient({ product: kind.product, url: entry.URL, request: entry.REQUEST, headers: { 'X-Api-Key': entry.API_KEY }, secrets: [entry.API_KEY] });
  // A list of every series or movie can be megabytes: read once a minute, and again for one not in it.
  const items = new CachedList(() => client.json('GET', kind.list, `${kind.noun} list`, arrItemsAnswer));
  return serviceTarget(name, entry, {
    async send(item) {
      const { found: hit } = await items.find((list) => arrItemFor(item.folder, list));
      if (!hit) return { outcome: 'failed', error: `no ${kind.product} ${kind.noun} has its folder at or above ${item.folder}` };
      const command = kind.command(hit.id);
      log.debug({ target: name, scan: item.id, [kind.noun]: hit.title ?? hit.id, command: command.name }, `asking ${kind.product} to refresh`);
      await client.call('POST', '/api/v3/command', 'command', command);
      return { outcome: 'done', detail: `${command.name} of "${hit.title ?? hit.id}" (id ${hit.id})` };
    },
    async libraryRoots() {
      return (await client.json('GET', '/api/v3/rootfolder', 'root folder list', rootFoldersAnswer)).map((r) => r.path);
    },
    probe: () => client.json('GET', '/api/v3/system/status', 'system status', z.looseObject({})),
  });
}
