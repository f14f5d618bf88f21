import { existsSync } from 'node:fs';
import { resolveScanMethod, type Config } from '../config/schema.ts';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../log.ts';
import { embyTarget } from './emby/target.ts';
import { jellyfinTarget } from './jellyfin/target.ts';
import { PlexApiBackend } from './plex/backends/api.ts';
import type { PlexScanBackend } from './plex/backends/backend.ts';
import { PlexDatabase } from './plex/database.ts';
import { RcloneRc } from './plex/rclone-rc.ts';
import { PlexTarget, type PlexSteps } from './plex/target.ts';
import { plexApiFor, unverifiedNotice } from './plex/tls-policy.ts';
import type { PlexApi } from './plex/api.ts';
import { PlexScannerBackend } from './plex/backends/scanner/backend.ts';
import { placeRewriter } from '../paths/rewrite.ts';

/** The enabled targets for a config. Each gets its own delivery state per queued scan. */
export function buildTargets(config: Config, log: Logger): Target[] {
  const targets: Target[] = [];
  if (config.PLEX_ENABLED) {
    const method = resolveScanMethod(config);
    log.info(
      { method, configured: config.PLEX_SCAN_METHOD, url: config.PLEX_LOCAL_URL },
      method === 'api'
        ? 'Plex scans use the HTTP API (partial scan of each folder)'
        : 'Plex scans use the Plex Media Scanner binary (no PLEX_TOKEN set, or PLEX_SCAN_METHOD "scanner")',
    );
    const plexLog = log.child({ target: 'plex' });
    const unverified = unverifiedNotice(config);
    if (unverified) plexLog.info({ key: 'PLEX_VERIFY_SSL' }, unverified);
    const api = config.PLEX_TOKEN ? plexApiFor(config) : undefined;
    targets.push(plexTarget(plexBackendFor(config, method), config, api, plexLog));
  }
  if (config.JELLYFIN.ENABLED) {
    log.info({ url: config.JELLYFIN.URL }, 'Jellyfin target enabled');
    targets.push(jellyfinTarget(config.JELLYFIN.URL, config.JELLYFIN.API_KEY, log.child({ target: 'jellyfin' }), placeRewriter(config.JELLYFIN.REWRITE)));
  }
  if (config.EMBY.ENABLED) {
    log.info({ url: config.EMBY.URL }, 'Emby target enabled');
    targets.push(embyTarget(config.EMBY.URL, config.EMBY.API_KEY, log.child({ target: 'emby' }), placeRewriter(config.EMBY.REWRITE)));
  }
  return targets;
}

/** How Plex is made to scan: its HTTP API, or the scanner binary (PLEX_SCAN_METHOD, `auto` by token). */
export function plexBackendFor(config: Config, method: 'api' | 'scanner' = resolveScanMethod(config)): PlexScanBackend {
  return method === 'scanner' ? PlexScannerBackend.fromConfig(config) : new PlexApiBackend(plexApiFor(config));
}

/** The Plex target with plex_autoscan's steps around the scan (file checks, waits, empty trash, analyze, commands). */
export function plexTarget(backend: PlexScanBackend, config: Config, api: PlexApi | undefined, log: Logger): PlexTarget {
  const refresh = config.RCLONE.RC_CACHE_REFRESH;
  const steps: PlexSteps = {
    config,
    api,
    // Opened lazily and read-only; a missing file only matters to the steps that need it.
    db: new PlexDatabase(config.PLEX_DATABASE_PATH),
    rclone: refresh.ENABLED ? new RcloneRc(refresh, log.child({ step: 'rclone' })) : undefined,
    rewrite: placeRewriter(config.PLEX_REWRITE),
  };
  if ((config.SERVER_SKIP_FILES_IN_PLEX || config.PLEX_EMPTY_TRASH || config.PLEX_ANALYZE_TYPE !== 'off') && !existsSync(config.PLEX_DATABASE_PATH)) {
    log.info({ path: config.PLEX_DATABASE_PATH }, 'PLEX_DATABASE_PATH does not exist: empty trash, analyze and skipping files already in Plex will not run until it does');
  }
  return new PlexTarget(backend, log, steps);
}
