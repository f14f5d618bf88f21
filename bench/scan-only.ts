import { configSchema, type FileConfig } from '../src/config/schema.ts';
import { legacyPlexTarget } from '../src/config/named-targets.ts';
import { plexSettings } from '../src/targets/plex/settings.ts';
import type { Logger } from '../src/core/logger.ts';
import { PlexApi } from '../src/targets/plex/api.ts';
import { PlexApiBackend } from '../src/targets/plex/backends/api.ts';
import { plexTarget } from '../src/targets/plex/create.ts';
import type { PlexTarget } from '../src/targets/plex/target.ts';
import type { FakePlex } from '../test/fakes/plex.ts';

/**
 * The set-up the queue benches share (coalesce.ts, targets-drain.ts): a Plex target that only scans. No file
 * checks, waits or steps after the scan, and its turn ends when the scan request is answered, so a figure is the
 * queue's and the scheduler's, not Plex's.
 */
const FILE = configSchema.parse({
  SERVER_PASS: 'bench',
  SERVER_FILE_CHECKS_ENABLED: false,
  PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false,
  PLEX_CHECK_BEFORE_SCAN: false,
  PLEX_EMPTY_TRASH: false,
  PLEX_ANALYZE_TYPE: 'off',
}) as FileConfig;
export const SCAN_ONLY = plexSettings(legacyPlexTarget(FILE)!, FILE);

/** The Plex target of SCAN_ONLY on a fake Plex, through its HTTP API. */
export function scanOnlyPlex(plex: Pick<FakePlex, 'url' | 'token'>, log: Logger): PlexTarget {
  return plexTarget(new PlexApiBackend(new PlexApi(plex.url, plex.token)), SCAN_ONLY, undefined, log);
}
