import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { UserError } from '../core/errors.ts';

/** A file-system error that a chown (or running as another user) fixes. */
export function isPermissionError(err: unknown): err is NodeJS.ErrnoException & { path: string } {
  const e = err as NodeJS.ErrnoException | undefined;
  return !!e && (e.code === 'EACCES' || e.code === 'EPERM') && typeof e.path === 'string';
}

/** The file itself when it exists, else the nearest folder above it that does: what the user must chown. */
function blockingPlace(path: string): { place: string; uid: number; gid: number } {
  let place = path;
  while (!existsSync(place) && dirname(place) !== place) place = dirname(place);
  // A temporary file being created is the folder's problem, not the file's.
  if (place === path && !statSync(place).isDirectory() && /\.tmp$/.test(place)) place = dirname(place);
  const { uid, gid } = statSync(place);
  return { place, uid, gid };
}

/**
 * One line for a permission error: what could not be written, who owns it, who the relay runs as, and the two
 * fixes. The common case is a bind-mounted folder that Docker created as root while the container runs as
 * 1000:1000; under `restart: unless-stopped` a stack trace there is a crash loop that says nothing useful.
 */
export function permissionMessage(err: NodeJS.ErrnoException & { path: string }, who = { uid: process.getuid?.() ?? -1, gid: process.getgid?.() ?? -1 }): string {
  const { place, uid, gid } = blockingPlace(err.path);
  const what = statSync(place).isDirectory() ? `in the folder ${place}` : place;
  return (
    `cannot write ${what} (${err.code}): it belongs to uid ${uid} (gid ${gid}) and the relay runs as uid ${who.uid} (gid ${who.gid}). ` +
    `Give it to the relay's user (sudo chown -R ${who.uid}:${who.gid} <the folder; for a Docker volume, its path on the host>), ` +
    `or run the relay as its owner (docker run --user ${uid}:${gid}; compose: user: "${uid}:${gid}")`
  );
}

/** A permission error as a UserError (one line, exit status 2); anything else unchanged. */
export function explainPermission(err: unknown): unknown {
  return isPermissionError(err) ? new UserError(permissionMessage(err)) : err;
}
