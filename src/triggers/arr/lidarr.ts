import { z } from 'zod';
import { deleteInsideItem, deleteOfItem, fileDelete, rename, upgradeOr } from './events.ts';
import { anyValue, lenientId, lenientObject, lenientText, mediaFileSchema, optional, pathField, renamedFileSchema } from './fields.ts';
import { arrRecognizer } from './recognizer.ts';
import { fileScans, filesOf, fullPath, previousPath, type Base } from './scans.ts';

const lidarrPayload = z.object({
  artist: optional(z.object({ path: optional(pathField), name: lenientText, mbId: lenientId })),
  album: lenientObject(z.object({ title: lenientText, mbId: lenientId })),
  /** Absolute paths; plex_autoscan also accepted relativePath below artist.path. */
  trackFiles: optional(z.array(mediaFileSchema)),
  trackFile: optional(mediaFileSchema),
  renamedTrackFiles: optional(z.array(renamedFileSchema)),
  isUpgrade: anyValue,
  deletedFiles: anyValue,
});
type LidarrPayload = z.output<typeof lidarrPayload>;

const base = (p: LidarrPayload): Base => ({ path: p.artist?.path, field: 'artist.path' });
const trackFilesOf = (p: LidarrPayload) =>
  filesOf(
    [
      { field: 'trackFile', file: p.trackFile },
      { field: 'trackFiles', files: p.trackFiles },
    ],
    base(p),
    'trackFiles[] (or trackFile) with path, or relativePath and artist.path',
  );

export const recognizeLidarr = arrRecognizer({
  source: 'Lidarr',
  shapeKeys: ['artist', 'album', 'albums', 'tracks', 'trackFile', 'trackFiles', 'renamedTrackFiles'],
  schema: lidarrPayload,
  events: {
    // Each track's folder: an album on two discs ("CD 01", "CD 02") gives two folders.
    Download: (p) => ({ ...upgradeOr(p.isUpgrade), paths: fileScans(trackFilesOf(p)) }),
    Rename: (p) =>
      rename(
        p.artist?.path,
        'artist.path',
        'renamedTrackFiles',
        (p.renamedTrackFiles ?? []).map((f, i) => ({ now: fullPath(f, base(p), `renamedTrackFiles[${i}]`), before: previousPath(f, base(p)) })),
      ),
    // New tags in the file: the media server reads them again on a scan of its folder.
    Retag: (p) => ({ updateType: 'Modified', paths: fileScans(trackFilesOf(p)) }),
    // Lidarr itself has no track-file delete event yet; other senders use this name.
    TrackFileDelete: (p) => fileDelete(fileScans(trackFilesOf(p))),
    ArtistDelete: (p) => deleteOfItem(p.artist?.path, 'artist.path', p.deletedFiles),
    // The payload names no album folder: the artist folder above it is scanned.
    AlbumDelete: (p) => deleteInsideItem(p.artist?.path, 'artist.path', p.deletedFiles),
  },
  describe: (p) => ({
    title: p.artist?.name && p.album?.title ? `${p.artist.name} - ${p.album.title}` : p.artist?.name,
    ids: { artistMbId: p.artist?.mbId, albumMbId: p.album?.mbId },
  }),
});
