/**
 * targets-drain.ts's fake Plex, Jellyfin and Tdarr in a process of their own (BENCH_TARGET_FAKES=process), as
 * real servers are: the relay's process then does only the relay's work, not the servers' side of each request.
 * Driven over IPC by the bench: `start` (answers the URLs), `counts`, `gaps` and `stop`.
 */
import { FakeMediaServer } from '../test/fakes/jellyfin.ts';
import { FakePlex } from '../test/fakes/plex.ts';
import { FakeTdarr } from '../test/fakes/tdarr.ts';

export interface FakesStart {
  latencyMs: number;
  startDelayMs: number;
  scanMs: number;
}

export interface FakesCounts {
  plexScans: number;
  /** When Plex received its last scan request so far (this machine's clock). */
  lastPlexAt: number;
  /** Paths the other two received (one per scan here). */
  others: number;
  /** The requests they came in. */
  otherRequests: number;
}

let fakes: { plex: FakePlex; jellyfin: FakeMediaServer; tdarr: FakeTdarr } | undefined;

async function start(opts: FakesStart): Promise<{ plex: string; plexToken: string; jellyfin: string; tdarr: string }> {
  const plex = await new FakePlex({ sections: [{ id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] }] }).start();
  plex.latencyMs = opts.latencyMs;
  plex.scanStartDelayMs = opts.startDelayMs;
  plex.scanMsFor = () => opts.scanMs;
  const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
  const tdarr = await new FakeTdarr().start();
  fakes = { plex, jellyfin, tdarr };
  return { plex: plex.url, plexToken: plex.token, jellyfin: jellyfin.url, tdarr: tdarr.url };
}

function counts(): FakesCounts {
  const { plex, jellyfin, tdarr } = fakes!;
  return { plexScans: plex.refreshes().length, lastPlexAt: plex.scans.at(-1)?.requestedAt ?? 0, others: jellyfin.updates.length + tdarr.scans.flatMap((x) => x.arrayOrPath).length, otherRequests: jellyfin.calls.filter((c) => c.path === '/Library/Media/Updated').length + tdarr.scans.length };
}

/** Plex's idle time between the end of one scan and the next request. */
function gaps(): number[] {
  const s = fakes!.plex.scans;
  return s.slice(1).map((x, i) => (s[i]!.endedAt !== undefined ? x.requestedAt - s[i]!.endedAt! : 0)).filter((g) => g >= 0);
}

async function stop(): Promise<void> {
  if (fakes) await Promise.all([fakes.plex.stop(), fakes.jellyfin.stop(), fakes.tdarr.stop()]);
  fakes = undefined;
}

if (process.send) {
  process.on('message', (msg: { id: number; cmd: 'start' | 'counts' | 'gaps' | 'stop'; opts?: FakesStart }) => {
    void (async () => {
      const out = msg.cmd === 'start' ? await start(msg.opts!) : msg.cmd === 'counts' ? counts() : msg.cmd === 'gaps' ? gaps() : await stop();
      process.send!({ id: msg.id, out });
      if (msg.cmd === 'stop') process.disconnect();
    })();
  });
}
