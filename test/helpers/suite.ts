import { join } from 'node:path';
import { after, before } from 'node:test';
import { parseConfig } from '../../src/config/load.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { startRelay, type Relay, type RelayOptions } from '../../src/server/run.ts';
import { FakePlex } from '../fakes/plex.ts';
import { tempDir } from './relay.ts';

/**
 * For a describe() whose tests share one fake Plex and one relay started against it: starts both before the
 * first test, hands them over through `ready`, and stops both after the last test (even if starting failed).
 */
export function plexAndRelayForSuite<R extends { close(): Promise<void> }>(start: (plex: FakePlex) => Promise<R>, ready: (plex: FakePlex, relay: R) => void): void {
  let plex: FakePlex | undefined;
  let relay: R | undefined;
  before(async () => {
    plex = await new FakePlex().start();
    relay = await start(plex);
    ready(plex, relay);
  });
  after(async () => {
    await relay?.close();
    await plex?.stop();
  });
}

/**
 * The relay in this process against a fake Plex, as the server tests start it: on a free port, file checks
 * off, scans due in 10 minutes (a test makes one due when it wants it), `/movies/` and `/tv/` mapped into the
 * fake's sections, and a queue file of its own. `config` adds to or overrides that.
 */
export async function startRelayAgainst(plex: FakePlex, config: Record<string, unknown>, opts: Partial<Omit<RelayOptions, 'config' | 'queuefile'>> = {}): Promise<Relay> {
  const parsed = parseConfig({
    SERVER_IP: '127.0.0.1',
    SERVER_PORT: 0,
    SERVER_FILE_CHECKS_ENABLED: false,
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    SERVER_SCAN_DELAY: 600,
    SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'], '/data/TV/': ['/tv/'] },
    ...config,
  }).config;
  return startRelay({ log: silentLogger(), ...opts, config: parsed, queuefile: join(tempDir(), 'queue.db') });
}
