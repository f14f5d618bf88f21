import { invalidInputText, tooLong } from '../core/text.ts';
import { isAbsolutePath } from './mapping.ts';

const DOT_DOT_SEGMENT = /(?:^|[\\/])\.\.(?:[\\/]|$)/;

/** Why a requested path cannot be scanned, or undefined when it is fine. Checked before and after mapping. */
export function invalidRequestPath(path: unknown): string | undefined {
  if (path === undefined || path === null) return 'filepath is missing: send the path of a file or folder to scan';
  if (typeof path !== 'string') return 'filepath must be a string';
  if (path.trim() === '') return 'filepath is missing or empty';
  const text = invalidInputText(path);
  if (text) return `filepath ${text}`;
  if (DOT_DOT_SEGMENT.test(path)) return 'filepath must not contain a ".." segment';
  return tooLong(path);
}

export function invalidMappedPath(path: string): string | undefined {
  if (!isAbsolutePath(path)) {
    return `path "${path}" is not absolute after SERVER_PATH_MAPPINGS; add a mapping for it or send the full path`;
  }
  const text = invalidInputText(path);
  if (text) return `after SERVER_PATH_MAPPINGS the path ${text}`;
  const long = tooLong(path);
  if (long) return `${long.replace(/^filepath/, 'after SERVER_PATH_MAPPINGS the path')}`;
  return undefined;
}
