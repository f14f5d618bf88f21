import { setTimeout as sleep } from 'node:timers/promises';
import type { Target } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import type { QueueBackend } from './backend.ts';
import { ServerTurns } from './server-turns.ts';

export interface SerialTurnsHooks {
  /** Looks for work again (a turn was freed). */
  poke: () => void;
  /** Keeps a turn held with no delivery in it among what stop() waits for (AfterSteps.track). */
  track: (wait: Promise<void>) => void;
  /** The server no longer scans (`unknown`: it could not be asked): the scans this relay left untold for it are told. */
  tellUntoldOf: (target: string, unknown: string | undefined) => Promise<void>;
}

/**
 * The one-at-a-time turns of serial targets (Plex): one scan at a time per server, whatever its names here
 * (ServerTurns), held by a delivery until its after-steps end, or with no delivery in it while a busy server waits;
 * on a shared queue, the turn across relays is released with it. A turn taken over from a relay that died waits
 * until the server no longer runs that relay's scan.
 */
export class SerialTurns {
  /** Serial targets whose turn is taken (a delivery, or its after-steps, still running). */
  private readonly busy = new Set<string>();
  /** Which serial targets are one server: two names for one Plex take one turn. */
  private readonly turns: ServerTurns;
  /** Servers (turn keys) whose turn was taken over from a dead relay, while they still run its scan: every name waits. */
  private readonly settling = new Set<string>();
  /** Ends the waits of deliveries that hold a serial target's turn (holdTurn), on stop. */
  private readonly holdAbort = new AbortController();

  constructor(
    private readonly store: Pick<QueueBackend, 'shared'>,
    private readonly targets: ReadonlyMap<string, Target>,
    private readonly log: Logger,
    clock: () => number,
    private readonly hooks: SerialTurnsHooks,
  ) {
    this.turns = new ServerTurns(log, () => hooks.poke(), clock);
  }

  /** Serial targets' servers are asked who they are now; each sends once it answered (two names, one turn). */
  ask(targets: Iterable<Target>): void {
    for (const t of targets) this.turns.key(t);
  }

  /** Aborted on stop: a delivery waiting with its turn held stops waiting. */
  get signal(): AbortSignal {
    return this.holdAbort.signal;
  }

  stop(): void {
    this.holdAbort.abort();
  }

  /** Whether a serial target may take its turn: not while any name of its server holds it, or is not known yet. */
  free(target: Target): boolean {
    // Busy when any name of its server is: keys are asked now, as an id learned meanwhile may join two names.
    if (this.turns.pending(target)) return false;
    const turn = this.turns.key(target);
    for (const busy of this.busy) {
      const other = this.targets.get(busy);
      if (busy === target.name || (other && this.turns.key(other) === turn)) return false;
    }
    return true;
  }

  /** A delivery takes `target`'s turn. */
  take(target: string): void {
    this.busy.add(target);
  }

  /** Whether `target`'s server still runs the scan of a relay whose turn was taken over (every name waits). */
  isSettling(target: Target): boolean {
    return this.settling.has(this.turns.key(target));
  }

  /**
   * After taking a turn over: whether the server still runs a scan (the dead relay's, or its own library scan).
   * A server that cannot be asked is taken as idle: a delivery to it then fails or retries as usual.
   */
  async stillScanning(target: Target): Promise<boolean> {
    let running: string[] = [];
    let unknown: string | undefined;
    try {
      running = (await target.scanning?.()) ?? [];
    } catch (err) {
      unknown = (err as Error).message;
      this.log.debug({ target: target.name, err: unknown }, 'cannot ask the server whether it still scans');
    }
    if (running.length === 0) {
      if (this.settling.delete(this.turns.key(target))) this.log.info({ target: target.name }, 'the scan the previous holder of the turn sent has ended; sending');
      await this.hooks.tellUntoldOf(target.name, unknown);
      return false;
    }
    if (!this.settling.has(this.turns.key(target))) {
      this.settling.add(this.turns.key(target));
      this.log.warn({ target: target.name, running }, 'took the one-at-a-time turn over from a relay that stopped renewing it; the server still scans, so nothing is sent until it is done');
    }
    return true;
  }

  /**
   * Keeps a serial target's turn for `ms` with no delivery in it, then lets the next look claim under it (the turn
   * shared with other relays stays this relay's: the look takes it again as its own).
   */
  holdFor(target: string, sharedTurn: boolean, ms: number): void {
    const wait = sleep(ms, undefined, { signal: this.holdAbort.signal }).then(
      () => {
        this.busy.delete(target);
        this.hooks.poke();
      },
      () => this.release(target, sharedTurn),
    );
    this.hooks.track(wait);
  }

  /** Frees a serial target's turn: this relay's, and the one shared with other relays when held. */
  async release(target: string, sharedTurn: boolean): Promise<void> {
    // The shared row goes first: another name of the same server, free a moment earlier, would take this
    // process's row as its own and lose it to this delete.
    try {
      if (sharedTurn) await this.store.shared?.releaseTurn(target);
    } finally {
      this.busy.delete(target);
    }
  }
}
