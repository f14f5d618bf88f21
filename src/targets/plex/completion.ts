import { setTimeout as sleep } from 'node:timers/promises';
import type { PlexSettings } from './settings.ts';
import type { PlexAddress } from './tls-policy.ts';
import type { Logger } from '../../core/logger.ts';
import { ActivityFeed, type RunningScan } from './activity-feed.ts';
import type { PlexApi } from './api.ts';
import { PlexNotificationStream, type StreamMessage, type Transport } from './notifications/stream.ts';
import { DEFAULT_START_DELAY, StartDelays } from './start-delay.ts';
import { plexTlsPolicy } from './tls-policy.ts';
import { SCAN_ACTIVITY } from './wait.ts';

export interface CompletionTimings {
  /** How often Plex is polled while the notification stream is away. */
  pollMs: number;
  /** Longest watch; after it the scan counts as "sent, completion unknown". */
  maxMs: number;
  /** plex_autoscan's fixed wait before empty trash/analyze, used when Plex cannot be read at all. */
  fallbackMs: number;
}

export type Completion = { completed: true; scanSeen: boolean } | { completed: false; reason: string };

/** Where scan completion comes from right now. */
export type WatchMode = 'websocket' | 'sse' | 'polling';

/** A library scan as the stream showed it. */
interface SeenScan {
  uuid: string;
  sectionId?: string;
  title?: string;
  firstAt: number;
  endedAt?: number;
  /** Already running when the stream (re)connected: started before any request now watched. */
  before: boolean;
}

const KEEP_ENDED_MS = 10 * 60_000;
const STALE_REQUEST_MS = 60_000;

/**
 * When did Plex finish a scan? From Plex's own notification stream while it is connected: the section's
 * `library.update.section` activity that was first seen after the request, once it has ended. While the
 * stream is away (connecting, reconnecting, refused, an old server) the same questions are answered by
 * polling (activity-feed.ts), so callers never know which one they got. A scan that never shows counts as
 * finished after the wait learned in start-delay.ts.
 */
export class ScanWatch {
  private readonly seen = new Map<string, SeenScan>();
  /** Requests sent, by section, whose scan has not been seen yet (for learning the start delay). */
  private readonly sent = new Map<string, number>();
  private readonly wakers = new Set<() => void>();
  /** The stream is open and its view was seeded from a poll: it can be trusted. */
  private seeded = false;
  private refusedAt = -Infinity;
  readonly delays: StartDelays;

  constructor(
    private readonly deps: { stream?: PlexNotificationStream; feed: ActivityFeed; timings: CompletionTimings; log: Logger; delays?: StartDelays },
  ) {
    this.delays = deps.delays ?? new StartDelays();
    deps.stream?.subscribe((m) => this.onMessage(m));
  }

  /** Connects the notification stream (once). */
  start(): void {
    this.deps.stream?.start();
  }

  close(): void {
    this.deps.stream?.close();
  }

  mode(): WatchMode {
    return this.streamUsable() ? this.deps.stream!.openTransport! : 'polling';
  }

  /** One line for the dashboard: what scan completion is read from, and why. */
  describe(now = Date.now()): string {
    const stream = this.deps.stream;
    if (!stream) return 'scan completion: polling /activities';
    const state = stream.state;
    if (this.streamUsable()) return `scan completion: Plex notification stream (${state.kind === 'open' && state.transport === 'sse' ? 'Server-Sent Events' : 'websocket'})`;
    if (state.kind === 'down') return `scan completion: polling /activities (notification stream unavailable: ${state.error}; next try in ${Math.max(0, Math.ceil((state.retryAt - now) / 1000))} s)`;
    return 'scan completion: polling /activities (connecting to the notification stream)';
  }

  /** The request for a scan of `sectionId` is about to be sent. */
  noteSent(sectionId: string, at = Date.now()): void {
    this.sent.set(sectionId, at);
  }

  /** Plex's running library scans: from the stream when it can be trusted, else by polling. */
  async running(): Promise<RunningScan[]> {
    if (!this.streamUsable()) return this.deps.feed.current();
    const live = [...this.seen.values()].filter((s) => s.endedAt === undefined);
    if (live.length === 0) return [];
    // An "ended" the stream never delivered would hold every scan: confirm with Plex itself.
    let polled: RunningScan[];
    try {
      polled = await this.deps.feed.current();
    } catch {
      return live.map((s) => ({ uuid: s.uuid, sectionId: s.sectionId, title: s.title }));
    }
    const now = Date.now();
    for (const s of live) if (!polled.some((p) => (p.uuid && p.uuid === s.uuid) || p.sectionId === s.sectionId)) s.endedAt = now;
    return polled;
  }

  /**
   * Waits until the scan requested at `sentAt` for `sectionId` has ended. `log` carries the scan and section.
   */
  async waitForScan(sectionId: string, sentAt: number, log: Logger, signal: AbortSignal): Promise<Completion> {
    const deadline = sentAt + this.deps.timings.maxMs;
    let seenScan = false;
    let via: WatchMode = this.mode();
    // The stream while it lasts...
    while (this.streamUsable() && this.refusedAt < sentAt) {
      const scan = this.streamScan(sectionId, sentAt);
      const now = Date.now();
      if (scan) seenScan = true;
      if (scan?.endedAt !== undefined) return this.done(log, { seen: true, ms: scan.endedAt - sentAt, via });
      const appear = this.delays.waitMs();
      if (!scan && now >= sentAt + appear) {
        // Before calling it a scan that never showed, ask Plex itself once: a busy server's notification may
        // lag behind its own /activities.
        const late = await this.deps.feed.snapshot(Infinity).catch(() => undefined);
        if (!late?.scans.some((s) => s.sectionId === sectionId)) return this.done(log, { seen: false, ms: Date.now() - sentAt, via, appear });
        this.firstSight(sectionId, late.at);
        seenScan = true;
        break;
      }
      if (now >= deadline) return this.stillScanning(log, now - sentAt);
      await this.changed((scan ? deadline : Math.min(deadline, sentAt + appear)) - now, signal);
    }
    // ...then polling, which a stream that came back can still end early.
    via = 'polling';
    for (;;) {
      const scan = this.streamUsable() && this.refusedAt < sentAt ? this.streamScan(sectionId, sentAt) : undefined;
      if (scan?.endedAt !== undefined) return this.done(log, { seen: true, ms: scan.endedAt - sentAt, via: this.mode() });
      let running: boolean;
      let now: number;
      try {
        const snap = await this.deps.feed.snapshot();
        if (snap.at < sentAt) {
          // A shared snapshot from before the request says nothing about this scan.
          await this.changed(this.deps.timings.pollMs, signal);
          continue;
        }
        running = snap.scans.some((s) => s.sectionId === sectionId);
        // What Plex showed as of the read, not of its answer: a slow answer must not stretch the wait.
        now = snap.at;
      } catch (err) {
        log.info({ err: (err as Error).message, waitMs: this.deps.timings.fallbackMs }, 'cannot read Plex /activities; waiting a fixed time before the after-scan steps');
        await sleep(this.deps.timings.fallbackMs, undefined, { signal });
        return { completed: false, reason: 'Plex /activities unavailable' };
      }
      if (running) {
        if (!seenScan) this.firstSight(sectionId, now);
        seenScan = true;
      } else {
        const appear = this.delays.waitMs();
        if (seenScan || now - sentAt >= appear) return this.done(log, { seen: seenScan, ms: now - sentAt, via, appear });
      }
      if (Date.now() >= deadline) return this.stillScanning(log, Date.now() - sentAt);
      await this.changed(this.deps.timings.pollMs, signal);
    }
  }

  private done(log: Logger, r: { seen: boolean; ms: number; via: WatchMode; appear?: number }): Completion {
    if (r.seen) log.info({ ms: r.ms, via: r.via }, 'Plex scan completed: its scan activity for the section ended');
    else log.info({ ms: r.ms, via: r.via, waitedMs: r.appear }, `Plex showed no scan activity for the section within ${((r.appear ?? 0) / 1000).toFixed(2)} s: taking the scan as already finished`);
    return { completed: true, scanSeen: r.seen };
  }

  private stillScanning(log: Logger, ms: number): Completion {
    log.warn({ ms }, 'Plex is still scanning the section; stopped watching');
    return { completed: false, reason: `still scanning after ${Math.round(ms / 1000)} s` };
  }

  private streamUsable(): boolean {
    return this.seeded && this.deps.stream?.state.kind === 'open';
  }

  /** The section's first scan seen on the stream after the request. */
  private streamScan(sectionId: string, sentAt: number): SeenScan | undefined {
    let best: SeenScan | undefined;
    for (const s of this.seen.values()) {
      if (s.before || s.sectionId !== sectionId || s.firstAt < sentAt) continue;
      if (!best || s.firstAt < best.firstAt) best = s;
    }
    return best;
  }

  private firstSight(sectionId: string | undefined, at: number): void {
    if (sectionId === undefined) return;
    const sentAt = this.sent.get(sectionId);
    if (sentAt === undefined || at < sentAt) return;
    this.sent.delete(sectionId);
    // A scan first seen this long after a request that never showed is someone else's, not a start delay.
    if (at - sentAt <= STALE_REQUEST_MS) this.delays.add(at - sentAt);
  }

  private onMessage(m: StreamMessage): void {
    if (m.kind === 'activity') {
      const e = m.event;
      if (e.type === SCAN_ACTIVITY) {
        let s = this.seen.get(e.uuid);
        if (!s) {
          s = { uuid: e.uuid, sectionId: e.sectionId, title: e.title, firstAt: m.at, before: false };
          this.seen.set(e.uuid, s);
          this.firstSight(e.sectionId, m.at);
        }
        if (e.event === 'ended') s.endedAt = m.at;
        this.prune(m.at);
      }
    } else if (m.kind === 'refused') {
      this.refusedAt = m.at;
    } else if (m.state.kind === 'open') {
      void this.seed();
    } else {
      this.seeded = false;
    }
    for (const wake of [...this.wakers]) wake();
  }

  /** On (re)connect: what is already running started before any request now watched. */
  private async seed(): Promise<void> {
    this.seen.clear();
    let scans: RunningScan[] = [];
    try {
      scans = await this.deps.feed.current(Infinity);
    } catch {
      // Plex answered the stream but not the poll: start with an empty view.
    }
    if (this.deps.stream?.state.kind !== 'open') return;
    for (const s of scans) if (s.uuid) this.seen.set(s.uuid, { uuid: s.uuid, sectionId: s.sectionId, title: s.title, firstAt: 0, before: true });
    this.seeded = true;
    for (const wake of [...this.wakers]) wake();
  }

  private prune(now: number): void {
    if (this.seen.size < 200) return;
    for (const [uuid, s] of this.seen) if (s.endedAt !== undefined && now - s.endedAt > KEEP_ENDED_MS) this.seen.delete(uuid);
  }

  /** Resolves at the next stream message or after `ms`; rejects when aborted. */
  private changed(ms: number, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        this.wakers.delete(finish);
        signal.removeEventListener('abort', abort);
        resolve();
      };
      const abort = () => {
        clearTimeout(timer);
        this.wakers.delete(finish);
        reject(signal.reason);
      };
      const timer = setTimeout(finish, Math.max(0, ms));
      this.wakers.add(finish);
      signal.addEventListener('abort', abort, { once: true });
    });
  }
}

/** The waits of the scan watch and its stream, part of the Plex target's timings. */
export interface ScanWatchTimings {
  /** How old a shared poll of Plex's scans may be (activity-feed.ts). */
  activitiesMaxAgeMs: number;
  /** Poll interval while the stream is away. */
  completionPollMs: number;
  /** The wait for a scan that never shows, until this server's start delays are learned (start-delay.ts). */
  completionAppearMs: number;
  /** Longest watch; plex_autoscan's fixed wait when Plex cannot be read. */
  completionMaxMs: number;
  completionFallbackMs: number;
  /** Plex's notification stream (notifications/stream.ts): reconnect backoff and keep-alive. */
  streamBackoffMs: number;
  streamBackoffMaxMs: number;
  streamKeepaliveMs: number;
}

/** The Plex target's watch: the notification stream over `transports` (false: none), and polling through `api`. */
export function plexScanWatch(api: PlexApi, config: PlexAddress & Pick<PlexSettings, 'TOKEN'>, t: ScanWatchTimings, log: Logger, transports: readonly Transport[] | false): ScanWatch {
  const stream =
    transports && transports.length > 0
      ? new PlexNotificationStream({
          baseUrl: config.URL,
          token: config.TOKEN,
          verifyTls: plexTlsPolicy(config).verify,
          log,
          transports: [...transports],
          backoffMs: t.streamBackoffMs,
          backoffMaxMs: t.streamBackoffMaxMs,
          keepaliveMs: t.streamKeepaliveMs,
        })
      : undefined;
  return new ScanWatch({
    stream,
    feed: new ActivityFeed(api, t.activitiesMaxAgeMs),
    timings: { pollMs: t.completionPollMs, maxMs: t.completionMaxMs, fallbackMs: t.completionFallbackMs },
    delays: new StartDelays({ ...DEFAULT_START_DELAY, initialMs: t.completionAppearMs }),
    log,
  });
}
