import { asciiLower } from './ascii-case.ts';
import { longestPrefix } from './mapping.ts';

/**
 * Folders the relay knows to hold a library, and how a path of the relay's is named where they are. The relay
 * reads its own disk on a client's word (a `?hash=` check, Tdarr's folder listing) only inside one of these, so a
 * request can never make it read, or tell about, the rest of its host.
 */
export interface LibraryPlace {
  /** The library folders, named as `name` names a path (a Plex section's locations, Tdarr's library folder). */
  readonly roots: readonly string[];
  /** The relay's path as these roots name it (a target's REWRITE, SERVER_PATH_MAPPINGS); absent: as it is. */
  readonly name?: (path: string) => string;
  /**
   * The server holds a path in a root whatever the case of its ASCII letters (a Jellyfin/Emby PATH_MATCH
   * case_insensitive, a Windows or UNC server): the roots are compared so, only whole segments still.
   */
  readonly ignoreCase?: boolean;
}

const DOT_DOT_SEGMENT = /(?:^|[\\/])\.\.(?:[\\/]|$)/;

/** An absolute POSIX path with no `..` segment: one the relay may name on its own disk (a NUL can never get here). */
export function isPlainAbsolute(path: string): boolean {
  return path.startsWith('/') && !DOT_DOT_SEGMENT.test(path) && !path.includes('\0');
}

/**
 * The one rule for "may the relay look at this path on its disk": `path` is plain (absolute, no `..`), and in one
 * of the places, as that place names it, it lies in one of the roots (whole segments: `/media/tv2` is not inside
 * `/media/tv`). A root the place names as `/` counts too; a place with no roots (its server could not be asked)
 * admits nothing.
 */
export function insideKnownLibrary(path: string, places: readonly LibraryPlace[]): boolean {
  if (!isPlainAbsolute(path)) return false;
  return places.some((p) => {
    if (p.roots.length === 0) return false;
    let named: string;
    try {
      named = p.name ? p.name(path) : path;
    } catch {
      return false;
    }
    // A rewrite that yields `..` or a relative path could step out of a root while still starting with it.
    return (named === path || isPlainAbsoluteAnywhere(named)) && withinRoots(named, p.roots, p.ignoreCase);
  });
}

/**
 * `path` is one of `roots` or below one, whole segments only (the library check of the intake asks the same);
 * `ignoreCase`: ASCII letters compared ignoring case (autopulse's emby path_match, emby.rs:167-170).
 */
export function withinRoots(path: string, roots: readonly string[], ignoreCase = false): boolean {
  if (ignoreCase) return longestPrefix(asciiLower(path), roots, asciiLower) !== undefined;
  return longestPrefix(path, roots, (r) => r) !== undefined;
}

/** As isPlainAbsolute, but also a Windows form (a target on Windows names its roots `D:\Media`). */
function isPlainAbsoluteAnywhere(path: string): boolean {
  return (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\')) && !DOT_DOT_SEGMENT.test(path) && !path.includes('\0');
}
