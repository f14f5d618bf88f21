import type { DriveConfig } from '../../config/schema.ts';

/**
 * Which drive paths a change may scan, with plex_autoscan's exact semantics (google/drive.py
 * `_remove_unwanted_paths`), kept because users keep their config:
 * - FILE_PATHS is always applied: a path must start with one entry, case-insensitively, as a plain
 *   string prefix. An empty list therefore allows nothing.
 * - FILE_EXTENSIONS: a case-insensitive suffix match on the whole path, so "mkv" and ".mkv" both work
 *   and "ts" matches any name ending in "ts" (e.g. "Credits"). Kept on purpose.
 * - MIME_TYPES: an entry must be a case-insensitive substring of the file's MIME type. When the MIME
 *   type contains "video", a ".sub" path rejects the file (Drive labels .sub files video/MP2G).
 *   A mismatch drops every remaining path of the file.
 */
export type AllowedConfig = DriveConfig['ALLOWED'];

export interface FilterResult {
  kept: string[];
  /** Each rejected path with the rule that rejected it. */
  removed: Array<{ path: string; reason: 'path' | 'extension' | 'mime' }>;
}

export function filterPaths(paths: readonly string[], mimeType: string | undefined, allowed: AllowedConfig): FilterResult {
  const removed: FilterResult['removed'] = [];
  let kept = paths.filter((p) => {
    const lower = p.toLowerCase();
    const ok = allowed.FILE_PATHS.some((prefix) => lower.startsWith(prefix.toLowerCase()));
    if (!ok) removed.push({ path: p, reason: 'path' });
    return ok;
  });
  if (allowed.FILE_EXTENSIONS && kept.length) {
    kept = kept.filter((p) => {
      const lower = p.toLowerCase();
      const ok = allowed.FILE_EXTENSIONS_LIST.some((ext) => lower.endsWith(ext.toLowerCase()));
      if (!ok) removed.push({ path: p, reason: 'extension' });
      return ok;
    });
  }
  if (allowed.MIME_TYPES && kept.length && !mimeAllowed(kept, mimeType ?? 'Unknown', allowed.MIME_TYPES_LIST)) {
    for (const p of kept) removed.push({ path: p, reason: 'mime' });
    kept = [];
  }
  return { kept, removed };
}

function mimeAllowed(paths: readonly string[], mimeType: string, list: readonly string[]): boolean {
  const mime = mimeType.toLowerCase();
  const isVideo = mime.includes('video');
  const hasSub = paths.some((p) => p.toLowerCase().endsWith('.sub'));
  return list.some((entry) => mime.includes(entry.toLowerCase()) && !(isVideo && hasSub));
}

/** plex_autoscan loads only the shared drives whose name is listed in TEAMDRIVES, and only with TEAMDRIVE on. */
export function watchedSharedDrives<T extends { id: string; name: string }>(drives: readonly T[], config: Pick<DriveConfig, 'TEAMDRIVE' | 'TEAMDRIVES'>): T[] {
  if (!config.TEAMDRIVE) return [];
  // scanrelay: a drive's id works too (autoscan's bernard and A-Train name shared drives by id).
  return drives.filter((d) => config.TEAMDRIVES.includes(d.name) || config.TEAMDRIVES.includes(d.id));
}

/** What Drive reports for every file of an rclone crypt remote: its content is ciphertext. */
export const CRYPT_MIME = 'application/octet-stream';

/**
 * With CRYPT_MAPPINGS, the MIME filter sees Drive's type for encrypted files, not the decoded name's
 * (google/drive.py:531-554, called at :618): a list without a match for application/octet-stream drops them all.
 */
export function cryptMimeProblem(allowed: AllowedConfig): string | undefined {
  if (!allowed.MIME_TYPES || mimeAllowed([], CRYPT_MIME, allowed.MIME_TYPES_LIST)) return undefined;
  return `GOOGLE.ALLOWED.MIME_TYPES_LIST has no entry matching ${CRYPT_MIME}, the type Drive reports for rclone crypt files: encrypted files will not be scanned (add "octet-stream", or turn MIME_TYPES off)`;
}
