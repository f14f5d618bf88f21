import { after, before } from 'node:test';
import { FakePlex } from '../fakes/plex.ts';

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
