import { z } from 'zod';
import { fileList, lenientId, lenientText, mediaFileSchema, optional, pathField, renamedFileSchema, upgradeAndDeleteFields } from './fields.ts';
import { arrRecognizer, type Plan } from './recognizer.ts';
import { deleteOfItem, fileDelete, rename, upgradeOr } from './events.ts';
import { fileScans, filesOf, fullPath, previousPath, type Base } from './scans.ts';

const sonarrPayload = z.object({
  series: optional(
    z.object({
      path: optional(pathField),
      title: lenientText,
      tvdbId: lenientId,
      tmdbId: lenientId,
      imdbId: lenientId,
      tvMazeId: lenientId,
    }),
  ),
  /** Sonarr v3 and v4 "On Import": one file. */
  episodeFile: optional(mediaFileSchema),
  /** Sonarr v4 "On Import Complete": every file of a multi-file import. */
  episodeFiles: fileList(mediaFileSchema),
  renamedEpisodeFiles: fileList(renamedFileSchema),
  ...upgradeAndDeleteFields,
});
type SonarrPayload = z.output<typeof sonarrPayload>;

const base = (p: SonarrPayload): Base => ({ path: p.series?.path, field: 'series.path' });

/** An import (or any other event carrying its files): each file's folder. */
const imported = (p: SonarrPayload): Plan => ({
  ...upgradeOr(p.isUpgrade),
  paths: fileScans(
    filesOf(
      [
        { field: 'episodeFile', file: p.episodeFile },
        { field: 'episodeFiles', files: p.episodeFiles },
      ],
      base(p),
      'episodeFile (Sonarr v3) or episodeFiles[] (Sonarr v4) with path, or relativePath and series.path',
    ),
  ),
});

export const recognizeSonarr = arrRecognizer({
  source: 'Sonarr',
  shapeKeys: ['series', 'episodes', 'episodeFile', 'episodeFiles', 'renamedEpisodeFiles'],
  schema: sonarrPayload,
  events: {
    Download: (p) => imported(p),
    Rename: (p) =>
      rename(
        p.series?.path,
        'series.path',
        'renamedEpisodeFiles',
        (p.renamedEpisodeFiles ?? []).map((f, i) => ({ now: fullPath(f, base(p), `renamedEpisodeFiles[${i}]`), before: previousPath(f, base(p)) })),
      ),
    EpisodeFileDelete: (p) =>
      fileDelete(fileScans(filesOf([{ field: 'episodeFile', file: p.episodeFile }], base(p), 'episodeFile with path, or relativePath and series.path'))),
    SeriesDelete: (p) => deleteOfItem(p.series?.path, 'series.path', p.deletedFiles),
  },
  withFiles: { fields: ['episodeFile', 'episodeFiles'], plan: (p) => imported(p) },
  describe: (p) => ({
    // The plain title, as plex_autoscan passed it to Plex when fixing a match.
    title: p.series?.title,
    ids: { tvdbId: p.series?.tvdbId, tmdbId: p.series?.tmdbId, imdbId: p.series?.imdbId, tvMazeId: p.series?.tvMazeId },
  }),
});
