/*
 * The paths autopulse takes from a media manager's webhook, one function a trigger type, read from its
 * crates/service/src/settings/triggers/{sonarr,radarr,lidarr,readarr,sportarr}.rs (paths()). `search` is
 * autopulse's "check that it exists" flag: true for a new file, false for one that is gone.
 */

export interface AutopulsePath {
  path: string;
  search: boolean;
}

export type AutopulseWebhookType = 'sonarr' | 'radarr' | 'lidarr' | 'readarr' | 'sportarr';

/** The body does not have the shape serde wants for its eventType: autopulse answers 500 "Unable to parse request". */
export class AutopulseParseError extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

function field(o: unknown, key: string, where: string): unknown {
  if (!isObj(o) || o[key] === undefined || o[key] === null) throw new AutopulseParseError(`missing field \`${key}\` in ${where}`);
  return o[key];
}
function text(o: unknown, key: string, where: string): string {
  const v = field(o, key, where);
  if (typeof v !== 'string') throw new AutopulseParseError(`invalid type: \`${key}\` in ${where} must be a string`);
  return v;
}
/** A list that serde defaults to empty when absent (#[serde(default)]). */
function list(o: Obj, key: string, required = false): unknown[] {
  const v = o[key];
  if (v === undefined || v === null) {
    if (required) throw new AutopulseParseError(`missing field \`${key}\``);
    return [];
  }
  if (!Array.isArray(v)) throw new AutopulseParseError(`invalid type: \`${key}\` must be a list`);
  return v;
}

/** utils/src/join_path.rs: one slash between root and relative. */
export function joinPath(root: string, relative: string): string {
  return `${root.endsWith('/') ? root.slice(0, -1) : root}/${relative.startsWith('/') ? relative.slice(1) : relative}`;
}

/** The event name (eventType, "unknown" when absent: triggers/mod.rs:331) and the paths, in autopulse's order. */
export function autopulseWebhookPaths(type: AutopulseWebhookType, body: unknown): { event: string; paths: AutopulsePath[] } {
  if (!isObj(body)) throw new AutopulseParseError('invalid type: expected a JSON object');
  const event = typeof body.eventType === 'string' ? body.eventType : 'unknown';
  // serde's internally tagged enum: no eventType is an error; an unknown one is `Other` (no paths).
  if (body.eventType === undefined) throw new AutopulseParseError('missing field `eventType`');
  if (typeof body.eventType !== 'string') throw new AutopulseParseError('invalid type: `eventType` must be a string');
  return { event, paths: PATHS[type](event, body) };
}

const f = (path: string, search: boolean): AutopulsePath => ({ path, search });

const PATHS: Record<AutopulseWebhookType, (event: string, b: Obj) => AutopulsePath[]> = {
  // sonarr.rs:70-155
  sonarr(event, b) {
    switch (event) {
      case 'Download': {
        const root = text(b.series, 'path', 'series');
        const out: AutopulsePath[] = [];
        if (isObj(b.episodeFile)) out.push(f(joinPath(root, text(b.episodeFile, 'relativePath', 'episodeFile')), true));
        for (const e of list(b, 'episodeFiles')) out.push(f(joinPath(root, text(e, 'relativePath', 'episodeFiles[]')), true));
        for (const e of list(b, 'deletedFiles')) out.push(f(joinPath(root, text(e, 'relativePath', 'deletedFiles[]')), false));
        return out;
      }
      case 'Rename': {
        const root = text(b.series, 'path', 'series');
        return list(b, 'renamedEpisodeFiles', true).flatMap((e) => [f(text(e, 'previousPath', 'renamedEpisodeFiles[]'), false), f(joinPath(root, text(e, 'relativePath', 'renamedEpisodeFiles[]')), true)]);
      }
      case 'SeriesDelete':
        return [f(text(b.series, 'path', 'series'), false)];
      case 'EpisodeFileDelete':
        return [f(joinPath(text(b.series, 'path', 'series'), text(b.episodeFile, 'relativePath', 'episodeFile')), false)];
      default:
        return [];
    }
  },
  // radarr.rs:63-123
  radarr(event, b) {
    switch (event) {
      case 'Download': {
        const root = text(b.movie, 'folderPath', 'movie');
        const out = [f(joinPath(root, text(b.movieFile, 'relativePath', 'movieFile')), true)];
        for (const e of list(b, 'deletedFiles')) out.push(f(joinPath(root, text(e, 'relativePath', 'deletedFiles[]')), false));
        return out;
      }
      case 'MovieDelete':
        return [f(text(b.movie, 'folderPath', 'movie'), false)];
      case 'MovieFileDelete':
        return [f(joinPath(text(b.movie, 'folderPath', 'movie'), text(b.movieFile, 'relativePath', 'movieFile')), false)];
      case 'Rename':
        return [f(text(b.movie, 'folderPath', 'movie'), true)];
      default:
        return [];
    }
  },
  // lidarr.rs:74-122
  lidarr(event, b) {
    switch (event) {
      case 'Download':
        return list(b, 'trackFiles', true).map((e) => f(text(e, 'path', 'trackFiles[]'), true));
      case 'Rename':
        return list(b, 'renamedTrackFiles', true).flatMap((e) => [f(text(e, 'previousPath', 'renamedTrackFiles[]'), false), f(text(e, 'path', 'renamedTrackFiles[]'), true)]);
      case 'ArtistDelete':
      case 'AlbumDelete':
        return [f(text(b.artist, 'path', 'artist'), false)];
      default:
        return [];
    }
  },
  // readarr.rs:71-123
  readarr(event, b) {
    switch (event) {
      case 'Download':
        return list(b, 'bookFiles', true).map((e) => f(text(e, 'path', 'bookFiles[]'), true));
      case 'Rename':
        return list(b, 'renamedBookFiles', true).flatMap((e) => [f(text(e, 'previousPath', 'renamedBookFiles[]'), false), f(text(e, 'path', 'renamedBookFiles[]'), true)]);
      case 'AuthorDelete':
      case 'BookDelete':
        return [f(text(b.author, 'path', 'author'), false)];
      case 'BookFileDelete':
        return [f(text(b.bookFile, 'path', 'bookFile'), false)];
      default:
        return [];
    }
  },
  // sportarr.rs:65-155: series.path may be absent (a live SeriesDelete has none), then no paths.
  sportarr(event, b) {
    if (!['Download', 'Rename', 'SeriesDelete', 'EpisodeFileDelete'].includes(event)) return [];
    field(b, 'series', 'the body');
    const root = (b.series as Obj).path;
    if (root !== undefined && root !== null && typeof root !== 'string') throw new AutopulseParseError('invalid type: `series.path` must be a string');
    if (typeof root !== 'string') return [];
    switch (event) {
      case 'Download': {
        const out: AutopulsePath[] = [];
        if (isObj(b.episodeFile)) out.push(f(joinPath(root, text(b.episodeFile, 'relativePath', 'episodeFile')), true));
        for (const e of list(b, 'episodeFiles')) out.push(f(joinPath(root, text(e, 'relativePath', 'episodeFiles[]')), true));
        for (const e of list(b, 'deletedFiles')) out.push(f(joinPath(root, text(e, 'relativePath', 'deletedFiles[]')), false));
        return out;
      }
      case 'Rename':
        return [f(root, true)];
      case 'SeriesDelete':
        return [f(root, false)];
      default:
        return list(b, 'deletedFiles').map((e) => f(joinPath(root, text(e, 'relativePath', 'deletedFiles[]')), false));
    }
  },
};
