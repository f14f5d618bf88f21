import { resolveScanMethod, type Config } from '../config/schema.ts';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../log.ts';
import { PlexApi } from './plex/api.ts';
import { PlexApiBackend } from './plex/api-backend.ts';
import { PlexTarget } from './plex/target.ts';
import { PlexScannerBackend } from './plex-scanner/backend.ts';

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
    if (method === 'api') {
      targets.push(new PlexTarget(new PlexApiBackend(new PlexApi(config.PLEX_LOCAL_URL, config.PLEX_TOKEN)), log.child({ target: 'plex' })));
    } else {
      targets.push(new PlexTarget(PlexScannerBackend.fromConfig(config), log.child({ target: 'plex' })));
    }
  }
  return targets;
}

