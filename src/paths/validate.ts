import { isAbsolutePath } from './mapping.ts';

const DOT_DOT_SEGMENT = /(?:^|[\\/])\.\.(?:[\\/]|$)/;

/** Why a requested path cannot be scanned, or undefined when it is fine. Checked before and after mapping. */
export function invalidRequestPath(path: unknown): string | undefined {
  if (path === undefined || path === null) return 'filepath is missing: send the path of a file or folder to scan';
  if (typeof path !== 'string') return 'filepath must be a string';
  if (path.trim() === '') return 'filepath is missing or empty';
  if (path.includes('\0')) return 'filepath must not contain a NUL byte';
  if (DOT_DOT_SEGMENT.test(path)) return 'filepath must not contain a ".." segment';
  if (path.length > 4096) return 'filepath is longer than 4096 characters';
  return undefined;
}

export function invalidMappedPath(path: string): string | undefined {
  if (!isAbsolutePath(path)) {
    return `path "${path}" is not absolute after SERVER_PATH_MAPPINGS; add a mapping for it or send the full path`;
  }
  return undefined;
}
