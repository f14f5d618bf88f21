import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { resolveScanMethod, type PlexSettings } from './settings.ts';
import type { SetupProblem } from '../../core/status.ts';
import { TargetError, TlsError } from '../http.ts';
import type { PlexScanBackend } from './backends/backend.ts';

/*
 * What the chosen Plex scan method needs, checked once at start so a missing token or binary is named
 * before the first scan fails. Each problem names the config key to fix; the relay keeps running
 * (the queue keeps scans until the problem is fixed and the relay restarted, or Plex comes back).
 */

export type { SetupProblem };

/**
 * How to get a token, for every message that asks for one (Plex's support article "Finding an authentication
 * token / X-Plex-Token", linked from the README). No URL here: the dashboard shows these messages offline.
 */
export const PLEX_TOKEN_HOWTO =
  'sign in to Plex Web as the server owner, open any movie or episode, choose Get Info > View XML, and copy the X-Plex-Token value from the address';

/** No token and no scanner: the starter file on a machine without Plex. The fix is the token, not the scanner keys. */
export function noTokenNoScanner(scanner: string): string {
  return `PLEX_TOKEN is empty and this machine has no Plex Media Scanner (PLEX_SCANNER ${scannerFile(scanner)}): no scan can run; set PLEX_TOKEN and PLEX_LOCAL_URL (Plex's address and port 32400) to scan through Plex's HTTP API (to get a token: ${PLEX_TOKEN_HOWTO}), or set PLEX_SCANNER to the scanner on this machine`;
}

export interface SetupCheckDeps {
  /** True when a program is found on PATH (sudo, docker). */
  onPath?: (program: string) => boolean;
  /** True when a file exists (the scanner binary, the Plex database). */
  exists?: (path: string) => boolean;
}

/** PLEX_SCANNER is shell text (`/usr/lib/plexmediaserver/Plex\ Media\ Scanner`); the file it names. */
export function scannerFile(text: string): string {
  const t = text.trim();
  if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"))) return t.slice(1, -1);
  return t.replace(/\\(.)/g, '$1');
}

export function onPath(program: string, path = process.env.PATH ?? ''): boolean {
  return path.split(delimiter).some((dir) => {
    if (!dir) return false;
    try {
      const file = join(dir, program);
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

/** Problems with the scanner method that can be seen without running anything. */
export function scannerProblems(config: Pick<PlexSettings, 'USE_DOCKER' | 'DOCKER_NAME' | 'USE_SUDO' | 'USER' | 'SCANNER' | 'TOKEN' | 'DATABASE_PATH'>, deps: SetupCheckDeps = {}): SetupProblem[] {
  const found = deps.onPath ?? ((p: string) => onPath(p));
  const exists = deps.exists ?? existsSync;
  const out: SetupProblem[] = [];
  if (config.USE_DOCKER) {
    if (!found('docker')) out.push({ key: 'USE_DOCKER', message: `USE_DOCKER is true but no "docker" program is on PATH: scans run "docker exec ... ${config.DOCKER_NAME}"; install docker here or set USE_DOCKER false` });
  } else {
    if (config.USE_SUDO && !found('sudo')) out.push({ key: 'USE_SUDO', message: `USE_SUDO is true but no "sudo" program is on PATH: scans run "sudo -u ${config.USER} ..."; install sudo or set USE_SUDO false` });
    const file = scannerFile(config.SCANNER);
    if (file.startsWith('/') && !exists(file)) out.push({ key: 'PLEX_SCANNER', message: `PLEX_SCANNER names ${file}, which does not exist: set it to the Plex Media Scanner binary, or use the HTTP API (set PLEX_TOKEN)` });
  }
  // The scanner method finds a folder's section in Plex's database, or through the API when a token is set.
  if (!config.TOKEN && !exists(config.DATABASE_PATH)) {
    out.push({ key: 'PLEX_DATABASE_PATH', message: `PLEX_DATABASE_PATH (${config.DATABASE_PATH}) does not exist and PLEX_TOKEN is empty: no scan can find its Plex section; fix the path or set PLEX_TOKEN` });
  }
  return out;
}

/** Everything the configured method needs; for the API, one read of the section list (which the scans reuse). */
export async function plexSetupProblems(config: PlexSettings, backend: PlexScanBackend, deps: SetupCheckDeps = {}): Promise<SetupProblem[]> {
  if (resolveScanMethod(config) === 'scanner') {
    const problems = scannerProblems(config, deps);
    // "auto" without a token on a machine without Plex's scanner: the fix is the token, not the scanner keys.
    if (config.SCAN_METHOD === 'auto' && problems.some((p) => p.key === 'PLEX_SCANNER')) {
      return [{ key: 'PLEX_TOKEN', message: noTokenNoScanner(config.SCANNER) }];
    }
    return problems;
  }
  if (!config.TOKEN) {
    return [{ key: 'PLEX_TOKEN', message: `PLEX_SCAN_METHOD is "api" but PLEX_TOKEN is empty: Plex answers every scan with 401; set PLEX_TOKEN (to get one: ${PLEX_TOKEN_HOWTO})` }];
  }
  try {
    const locations = await backend.knownLocations();
    if (locations.length === 0) return [{ key: 'PLEX_LOCAL_URL', message: `Plex at ${config.URL} has no library sections: every scan would find no section; add a library in Plex, or check PLEX_LOCAL_URL names the right server` }];
    return [];
  } catch (err) {
    const message = (err as Error).message;
    // A refused certificate is no token problem: its message names PLEX_VERIFY_SSL (api.ts).
    if (err instanceof TlsError) return [{ key: 'PLEX_VERIFY_SSL', message: `cannot read Plex's section list at ${config.URL}: ${message}` }];
    if (err instanceof TargetError && err.kind === 'auth') return [{ key: 'PLEX_TOKEN', message: `Plex at ${config.URL}: ${message}` }];
    return [{ key: 'PLEX_LOCAL_URL', message: `cannot read Plex's section list at ${config.URL} (${message}); check PLEX_LOCAL_URL and that Plex is running (scans wait in the queue until it answers)` }];
  }
}
