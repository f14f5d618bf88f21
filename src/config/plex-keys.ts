import { z } from 'zod';
import { seconds } from './durations.ts';

export const PLEX_SCANNER_DEFAULT = '/usr/lib/plexmediaserver/Plex\\ Media\\ Scanner';
export const PLEX_SUPPORT_DIR_DEFAULT = '/var/lib/plexmediaserver/Library/Application\\ Support';
export const PLEX_DATABASE_PATH_DEFAULT =
  '/var/lib/plexmediaserver/Library/Application Support/Plex Media Server/Plug-in Support/Databases/com.plexapp.plugins.library.db';

const str = (def: string) => z.string().default(def);
const bool = (def: boolean) => z.boolean().default(def);

/**
 * A Plex server's own settings, without the `PLEX_` prefix: the top-level `PLEX_*` keys (schema.ts) and a
 * `TARGETS` entry of TYPE "plex" (targets/plex/schema.ts) are built from these same fields, so both read alike
 * and default alike (plex_autoscan's defaults).
 */
export const plexKeys = {
  USER: str('plex'),
  SCANNER: str(PLEX_SCANNER_DEFAULT),
  SUPPORT_DIR: str(PLEX_SUPPORT_DIR_DEFAULT),
  LD_LIBRARY_PATH: str('/usr/lib/plexmediaserver/lib'),
  DATABASE_PATH: str(PLEX_DATABASE_PATH_DEFAULT),
  EMPTY_TRASH: bool(false),
  EMPTY_TRASH_MAX_FILES: z.number().int().min(0).default(100),
  EMPTY_TRASH_CONTROL_FILES: z.array(z.string()).default([]),
  EMPTY_TRASH_ZERO_DELETED: bool(false),
  WAIT_FOR_EXTERNAL_SCANNERS: bool(true),
  ANALYZE_TYPE: z
    .string()
    .transform((s) => s.toLowerCase())
    .pipe(z.enum(['off', 'basic', 'deep']))
    .default('basic'),
  ANALYZE_DIRECTORY: bool(true),
  FIX_MISMATCHED: bool(false),
  FIX_MISMATCHED_LANG: str('en'),
  TOKEN: str(''),
  CHECK_BEFORE_SCAN: bool(false),
  /**
   * Check the TLS certificate of an https URL. Absent: checked for a public address, not for a loopback or
   * private one, whose certificate from Plex can never pass (targets/plex/tls-policy.ts). null is read as absent.
   */
  VERIFY_SSL: z.boolean().nullish().transform((v) => v ?? undefined),
  /** scanrelay: after a scan ends, refresh the metadata of the items it touched (PUT /library/metadata/{id}/refresh). */
  REFRESH_METADATA: bool(false),
  SCAN_METHOD: z.enum(['auto', 'api', 'scanner']).default('auto'),
  /** Seconds before a hung Plex Media Scanner run (scanner method) is killed; the killed run counts toward SCANNER_MAX_RETRIES. 0 = never. */
  SCANNER_TIMEOUT: seconds(3600),
  /** scanrelay: a scanner run that exits non-zero is run again at most this many times, then the scan fails. */
  SCANNER_MAX_RETRIES: z.number().int().min(0).default(3),
};

/** The plexKeys names, each as its top-level key names it (URL is PLEX_LOCAL_URL there). */
export const PLEX_KEY_NAMES = Object.keys(plexKeys) as Array<keyof typeof plexKeys>;
