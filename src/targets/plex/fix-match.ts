import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import type { PlexSettings } from './settings.ts';
import type { Logger } from '../../core/logger.ts';
import { longestPrefix, parentFolder } from '../../paths/mapping.ts';
import type { PlexApi } from './api.ts';
import { findLeavesByFile, type LeafItem } from './api-items.ts';
import type { LookupRetry } from './analyze.ts';
import { itemAnswer, matchesAnswer, sectionsAnswer } from './answers.ts';

/*
 * PLEX_FIX_MISMATCHED over Plex's HTTP API (plex_autoscan: plex.py:212-221 and match_item_parent, plex.py:260-353,
 * which read Plex's database). After a file scan from Sonarr or Radarr, the scanned file's movie or show is
 * compared with the ids the webhook named; when they differ it is matched again, as Plex Web's "Fix Match" does.
 * The endpoints are in docs/protocols.md ("Fix match"):
 * - the file's item: the section listing analyze uses (api-items.ts); its show is the episode's grandparent;
 * - the item's ids: GET /library/metadata/{key}?includeGuids=1 -> guid and Guid[] (`tmdb://603`, `imdb://tt0133093`);
 * - a merged item (parts in other folders) is split first: PUT /library/metadata/{key}/split (plex.py:288-329);
 * - today's agents (tv.plex.agents.*): GET /library/metadata/{key}/matches?manual=1&title=tmdb-<id>, then
 *   PUT /library/metadata/{key}/match?guid=<result guid>&name=<result name>;
 * - legacy agents (com.plexapp.agents.*): PUT .../match with plex_autoscan's own guid
 *   `com.plexapp.agents.<imdb|themoviedb|thetvdb>://<id>?lang=<PLEX_FIX_MISMATCHED_LANG>` (plex.py:335-345);
 * - then PUT /library/metadata/{key}/refresh (plex.py:346, 699-719).
 */

export type FixMatchConfig = Pick<PlexSettings, 'FIX_MISMATCHED' | 'FIX_MISMATCHED_LANG'>;

/** The external ids a webhook named, by Plex's scheme names. */
export interface ExternalIds {
  tmdb?: string;
  tvdb?: string;
  imdb?: string;
}

const SCHEMES = ['tmdb', 'tvdb', 'imdb'] as const;

/** tmdbId / tvdbId / imdbId from a queued scan's ids (the *arr webhooks' names). */
export function wantedIds(ids: Readonly<Record<string, string | number>>): ExternalIds {
  const out: ExternalIds = {};
  for (const scheme of SCHEMES) {
    const value = ids[`${scheme}Id`];
    if (value !== undefined && String(value).trim() && String(value) !== '0') out[scheme] = String(value).trim();
  }
  return out;
}

/** `Guid[].id` values (`tmdb://603`) as ids; other schemes are ignored. */
export function idsOfGuids(guids: readonly string[]): ExternalIds {
  const out: ExternalIds = {};
  for (const g of guids) {
    const m = /^(tmdb|tvdb|imdb):\/\/(.+)$/.exec(g);
    if (m) out[m[1] as keyof ExternalIds] ??= m[2];
  }
  return out;
}

const LEGACY_TYPE: Record<string, keyof ExternalIds> = { imdb: 'imdb', themoviedb: 'tmdb', thetvdb: 'tvdb' };

/** `com.plexapp.agents.thetvdb://121361?lang=en` -> tvdb 121361 (an episode's `/1/1` suffix dropped). */
export function idsOfLegacyGuid(guid: string): ExternalIds {
  const m = /^com\.plexapp\.agents\.([a-z]+):\/\/([^/?]+)/i.exec(guid);
  const scheme = m && LEGACY_TYPE[m[1]!.toLowerCase()];
  return scheme ? { [scheme]: m[2] } : {};
}

/**
 * plex_autoscan's guid for a legacy agent (plex.py:336-337): Radarr's imdb id first, else its tmdb id
 * (scan.py:411-419); Sonarr's tvdb id (scan.py:440-443); id and language in lower case.
 */
export function legacyGuid(sectionType: string, wanted: ExternalIds, lang: string): string | undefined {
  const pick: Array<[keyof ExternalIds, string]> = sectionType === 'show' ? [['tvdb', 'thetvdb']] : [['imdb', 'imdb'], ['tmdb', 'themoviedb']];
  for (const [scheme, agent] of pick) {
    const id = wanted[scheme];
    if (id) return `com.plexapp.agents.${agent}://${id.toLowerCase()}?lang=${lang.toLowerCase()}`;
  }
  return undefined;
}

/** The title Plex's Fix Match searches by id with (`tmdb-603`, `tvdb-121361`), best id first. */
export function matchSearchTitle(sectionType: string, wanted: ExternalIds): string | undefined {
  const order: Array<keyof ExternalIds> = sectionType === 'show' ? ['tvdb', 'tmdb', 'imdb'] : ['tmdb', 'imdb'];
  const scheme = order.find((s) => wanted[s]);
  return scheme && `${scheme}-${wanted[scheme]}`;
}

export type Verdict = { kind: 'ok'; why: string } | { kind: 'fix'; why: string } | { kind: 'unknown'; why: string };

/**
 * Does the item's match agree with the webhook's ids? Any id both sides name that agrees: matched. Ids both
 * name, none agreeing: mismatched. An unmatched item (no guid from an agent, no ids): mismatched. Nothing to
 * compare otherwise: left alone. (plex_autoscan compared whole legacy guids, so the same id from another
 * legacy agent or language was matched again; it skipped an item without a guid: plex.py:339.)
 */
export function judgeMatch(current: { guid: string; ids: ExternalIds }, wanted: ExternalIds): Verdict {
  const both = SCHEMES.filter((s) => current.ids[s] !== undefined && wanted[s] !== undefined);
  const agree = both.filter((s) => current.ids[s]!.toLowerCase() === wanted[s]!.toLowerCase());
  const shown = (ids: ExternalIds) => SCHEMES.filter((s) => ids[s]).map((s) => `${s}://${ids[s]}`).join(', ');
  if (agree.length) return { kind: 'ok', why: `${shown(current.ids)} agrees with the webhook` };
  if (both.length) return { kind: 'fix', why: `Plex has ${shown(current.ids)}, the webhook names ${shown(wanted)}` };
  if (!current.guid) return { kind: 'unknown', why: 'the item has no guid yet' };
  if (Object.keys(current.ids).length === 0 && !/^plex:\/\//.test(current.guid)) return { kind: 'fix', why: `the item is not matched (${current.guid})` };
  return { kind: 'unknown', why: `no id to compare (Plex: ${current.guid}${Object.keys(current.ids).length ? `, ${shown(current.ids)}` : ''}; webhook: ${shown(wanted)})` };
}

/** plex_autoscan's merged-item test (plex.py:288-291, 440-453): the item has media outside the scanned file's folder. */
export function isMerged(leafFiles: readonly string[], file: string): boolean {
  const folder = parentFolder(file);
  return leafFiles.some((f) => f && f !== file && !f.startsWith(`${folder}/`));
}

type Section = z.infer<typeof sectionsAnswer>['MediaContainer']['Directory'][number];

export interface FixMatchDeps {
  config: FixMatchConfig;
  api: PlexApi;
  log: Logger;
  retry: LookupRetry;
}

export interface ScannedFiles {
  files: readonly string[];
  ids: Readonly<Record<string, string | number>>;
  title: string | null;
}

const enc = encodeURIComponent;

/** The movie or show a leaf item belongs to: the movie itself, an episode's grandparent. */
function topKey(section: Section, leaf: LeafItem): string | undefined {
  if (section.type === 'movie') return leaf.ratingKey;
  if (section.type === 'show') return leaf.grandparentRatingKey;
  return undefined;
}

async function leafOf(deps: FixMatchDeps, section: Section, file: string, signal: AbortSignal): Promise<LeafItem | undefined> {
  for (let attempt = 1; attempt <= deps.retry.tries; attempt++) {
    const leaf = (await findLeavesByFile(deps.api, { id: section.key, type: section.type }, [file])).get(file);
    if (leaf) return leaf;
    if (attempt < deps.retry.tries) await sleep(deps.retry.delayMs, undefined, { signal });
  }
  return undefined;
}

/**
 * PLEX_FIX_MISMATCHED for one scanned file request. Returns a short outcome for the history ('' when there
 * was nothing to do); logs each step under the key; never throws except when aborted.
 */
export async function fixMismatched(deps: FixMatchDeps, scan: ScannedFiles, signal: AbortSignal): Promise<string> {
  const { api, config, log } = deps;
  if (!config.FIX_MISMATCHED || scan.files.length === 0) return '';
  const wanted = wantedIds(scan.ids);
  const ctx = { key: 'PLEX_FIX_MISMATCHED' };
  // plex_autoscan fixed matches only for requests that carried a title and an id (plex.py:215).
  if (Object.keys(wanted).length === 0) return '';
  const file = scan.files[0]!;
  try {
    const sections = (await api.getJson('/library/sections', sectionsAnswer, 'section list')).MediaContainer.Directory;
    const section = longestPrefix(file, sections.flatMap((s) => s.Location.map((l) => ({ s, path: l.path }))), (p) => p.path)?.s;
    if (!section || (section.type !== 'movie' && section.type !== 'show')) return '';
    const legacy = section.agent.startsWith('com.plexapp.agents.');
    if (!legacy && !section.agent.startsWith('tv.plex.agents.')) {
      log.info({ ...ctx, section: section.key, agent: section.agent }, 'the section\'s agent matches nothing by id; match not checked');
      return `match not checked (agent ${section.agent})`;
    }
    let leaf = await leafOf(deps, section, file, signal);
    if (!leaf) {
      log.warn({ ...ctx, file }, 'file not found in its Plex section; match not checked');
      return 'match not checked: file not in Plex';
    }
    let key = topKey(section, leaf);
    if (key && isMerged(leaf.files, file)) {
      // plex_autoscan splits the merged item, waits, and looks the file up again (plex.py:291-329).
      log.info({ ...ctx, item: key, files: leaf.files }, 'the item holds files from other folders: splitting it first');
      await api.put(`/library/metadata/${enc(key)}/split`, 'split');
      await sleep(deps.retry.delayMs, undefined, { signal });
      leaf = await leafOf(deps, section, file, signal);
      key = leaf && topKey(section, leaf);
    }
    if (!key) return 'match not checked: no movie or show for the file';
    const item = (await api.getJson(`/library/metadata/${enc(key)}?includeGuids=1`, itemAnswer, 'item')).MediaContainer.Metadata[0];
    if (!item) return 'match not checked: item not found';
    const ids = legacy ? idsOfLegacyGuid(item.guid) : idsOfGuids(item.Guid.map((g) => g.id));
    const verdict = judgeMatch({ guid: item.guid, ids }, wanted);
    const itemCtx = { ...ctx, item: key, title: item.title, guid: item.guid };
    if (verdict.kind !== 'fix') {
      log.info({ ...itemCtx, why: verdict.why }, verdict.kind === 'ok' ? 'Plex match agrees with the webhook' : 'Plex match not checked');
      return verdict.kind === 'ok' ? 'match ok' : `match not checked: ${verdict.why}`;
    }
    let guid: string | undefined;
    let name = scan.title ?? item.title;
    if (legacy) {
      guid = legacyGuid(section.type, wanted, config.FIX_MISMATCHED_LANG);
    } else {
      const title = matchSearchTitle(section.type, wanted);
      const query = `manual=1&title=${enc(title ?? '')}&year=&agent=${enc(section.agent)}&language=${enc(section.language)}`;
      const best = title && (await api.getJson(`/library/metadata/${enc(key)}/matches?${query}`, matchesAnswer, 'matches')).MediaContainer.SearchResult[0];
      if (!best) {
        log.warn({ ...itemCtx, why: verdict.why, search: title }, 'Plex found no match for the webhook\'s id; match left as it is');
        return `match not fixed: Plex found nothing for ${title}`;
      }
      guid = best.guid;
      name = best.name || name;
    }
    if (!guid) return '';
    await api.put(`/library/metadata/${enc(key)}/match?guid=${enc(guid)}&name=${enc(name)}`, 'match');
    await api.put(`/library/metadata/${enc(key)}/refresh`, 'item refresh');
    log.info({ ...itemCtx, why: verdict.why, to: guid, name }, 'Plex match fixed');
    return `match fixed: ${item.guid || 'unmatched'} -> ${guid}`;
  } catch (err) {
    if (signal.aborted) throw err;
    log.warn({ ...ctx, file, err: (err as Error).message }, 'fixing the Plex match failed');
    return 'match fix failed';
  }
}
