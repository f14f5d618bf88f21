/*
 * A file's sha256 as an autopulse manual request gave it (`?hash=`, crates/server/src/routes/triggers.rs:150-153),
 * carried with its scan so the forward (autopulse) target passes it on (targets/autopulse.rs:51-52), and the other
 * autopulse checks the file against it again. It rides in the scan's ids: the queue keeps the ids of the last
 * request that had any, so a hash stays with the path it was given for and is never sent with another file.
 */

export const HASH_ID = 'autopulse_hash';
export const HASH_PATH_ID = 'autopulse_hash_path';

/** The ids a request with a hash for `path` carries. */
export function hashIds(path: string, hash: string): Record<string, string> {
  return { [HASH_ID]: hash, [HASH_PATH_ID]: path };
}

const baseName = (p: string) => p.slice(Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\')) + 1);

/**
 * The hash for `path`, one of the scan's `files` as a target names them (its own rewrite may have changed the
 * folders, never the file's name): the file whose name is the hashed path's, when only one file of the scan has it.
 */
export function hashFor(item: { ids: Record<string, string | number>; files: readonly string[] }, path: string): string | undefined {
  const hash = item.ids[HASH_ID];
  const hashed = item.ids[HASH_PATH_ID];
  if (typeof hash !== 'string' || typeof hashed !== 'string') return undefined;
  const name = baseName(hashed);
  if (baseName(path) !== name) return undefined;
  return item.files.filter((f) => baseName(f) === name).length === 1 ? hash : undefined;
}
