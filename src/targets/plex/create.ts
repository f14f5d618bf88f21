import { existsSync } from 'node:fs';
import { plexConfigView } from '../../config/named-targets.ts';
import { resolveScanMethod, type Config } from '../../config/schema.ts';
import type { PlexTargetConfig } from '../../config/target-kinds/plex.ts';
import type { Logger } from '../../core/logger.ts';
import { placeRewriter, type RewriteMode } from '../../paths/rewrite.ts';
import type { PlexApi } from './api.ts';
import { PlexApiBackend } from './backends/api.ts';
import type { PlexScanBackend } from './backends/backend.ts';
import { PlexScannerBackend } from './backends/scanner/backend.ts';
import { PlexDatabase } from './database.ts';
import { RcloneRc } from './rclone-rc.ts';
import { PlexTarget, type PlexSteps } from './target.ts';
import { plexApiFor, unverifiedNotice } from './tls-policy.ts';

/**
 * A Plex `TARGETS` entry (or the top-level PLEX_* keys, named `plex`). Its steps read a config view: the relay's
 * config with this entry's settings as the PLEX_* keys, so two Plex servers each keep their own token, rewrite,
 * analyze and empty-trash settings, while the relay-wide keys (SERVER_*, RCLONE, RUN_COMMAND_*) stay shared.
 */
export function createPlexTarget(name: string, entry: PlexTargetConfig, log: Logger, relayConfig: Config): PlexTarget {
  const config = plexConfigView(relayConfig, entry);
  const method = resolveScanMethod(config);
  // `log` names the target already (targets/index.ts).
  const plexLog = log;
  plexLog.info(
    { method, configured: config.PLEX_SCAN_METHOD, url: config.PLEX_LOCAL_URL },
    method === 'api'
      ? 'Plex scans use the HTTP API (partial scan of each folder)'
      : 'Plex scans use the Plex Media Scanner binary (no TOKEN set, or SCAN_METHOD "scanner")',
  );
  const unverified = unverifiedNotice(config);
  if (unverified) plexLog.info({ key: 'PLEX_VERIFY_SSL' }, unverified);
  const api = config.PLEX_TOKEN ? plexApiFor(config) : undefined;
  return plexTarget(plexBackendFor(config, method), config, api, plexLog, name, entry.REWRITE_MODE);
}

/** How Plex is made to scan: its HTTP API, or the scanner binary (PLEX_SCAN_METHOD, `auto` by token). */
export function plexBackendFor(config: Config, method: 'api' | 'scanner' = resolveScanMethod(config)): PlexScanBackend {
  return method === 'scanner' ? PlexScannerBackend.fromConfig(config) : new PlexApiBackend(plexApiFor(config));
}

/** The Plex target with plex_autoscan's steps around the scan (file checks, waits, empty trash, analyze, commands). */
export function plexTarget(backend: PlexScanBackend, config: Config, api: PlexApi | undefined, log: Logger, name = 'plex', rewriteMode: RewriteMode = 'first'): PlexTarget {
  const refresh = config.RCLONE.RC_CACHE_REFRESH;
  const steps: PlexSteps = {
    config,
    api,
    // Opened lazily and read-only; a missing file only matters to the steps that need it.
    db: new PlexDatabase(config.PLEX_DATABASE_PATH),
    rclone: refresh.ENABLED ? new RcloneRc(refresh, log.child({ step: 'rclone' })) : undefined,
    rewrite: placeRewriter(config.PLEX_REWRITE, rewriteMode),
  };
  if ((config.SERVER_SKIP_FILES_IN_PLEX || config.PLEX_EMPTY_TRASH || config.PLEX_ANALYZE_TYPE !== 'off') && !existsSync(config.PLEX_DATABASE_PATH)) {
    log.info({ path: config.PLEX_DATABASE_PATH }, 'PLEX_DATABASE_PATH does not exist: empty trash, analyze and skipping files already in Plex will not run until it does');
  }
  return new PlexTarget(backend, log, steps, name);
}
