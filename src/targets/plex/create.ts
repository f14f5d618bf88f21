import { existsSync } from 'node:fs';
import type { PlexTargetConfig } from './schema.ts';
import type { Logger } from '../../core/logger.ts';
import { placeRewriter, type RewriteMode } from '../../paths/rewrite.ts';
import type { PlexApi } from './api.ts';
import { PlexApiBackend } from './backends/api.ts';
import type { PlexScanBackend } from './backends/backend.ts';
import { PlexScannerBackend } from './backends/scanner/backend.ts';
import { PlexDatabase } from './database.ts';
import { RcloneRc } from './rclone-rc.ts';
import { plexSettings, resolveScanMethod, type PlexRelaySettings, type PlexSettings } from './settings.ts';
import { PlexTarget, type PlexSteps } from './target.ts';
import { plexApiFor, unverifiedNotice } from './tls-policy.ts';

/**
 * A Plex `TARGETS` entry (or the top-level PLEX_* keys, named `plex`), with the relay-wide slice its steps read
 * (settings.ts): two Plex servers each keep their own token, rewrite, analyze and empty-trash settings, while the
 * relay-wide keys (file checks, the scanner's wrapper, RUN_COMMAND_*) stay shared.
 */
export function createPlexTarget(name: string, entry: PlexTargetConfig, log: Logger, relay: PlexRelaySettings): PlexTarget {
  const settings = plexSettings(entry, relay);
  const method = resolveScanMethod(settings);
  // `log` names the target already (targets/index.ts).
  log.info(
    { method, configured: settings.SCAN_METHOD, url: settings.URL },
    method === 'api'
      ? 'Plex scans use the HTTP API (partial scan of each folder)'
      : 'Plex scans use the Plex Media Scanner binary (no TOKEN set, or SCAN_METHOD "scanner")',
  );
  const unverified = unverifiedNotice(settings);
  if (unverified) log.info({ key: 'PLEX_VERIFY_SSL' }, unverified);
  const api = settings.TOKEN ? plexApiFor(settings) : undefined;
  return plexTarget(plexBackendFor(settings, method), settings, api, log, name);
}

/** How Plex is made to scan: its HTTP API, or the scanner binary (SCAN_METHOD, `auto` by token). */
export function plexBackendFor(settings: PlexSettings, method: 'api' | 'scanner' = resolveScanMethod(settings)): PlexScanBackend {
  return method === 'scanner' ? PlexScannerBackend.fromSettings(settings) : new PlexApiBackend(plexApiFor(settings));
}

/** The Plex target with plex_autoscan's steps around the scan (file checks, waits, empty trash, analyze, commands). */
export function plexTarget(backend: PlexScanBackend, settings: PlexSettings, api: PlexApi | undefined, log: Logger, name = 'plex', rewriteMode: RewriteMode = settings.REWRITE_MODE): PlexTarget {
  const refresh = settings.RCLONE.RC_CACHE_REFRESH;
  const steps: PlexSteps = {
    settings,
    api,
    // Opened lazily and read-only; a missing file only matters to the steps that need it.
    db: new PlexDatabase(settings.DATABASE_PATH),
    rclone: refresh.ENABLED ? new RcloneRc(refresh, log.child({ step: 'rclone' })) : undefined,
    rewrite: placeRewriter(settings.REWRITE, rewriteMode),
  };
  if ((settings.SERVER_SKIP_FILES_IN_PLEX || settings.EMPTY_TRASH || settings.ANALYZE_TYPE !== 'off') && !existsSync(settings.DATABASE_PATH)) {
    log.info({ path: settings.DATABASE_PATH }, 'PLEX_DATABASE_PATH does not exist: empty trash, analyze and skipping files already in Plex will not run until it does');
  }
  return new PlexTarget(backend, log, steps, name);
}
