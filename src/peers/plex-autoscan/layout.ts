import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/*
 * plex_autoscan's own layout: `scan.py` in its folder (often /opt/plex_autoscan), its config in
 * `config/config.json` below it, and `queue.db` and `cache.db` beside `scan.py` (config.py:91-117: every default
 * is os.path.dirname(sys.argv[0]), the folder of scan.py). A scanrelay started with --config pointing at such a
 * config uses those two files, as plex_autoscan would, so its pending scans and drive state are taken over.
 */

/** plex_autoscan's folder when `configPath` is its `config/config.json` beside a `scan.py`, else undefined. */
export function plexAutoscanHome(configPath: string): string | undefined {
  const configDir = dirname(configPath);
  if (basename(configDir) !== 'config') return undefined;
  const home = dirname(configDir);
  return existsSync(join(home, 'scan.py')) ? home : undefined;
}

export interface LayoutFiles {
  queuefile: string;
  cachefile: string;
  /** One line for the log saying which files were chosen and why; undefined outside plex_autoscan's layout. */
  note?: string;
}

/**
 * The default queue and cache files for `configPath`: beside the config, or in plex_autoscan's layout its own
 * `queue.db` and `cache.db`. A scanrelay file already beside the config (a relay that ran here before) stays in
 * use, so no queued scan is left behind; the note then says how to take plex_autoscan's over.
 */
export function defaultStateFiles(configPath: string): LayoutFiles {
  const beside = (file: string) => join(dirname(configPath), file);
  const home = plexAutoscanHome(configPath);
  if (!home) return { queuefile: beside('queue.db'), cachefile: beside('cache.db') };
  const pick = (file: string) => (existsSync(beside(file)) ? beside(file) : join(home, file));
  const files = { queuefile: pick('queue.db'), cachefile: pick('cache.db') };
  const kept = [files.queuefile, files.cachefile].filter((f) => dirname(f) !== home);
  const note = kept.length
    ? `plex_autoscan's layout (${join(home, 'scan.py')}): scanrelay's own ${kept.join(' and ')} beside the config stay in use; take plex_autoscan's over with "scanrelay import-plex-autoscan --from-queue ${join(home, 'queue.db')} --from-cache ${join(home, 'cache.db')}"`
    : `plex_autoscan's layout (${join(home, 'scan.py')}): using its queue ${files.queuefile} and cache ${files.cachefile}, as plex_autoscan does; its pending scans and drive state are taken over once`;
  return { ...files, note };
}
