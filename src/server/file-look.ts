import { stat } from 'node:fs/promises';
import type { Config } from '../config/schema.ts';
import type { FileAnswer, FileLook } from '../queue/file-gate.ts';
import type { FileWaitPolicy } from '../queue/file-wait.ts';
import { scanDiskPath, scanPlaces } from './library-places.ts';

/** How long one look waits for the targets' library folders (cached; a server that is down adds none). */
const PLACES_WAIT_MS = 2_000;
import type { PluginDeps } from './deps.ts';

/**
 * SERVER_WAIT_FOR_FILES' look at the relay's disk: a queued path is looked for where SERVER_FILE_EXIST_PATH_MAPPINGS
 * says the relay sees it (as Plex's file check does), and only inside a library folder the scan's targets know or a
 * mapping's key (paths/library.ts, as found_status and ?hash= are confined); anything else is `outside`, never looked
 * at. stat only: nothing is opened, so a FIFO or a device at the path is never read.
 */
export function diskLook(
  config: Pick<Config, 'SERVER_PATH_MAPPINGS' | 'SERVER_FILE_EXIST_PATH_MAPPINGS'>,
  libraries: Pick<NonNullable<PluginDeps['libraries']>, 'places'> | undefined,
): FileLook {
  return async (route) => {
    const places = await scanPlaces(config, libraries, route, { ms: PLACES_WAIT_MS });
    return async (path): Promise<FileAnswer> => {
      const disk = scanDiskPath(path, places, config);
      if (disk === undefined) return 'outside';
      try {
        await stat(disk);
        return 'there';
      } catch {
        return 'missing';
      }
    };
  };
}

/** SERVER_WAIT_FOR_FILES in ms. */
export function fileWaitPolicy(config: Pick<Config, 'SERVER_WAIT_FOR_FILES'>): FileWaitPolicy {
  const w = config.SERVER_WAIT_FOR_FILES;
  return { firstMs: w.FIRST_CHECK_DELAY * 1000, maxMs: w.MAX_CHECK_DELAY * 1000, giveUpMs: w.GIVE_UP_AFTER * 1000 };
}
