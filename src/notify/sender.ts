import { setTimeout as sleep } from 'node:timers/promises';
import type { NotificationConfig, NotificationsConfig } from '../config/notifications.ts';
import type { StoredEvent } from '../core/events.ts';
import type { Logger } from '../log.ts';
import type { Outbox } from '../queue/outbox.ts';
import { postMessage } from './http.ts';
import { maskUrl } from './mask.ts';
import { wants, type OutMessage } from './message.ts';
import { FORMATS } from './services/index.ts';

export interface SenderOptions {
  /** This relay's name: on a shared queue, the one whose turn it is sends a destination's events. */
  relayId: string;
  /** How often the outbox is looked at for new events. */
  pollMs?: number;
  /** A destination's turn holds this long, renewed each look. */
  leaseMs?: number;
  /** First retry wait; doubles up to maxRetryMs (a Retry-After overrides it). */
  retryBaseMs?: number;
  maxRetryMs?: number;
  /** Events kept in the outbox at most (rows, and age): the dashboard's stream and every destination's backlog. */
  keepRows?: number;
  keepMs?: number;
}

/**
 * A destination's loop state. `pending`: the batch being sent, as rendered. Once the service took part of it (its
 * first `taken` messages) it is kept across a retry and goes on from there, so what was taken is not sent twice;
 * later events wait for the next batch.
 */
interface SendState {
  failures: number;
  gaveUpLogged: boolean;
  pending?: { last: number; firstAt: number; events: number; messages: OutMessage[]; taken: number };
}

/** A batch waits at most this many BATCH_SECONDS after its first event, however busy the stream. */
export const BATCH_WAIT_FACTOR = 6;

/** Events read from the outbox per look. */
const READ = 1000;

/**
 * Drains the outbox to each NOTIFICATIONS destination, on its own loop: a slow or dead service holds back
 * nobody else, and no delivery waits for any of it (the scheduler only writes rows). A destination gathers its
 * events until BATCH_SECONDS pass without a new one (at most BATCH_WAIT_FACTOR times that), sends the batch as its service's messages, and moves its
 * cursor once they were taken. 429, 5xx and no answer are retried with backoff (Retry-After obeyed); events older
 * than GIVE_UP_AFTER are dropped with one log line per outage; a 4xx refusal drops that batch with one error line.
 */
export class NotifySender {
  private readonly abort = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly opts: Required<SenderOptions>;
  /** Resolved after each destination's next look at the outbox (ready, looked). */
  private readonly lookWaiters = new Set<() => void>();
  private firstLooks: Promise<void>[] = [];

  constructor(
    private readonly outbox: Outbox,
    private readonly destinations: NotificationsConfig,
    private readonly log: Logger,
    opts: SenderOptions,
  ) {
    this.opts = { pollMs: 1000, leaseMs: 30_000, retryBaseMs: 1000, maxRetryMs: 5 * 60_000, keepRows: 100_000, keepMs: 7 * 24 * 3600_000, ...opts };
  }

  start(): void {
    for (const [name, dest] of Object.entries(this.destinations)) {
      let first!: () => void;
      this.firstLooks.push(new Promise<void>((r) => (first = r)));
      this.loops.push(this.run(name, dest, first));
    }
    this.loops.push(this.pruneLoop());
  }

  /** Resolves once every destination has looked at the outbox (and holds its cursor, or knows another relay does). */
  async ready(): Promise<void> {
    await Promise.all(this.firstLooks);
  }

  /** Resolves after every destination's next two looks (tests: whatever was due has been handled). */
  async looked(): Promise<void> {
    const n = Object.keys(this.destinations).length;
    for (let round = 0; round < 2; round++) {
      let seen = 0;
      await new Promise<void>((resolve) => {
        const w = () => {
          if (++seen >= n) {
            this.lookWaiters.delete(w);
            resolve();
          }
        };
        this.lookWaiters.add(w);
      });
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled(this.loops);
  }

  private async wait(ms: number): Promise<boolean> {
    try {
      await sleep(ms, undefined, { signal: this.abort.signal });
      return true;
    } catch {
      return false;
    }
  }

  private async run(name: string, dest: NotificationConfig, first: () => void): Promise<void> {
    const state: SendState = { failures: 0, gaveUpLogged: false };
    const log = this.log.child({ notification: name, type: dest.TYPE, url: maskUrl(dest.URL) });
    while (!this.abort.signal.aborted) {
      let next: number;
      try {
        next = await this.step(name, dest, state, log);
      } catch (err) {
        // The queue's database is away: the events wait in it.
        log.warn({ err: (err as Error).message }, 'could not read the notification outbox; trying again');
        next = this.backoff(++state.failures);
      }
      first();
      for (const w of [...this.lookWaiters]) w();
      if (!(await this.wait(next))) return;
    }
  }

  private backoff(failures: number): number {
    return Math.min(this.opts.maxRetryMs, this.opts.retryBaseMs * 2 ** Math.min(20, failures - 1));
  }

  /** One look at the outbox for one destination; returns how long to wait before the next. */
  private async step(name: string, dest: NotificationConfig, state: SendState, log: Logger): Promise<number> {
    const now = Date.now();
    const cursor = await this.outbox.claim(name, this.opts.relayId, this.opts.leaseMs, now);
    if (cursor === undefined) {
      // another relay sends this destination's events (a batch begun here is its to send again whole)
      state.pending = undefined;
      return this.opts.pollMs;
    }
    if (state.pending && state.pending.last > cursor) return this.resume(name, dest, state, log, now);
    state.pending = undefined;
    const events = await this.outbox.after(cursor, READ);
    if (events.length === 0) return this.opts.pollMs;
    const giveUpBefore = now - dest.GIVE_UP_AFTER * 1000;
    const stale = events.filter((e) => e.at < giveUpBefore && wants(dest, e));
    if (stale.length) this.gaveUp(name, dest, stale.length, state, log);
    const batch = events.filter((e) => e.at >= giveUpBefore && wants(dest, e));
    const last = events.at(-1)!.id;
    const next = events.length === READ ? 0 : this.opts.pollMs;
    if (batch.length === 0) {
      await this.outbox.advance(name, this.opts.relayId, last);
      return next;
    }
    // Gather: the batch goes once BATCH_SECONDS passed without a new event, and at the latest BATCH_WAIT_FACTOR times
    // that after its first (a long drain goes as a few messages, not one per window); at once when a full read waits.
    const window = dest.BATCH_SECONDS * 1000;
    const due = Math.min(batch.at(-1)!.at + window, batch[0]!.at + window * BATCH_WAIT_FACTOR);
    if (due > now && events.length < READ) return Math.min(due - now, this.opts.pollMs * 5);
    state.pending = { last, firstAt: batch[0]!.at, events: batch.length, messages: FORMATS[dest.TYPE](dest, batch), taken: 0 };
    return this.resume(name, dest, state, log, now, next);
  }

  /**
   * Sends the pending batch from its first message not taken, and moves the cursor past it once it is sent,
   * refused, or older than GIVE_UP_AFTER; a batch of which nothing was taken is read and rendered again next time.
   */
  private async resume(name: string, dest: NotificationConfig, state: SendState, log: Logger, now: number, next = 0): Promise<number> {
    const p = state.pending!;
    if (p.firstAt < now - dest.GIVE_UP_AFTER * 1000) this.gaveUp(name, dest, p.events, state, log);
    else {
      const outcome = await this.send(dest, p.messages, log, p.taken);
      if (outcome.kind === 'retry') {
        p.taken += outcome.taken;
        if (p.taken === 0) state.pending = undefined;
        return this.retryLater(name, outcome, p.events, state, log);
      }
      if (outcome.kind === 'refused') log.error({ answer: outcome.answer, events: p.events }, `${name} refused the notification; these events are dropped`);
      else {
        state.gaveUpLogged = false;
        log.debug({ events: p.events, messages: outcome.messages }, 'notification sent');
      }
    }
    state.pending = undefined;
    state.failures = 0;
    await this.outbox.advance(name, this.opts.relayId, p.last);
    return next;
  }

  /** Events dropped for their age: one line until a batch is taken again. */
  private gaveUp(name: string, dest: NotificationConfig, events: number, state: SendState, log: Logger): void {
    if (state.gaveUpLogged) return;
    state.gaveUpLogged = true;
    log.error({ events, giveUpAfterS: dest.GIVE_UP_AFTER }, `notifications to ${name} gave up: the service did not take them within GIVE_UP_AFTER; later ones are still tried`);
  }

  private retryLater(name: string, outcome: { answer: string; retryAfterMs?: number }, events: number, state: SendState, log: Logger): number {
    const wait = outcome.retryAfterMs ?? this.backoff(++state.failures);
    log.warn({ answer: outcome.answer, retryInMs: wait, events }, `notification to ${name} not taken; sending again later`);
    return wait;
  }

  /** Sends messages in order from `from`; the first that is not taken stops it (`taken`: how many went before it). */
  private async send(
    dest: NotificationConfig,
    messages: readonly OutMessage[],
    log: Logger,
    from = 0,
  ): Promise<{ kind: 'sent'; messages: number } | { kind: 'retry'; answer: string; retryAfterMs?: number; taken: number } | { kind: 'refused'; answer: string }> {
    for (let i = from; i < messages.length; i++) {
      const r = await postMessage(dest, messages[i]!, undefined, this.abort.signal);
      if (r.kind === 'retry') return { kind: 'retry', answer: r.answer, taken: i - from, ...(r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {}) };
      if (r.kind === 'refused') return { kind: 'refused', answer: r.answer };
      log.trace({ status: r.status }, 'notification message taken');
    }
    return { kind: 'sent', messages: messages.length - from };
  }

  /** The outbox never grows without bound, whether or not anything is configured (the dashboard's stream reads it too). */
  private async pruneLoop(): Promise<void> {
    const keepMs = Math.max(this.opts.keepMs, ...Object.values(this.destinations).map((d) => d.GIVE_UP_AFTER * 1000));
    do {
      try {
        const pruned = await this.outbox.prune(Date.now() - keepMs, this.opts.keepRows);
        if (pruned) this.log.debug({ pruned }, 'old notification events pruned');
      } catch (err) {
        this.log.debug({ err: (err as Error).message }, 'could not prune the notification outbox');
      }
    } while (await this.wait(60_000));
  }
}
