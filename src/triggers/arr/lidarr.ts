import { z } from 'zod';
import { deleteInsideItem, deleteOfItem, fileDelete, rename, upgradeOr } from './events.ts';
import type { ScanPath } from '../../intake/intent.ts';
import { fileList, lenientId, lenientObject, lenientText, mediaFileSchema, optional, pathField, renamedFileSchema, type MediaFile, upgradeAndDeleteFields } from './fields.ts';
import { arrRecognizer, type Plan } from './recognizer.ts';
import { fileScans, filesOf, fullPath, previousPath, type Base } from './scans.ts';

const lidarrPayload = z.object({
  artist: optional(z.object({ path: optional(pathField), name: lenientText, mbId: lenientId })),
  album: lenientObject(z.object({ title: lenientText, mbId: lenientId })),
  /** Absolute paths; plex_autoscan also accepted relativePath below artist.path. */
  trackFiles: fileList(mediaFileSchema),
  trackFile: optional(mediaFileSchema),
  renamedTrackFiles: fileList(renamedFileSchema),
  ...upgradeAndDeleteFields,
});
type LidarrPayload = z.output<typeof lidarrPayload>;

const base = (p: LidarrPayload): Base => ({ path: p.artist?.path, field: 'artist.path' });
const hasPath = (f: MediaFile) => Boolean(f.path || f.relativePath);

/**
 * The tracks' files to scan. A track with neither path nor relativePath is skipped, as plex_autoscan
 * skipped it (scan.py:454-456), instead of failing the whole request; when the payload lists tracks
 * and none has a path there is nothing to scan (plex_autoscan answered OK and scanned nothing).
 */
function trackScans(p: LidarrPayload, then: (paths: ScanPath[]) => Plan): Plan {
  const listed = (p.trackFile ? 1 : 0) + (p.trackFiles?.length ?? 0);
  const trackFile = p.trackFile && hasPath(p.trackFile) ? p.trackFile : undefined;
  const trackFiles = p.trackFiles?.filter(hasPath);
  if ((p.trackFile || p.trackFiles) && !trackFile && !trackFiles?.length) {
    return { ignore: listed === 0 ? 'trackFiles is empty: no track to scan' : `none of the ${listed} track file(s) has a path or relativePath` };
  }
  const paths = filesOf(
    [
      { field: 'trackFile', file: trackFile },
      { field: 'trackFiles', files: trackFiles },
    ],
    base(p),
    'trackFiles[] (or trackFile) with path, or relativePath and artist.path',
  );
  return then(fileScans(paths));
}
const imported = (p: LidarrPayload) => trackScans(p, (paths) => ({ ...upgradeOr(p.isUpgrade), paths }));

export const recognizeLidarr = arrRecognizer({
  source: 'Lidarr',
  shapeKeys: ['artist', 'album', 'albums', 'tracks', 'trackFile', 'trackFiles', 'renamedTrackFiles'],
  schema: lidarrPayload,
  events: {
    // Each track's folder: an album on two discs ("CD 01", "CD 02") gives two folders.
    Download: imported,
    Rename: (p) =>
      rename(
        p.artist?.path,
        'artist.path',
        'renamedTrackFiles',
        (p.renamedTrackFiles ?? []).map((f, i) => ({ now: fullPath(f, base(p), `renamedTrackFiles[${i}]`), before: previousPath(f, base(p)) })),
      ),
    // New tags in the file: the media server reads them again on a scan of its folder.
    Retag: (p) => trackScans(p, (paths) => ({ updateType: 'Modified', paths })),
    // Lidarr itself has no track-file delete event yet; other senders use this name.
    TrackFileDelete: (p) => trackScans(p, fileDelete),
    ArtistDelete: (p) => deleteOfItem(p.artist?.path, 'artist.path', p.deletedFiles),
    // The payload names no album folder: the artist folder above it is scanned.
    AlbumDelete: (p) => deleteInsideItem(p.artist?.path, 'artist.path', p.deletedFiles),
  },
  withFiles: { fields: ['trackFiles', 'trackFile'], plan: imported },
  describe: (p) => ({
    title: p.artist?.name && p.album?.title ? `${p.artist.name} - ${p.album.title}` : p.artist?.name,
    ids: { artistMbId: p.artist?.mbId, albumMbId: p.album?.mbId },
  }),
});
