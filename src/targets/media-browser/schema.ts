import { z } from 'zod';
import { targetBase } from '../../config/target-base.ts';

/**
 * How a scan reaches Jellyfin or Emby (docs/targets.md, Jellyfin and Emby): `auto` asks the server (its version, its
 * plugins) and picks one of the others; `plugin` is the TargetedScan plugin's POST /Library/ScanPaths; `item` refreshes
 * the deepest existing item above the change; `media-updated` is POST /Library/Media/Updated, as before.
 */
export const scanModeSchema = z.enum(['auto', 'plugin', 'item', 'media-updated']).default('auto');

/** Jellyfin and Emby share one API (the client in this folder): the same settings, a different TYPE. */
export const mediaBrowserFields = {
  URL: z.string().min(1, 'must be the server\'s address, e.g. http://localhost:8096'),
  API_KEY: z.string().default(''),
  /**
   * Refresh the metadata of the items a request's files already are, instead of reporting them as changed (new
   * files are still reported), for every request: autopulse's emby `refresh_metadata` (emby.rs:29-34).
   */
  REFRESH_METADATA: z.boolean().default(false),
  /** The refresh's MetadataRefreshMode and ImageRefreshMode (autopulse's metadata_refresh_mode, emby.rs:62-73). */
  METADATA_REFRESH_MODE: z.enum(['None', 'ValidationOnly', 'Default', 'FullRefresh']).default('FullRefresh'),
  /**
   * How the server's library folders are compared with the relay's paths (autopulse's emby `path_match`,
   * emby.rs:44-58, 167-170): as written, or ignoring the case of ASCII letters (a Windows or UNC server).
   */
  PATH_MATCH: z.enum(['case_sensitive', 'case_insensitive']).default('case_sensitive'),
  SCAN_MODE: scanModeSchema,
};
export const mediaBrowserBase = targetBase.extend(mediaBrowserFields);
