import { z } from 'zod';
import { deleteOfItem, fileDelete, rename, upgradeOr } from './events.ts';
import { fileList, lenientId, lenientObject, lenientText, mediaFileSchema, optional, pathField, renamedFileSchema, upgradeAndDeleteFields } from './fields.ts';
import { arrRecognizer, type Plan } from './recognizer.ts';
import { fileScans, filesOf, fullPath, previousPath, type Base } from './scans.ts';

const radarrPayload = z.object({
  movie: optional(
    z.object({
      folderPath: optional(pathField),
      title: lenientText,
      tmdbId: lenientId,
      imdbId: lenientId,
    }),
  ),
  /** What the release was grabbed as; plex_autoscan took the title and ids from here. */
  remoteMovie: lenientObject(z.object({ title: lenientText, tmdbId: lenientId, imdbId: lenientId })),
  movieFile: optional(mediaFileSchema),
  renamedMovieFiles: fileList(renamedFileSchema),
  ...upgradeAndDeleteFields,
});
type RadarrPayload = z.output<typeof radarrPayload>;

const base = (p: RadarrPayload): Base => ({ path: p.movie?.folderPath, field: 'movie.folderPath' });

/**
 * An import (or any other event carrying movieFile): the movie file's folder; a payload trimmed to the
 * movie folder scans that folder (the same one).
 */
const imported = (p: RadarrPayload): Plan => ({
  ...upgradeOr(p.isUpgrade),
  paths:
    !p.movieFile && p.movie?.folderPath
      ? [{ path: p.movie.folderPath, kind: 'folder' }]
      : fileScans(filesOf([{ field: 'movieFile', file: p.movieFile }], base(p), 'movieFile with path, or relativePath and movie.folderPath')),
});

export const recognizeRadarr = arrRecognizer({
  source: 'Radarr',
  shapeKeys: ['movie', 'remoteMovie', 'movieFile', 'renamedMovieFiles'],
  schema: radarrPayload,
  events: {
    // The movie file's folder; a payload trimmed to the movie folder scans that folder (the same one).
    Download: (p) => imported(p),
    Rename: (p) =>
      rename(
        p.movie?.folderPath,
        'movie.folderPath',
        'renamedMovieFiles',
        (p.renamedMovieFiles ?? []).map((f, i) => ({ now: fullPath(f, base(p), `renamedMovieFiles[${i}]`), before: previousPath(f, base(p)) })),
      ),
    MovieFileDelete: (p) =>
      fileDelete(fileScans(filesOf([{ field: 'movieFile', file: p.movieFile }], base(p), 'movieFile with path, or relativePath and movie.folderPath'))),
    MovieDelete: (p) => deleteOfItem(p.movie?.folderPath, 'movie.folderPath', p.deletedFiles),
  },
  withFiles: { fields: ['movieFile'], plan: (p) => imported(p) },
  describe: (p) => ({
    title: p.movie?.title ?? p.remoteMovie?.title,
    ids: { tmdbId: p.movie?.tmdbId ?? p.remoteMovie?.tmdbId, imdbId: p.movie?.imdbId ?? p.remoteMovie?.imdbId },
  }),
});
