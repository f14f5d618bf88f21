import semver from 'semver';
import type { z } from 'zod';
import type { scanModeSchema } from './schema.ts';

/** SCAN_MODE as configured: `auto` or one of the modes a scan is sent in. */
export type ScanModeSetting = z.infer<typeof scanModeSchema>;
export type ScanMode = Exclude<ScanModeSetting, 'auto'>;

/** The mode in use and why: shown in the log, on the dashboard, in `scanrelay map` and in /metrics. */
export interface ModeChoice {
  mode: ScanMode;
  why: string;
}

/** The TargetedScan plugin's name in `GET /Plugins` (its Plugin.cs `Name`, on Jellyfin and on Emby). */
export const TARGETED_SCAN = 'TargetedScan';

/**
 * The first Jellyfin release whose `POST /Library/Media/Updated` refreshes the whole library instead of the path
 * (jellyfin/jellyfin#16729, #16176; Cloudbox/autoscan#233).
 */
const WHOLE_LIBRARY_FROM = '10.11.0';

/**
 * What `auto` picks from what the server said: the TargetedScan plugin when it is active (Jellyfin reports a Status,
 * "Active" when loaded; Emby reports none for a loaded plugin); else item refreshes on Jellyfin 10.11 or later, whose
 * Media/Updated scans the whole library; else Media/Updated (Emby, Jellyfin before 10.11: it scans the path).
 */
export function chooseMode(product: 'Jellyfin' | 'Emby', version: string | undefined, plugins: ReadonlyArray<{ name: string; version?: string; status?: string }>): ModeChoice {
  const named = `${product}${version ? ` ${version}` : ''}`;
  const plugin = plugins.find((p) => p.name.toLowerCase() === TARGETED_SCAN.toLowerCase());
  if (plugin && (plugin.status === undefined || plugin.status.toLowerCase() === 'active')) {
    return { mode: 'plugin', why: `${named} has the ${TARGETED_SCAN} plugin${plugin.version ? ` ${plugin.version}` : ''} active` };
  }
  const pluginNote = plugin ? `its ${TARGETED_SCAN} plugin is ${plugin.status}` : `no ${TARGETED_SCAN} plugin`;
  // Jellyfin says "10.11.3"; coerce also reads a four-part version and ignores a suffix.
  const parsed = semver.coerce(version ?? '');
  if (product === 'Jellyfin' && parsed && semver.gte(parsed, WHOLE_LIBRARY_FROM)) {
    return { mode: 'item', why: `${named}, ${pluginNote}: Media/Updated would scan the whole library there` };
  }
  if (product === 'Jellyfin' && !parsed) return { mode: 'item', why: `${named} (version unknown, taken as 10.11 or later), ${pluginNote}` };
  return { mode: 'media-updated', why: `${named}, ${pluginNote}: Media/Updated scans only the path there` };
}
