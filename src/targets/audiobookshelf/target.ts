import { z } from 'zod';
import type { AudiobookshelfTarget } from './schema.ts';
import type { Target } from '../../core/scan.ts';
import type { Logger } from '../../core/logger.ts';
import { ServiceClient } from '../http.ts';
import { CachedList } from '../cached-list.ts';
import { deepestHolder, pathsOf } from '../path-match.ts';
import { serviceTarget } from '../service-target.ts';

/**
 * `GET /api/libraries` (Audiobookshelf's LibraryController.findAll): `{"libraries": [...]}`, each library with
 * its `folders` (`fullPath`, `libraryId`) and `settings.disableWatcher`. The server adds fields freely.
 */
const librariesAnswer = z.looseObject({
  libraries: z.array(
    z.looseObject({
      id: z.string(),
      name: z.string().optional(),
      folders: z.array(z.looseObject({ fullPath: z.string(), libraryId: z.string().optional() })).default([]),
      settings: z.looseObject({ disableWatcher: z.boolean().optional() }).optional(),
    }),
  ),
});
type Library = z.infer<typeof librariesAnswer>['libraries'][number];

/** The library folder that holds `path` most closely, and its library (whole path segments). */
export function libraryFor<L extends Pick<Library, 'folders'>>(path: string, libraries: readonly L[]): { library: L; folder: string } | undefined {
  const folders = libraries.flatMap((library) => library.folders.map((f) => ({ library, folder: f.fullPath })));
  return deepestHolder(path, folders, (f) => f.folder);
}

/**
 * Audiobookshelf: tells its watcher which paths changed, `POST /api/watcher/update` with `{libraryId, path,
 * type}` (MiscController.updateWatchedPath; autopulse's audiobookshelf.rs:75-121), as its own file watcher
 * would. The library is the one whose folder holds the path (`GET /api/libraries`). A deletion is `unlink`,
 * anything else `add` (Audiobookshelf rescans what changed). The token is an admin's: the route answers 403
 * to any other user.
 */
export function createAudiobookshelfTarget(name: string, entry: AudiobookshelfTarget, log: Logger): Target {
  const client = new ServiceClient({
    product: 'Audiobookshelf',
    url: entry.URL,
    request: entry.REQUEST,
    headers: { Authorization: `Bearer ${entry.TOKEN}` },
    secrets: [entry.TOKEN],
  });
  const libraries = new CachedList(async () => (await client.json('GET', '/api/libraries', 'library list', librariesAnswer)).libraries);
  return serviceTarget(name, entry, {
    async send(item) {
      const { found: hit, items: all } = await libraries.find((list) => libraryFor(item.folder, list));
      if (!hit) {
        const known = all.flatMap((l) => l.folders.map((f) => f.fullPath));
        return { outcome: 'failed', error: `no Audiobookshelf library folder holds ${item.folder} (library folders: ${known.join(', ') || 'none'})` };
      }
      const library = hit.library;
      if (library.settings?.disableWatcher) {
        return { outcome: 'failed', error: `Audiobookshelf library "${library.name ?? library.id}" has its folder watcher off, so it ignores watcher updates: turn "Disable folder watcher" off in its settings` };
      }
      const type = item.updateType === 'Deleted' ? 'unlink' : 'add';
      const paths = pathsOf(item);
      for (const path of paths) {
        log.debug({ target: name, scan: item.id, library: library.id, path, type }, 'telling Audiobookshelf about a changed path');
        await client.call('POST', '/api/watcher/update', 'watcher update', { libraryId: library.id, path, type });
      }
      return { outcome: 'done', detail: `${paths.length} path(s) sent to library "${library.name ?? library.id}" as ${type}` };
    },
    async libraryRoots(fresh?: boolean) {
      return (await libraries.get(fresh)).flatMap((l) => l.folders.map((f) => f.fullPath));
    },
    probe: () => libraries.get(true),
  });
}
