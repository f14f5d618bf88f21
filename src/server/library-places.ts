import type { Config } from '../config/schema.ts';
import { insideKnownLibrary, isPlainAbsolute, type LibraryPlace } from '../paths/library.ts';
import { mapPath } from '../paths/mapping.ts';
import { mapIncomingPath } from '../paths/rewrite.ts';
import type { PluginDeps } from './deps.ts';

/*
 * Where the relay may look at its own disk for a path a client named or the queue keeps: only inside a library
 * folder the scan's targets know, or a SERVER_PATH_MAPPINGS / SERVER_FILE_EXIST_PATH_MAPPINGS key (paths/library.ts).
 * Used by autopulse's ?hash= and found_status (peers/autopulse) and by SERVER_WAIT_FOR_FILES (file-look.ts).
 */

/**
 * The library folders a request of a trigger whose scans go to `targets` (all when absent) may have its file
 * read in: SERVER_FILE_EXIST_PATH_MAPPINGS keys (where the relay sees the media, named as the relay's disk names
 * them), SERVER_PATH_MAPPINGS keys, and each of those targets' own libraries (Plex's section locations, ...),
 * the last two reached through the relay's mapping and the target's REWRITE, as a scan of the path would be.
 */
export async function hashPlaces(
  config: Pick<Config, 'SERVER_PATH_MAPPINGS' | 'SERVER_FILE_EXIST_PATH_MAPPINGS' | 'SERVER_PATH_REWRITES'>,
  libraries: Pick<NonNullable<PluginDeps['libraries']>, 'places'> | undefined,
  targets: readonly string[] | undefined,
  /** How long to wait for the targets' folders (cached; a server that is down or hangs adds none), and when to stop. */
  wait: { ms: number; stop?: Promise<void> },
): Promise<LibraryPlace[]> {
  const toRelay = (path: string) => mapIncomingPath(config, path).path;
  const own = (libraries ? await withinMs(libraries.places(targets), wait.ms, wait.stop) : undefined) ?? [];
  return [
    { roots: Object.keys(config.SERVER_FILE_EXIST_PATH_MAPPINGS) },
    { roots: Object.keys(config.SERVER_PATH_MAPPINGS), name: toRelay },
    ...own.map((p) => ({ roots: p.roots, name: (path: string) => (p.name ? p.name(toRelay(path)) : toRelay(path)), ...(p.ignoreCase ? { ignoreCase: true } : {}) })),
  ];
}

/**
 * As hashPlaces, for a path the queue keeps (already the relay's: mapped at intake): the library folders a scan's
 * path may be looked at in, for autopulse's found_status (events.ts foundStatusOf).
 */
export async function scanPlaces(
  config: Pick<Config, 'SERVER_PATH_MAPPINGS' | 'SERVER_FILE_EXIST_PATH_MAPPINGS'>,
  libraries: Pick<NonNullable<PluginDeps['libraries']>, 'places'> | undefined,
  targets: readonly string[] | undefined,
  wait: { ms: number; stop?: Promise<void> },
): Promise<LibraryPlace[]> {
  const own = (libraries ? await withinMs(libraries.places(targets), wait.ms, wait.stop) : undefined) ?? [];
  return [{ roots: Object.keys(config.SERVER_FILE_EXIST_PATH_MAPPINGS) }, { roots: Object.keys(config.SERVER_PATH_MAPPINGS) }, ...own];
}

/** Where the relay looks for a queued scan's path on its disk (SERVER_FILE_EXIST_PATH_MAPPINGS), or undefined outside the known libraries. */
export function scanDiskPath(path: string, places: readonly LibraryPlace[], config: Pick<Config, 'SERVER_FILE_EXIST_PATH_MAPPINGS'>): string | undefined {
  if (!insideKnownLibrary(path, places)) return undefined;
  const disk = mapPath(config.SERVER_FILE_EXIST_PATH_MAPPINGS, path).path;
  return isPlainAbsolute(disk) ? disk : undefined;
}

/**
 * Where the relay reads the file a client named (its path after the trigger's REWRITE), or undefined when it may
 * read nothing there: the path must be plain and inside a known library (paths/library.ts). It is read where
 * SERVER_FILE_EXIST_PATH_MAPPINGS says the relay sees the server's path, else as it was named (autopulse reads
 * the rewritten path on its own disk, utils/src/checksum.rs).
 */
export function hashDiskPath(path: string, places: readonly LibraryPlace[], config: Pick<Config, 'SERVER_PATH_MAPPINGS' | 'SERVER_FILE_EXIST_PATH_MAPPINGS' | 'SERVER_PATH_REWRITES'>): string | undefined {
  if (!insideKnownLibrary(path, places)) return undefined;
  const seen = mapPath(config.SERVER_FILE_EXIST_PATH_MAPPINGS, mapIncomingPath(config, path).path);
  const disk = seen.match ? seen.path : path;
  return isPlainAbsolute(disk) ? disk : undefined;
}

/** `p`'s value, or undefined when it takes longer than `ms`, fails, or `stop` comes first. */
function withinMs<T>(p: Promise<T>, ms: number, stop?: Promise<void>): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    timer.unref?.();
    void stop?.then(() => (clearTimeout(timer), resolve(undefined)));
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      () => (clearTimeout(timer), resolve(undefined)),
    );
  });
}
