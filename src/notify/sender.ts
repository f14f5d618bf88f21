import { setTimeout as sleep } from 'node:timers/promises';
import type { NotificationConfig, NotificationsConfig } from '../config/notifications.ts';
import type { StoredEvent } from '../core/events.ts';
import type { NotificationHealth } from '../core/status.ts';
import type { Logger } from '../core/logger.ts';
import type { Outbox } from '../queue/outbox.ts';
import { postMessage } from './http.ts';
import { maskUrl } from './mask.ts';
import { firstRefusals, givenUp, retryWait } from './give-up.ts';
import { decodeBatch, encodeBatch, type SendingBatch } from './kept-batch.ts';
import { wants } from './message.ts';
import { FORMATS } from './services/index.ts';

export interface SenderOptions {
  /** This relay's name: on a shared queue, the one whose turn it is sends a destination's events. */
  relayId: string;
  /** How often the outbox is looked at for new events. */
  pollMs?: number;
  /** A destination's turn holds this long, renewed each look. */
  leaseMs?: number;
  /** First retry wait; doubles up to maxRetryMs and a quarter of GIVE_UP_AFTER (a Retry-After overrides it). */
  retryBaseMs?: number;
  maxRetryMs?: number;
  /** Events kept in the outbox at most (rows, and age): the dashboard's stream and every destination's backlog. */
  keepRows?: number;
  keepMs?: number;
}

/** A destination's loop state: refusals in a row, each refused event's first refusal, the batch under way, its health. */
interface SendState {
  failures: number;
  refused: Map<number, number>;
  sending?: SendingBatch;
  health: NotificationHealth;
}

type Outcome = { kind: 'sent' } | { kind: 'retry'; answer: string; retryAfterMs?: number } | { kind: 'refused'; answer: string };

/** A batch waits at most this many BATCH_SECONDS after its first event, however busy the stream. */
export const BATCH_WAIT_FACTOR = 6;

/** Events read from the outbox per look. */
const READ = 1000;

/**
 * Drains the outbox to each NOTIFICATIONS destination, on its own loop: a slow or dead service holds back
 * nobody else, and no delivery waits for any of it (the scheduler only writes rows). A destination gathers its
 * events until BATCH_SECONDS pass without a new one (at most BATCH_WAIT_FACTOR times that), sends the batch as its
 * service's messages, and moves its cursor once they were taken. 429, 5xx and no answer are retried with backoff
 * (Retry-After obeyed); an event the service kept refusing for GIVE_UP_AFTER since it was first tried is dropped,
 * with a log line each time; a 4xx refusal drops that batch with one error line.
 */
export class NotifySender {
  private readonly abort = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly opts: Required<SenderOptions>;
  /** Resolved after each destination's next look at the outbox (ready, looked). */
  private readonly lookWaiters = new Set<() => void>();
  private firstLooks: Promise<void>[] = [];
  private readonly states = new Map<string, SendState>();

  constructor(
    private readonly outbox: Outbox,
    private readonly destinations: NotificationsConfig,
    private readonly log: Logger,
    opts: SenderOptions,
  ) {
    this.opts = { pollMs: 1000, leaseMs: 30_000, retryBaseMs: 1000, maxRetryMs: 60_000, keepRows: 100_000, keepMs: 7 * 24 * 3600_000, ...opts };
    for (const [name, dest] of Object.entries(destinations)) {
      this.states.set(name, {
        failures: 0,
        refused: new Map(),
        health: { name, type: dest.TYPE, turn: 'starting', lastSuccessAt: null, waiting: 0, givenUp: 0, lastGiveUpAt: null, failingSince: null, lastAnswer: null },
      });
    }
  }

  start(): void {
    for (const [name, dest] of Object.entries(this.destinations)) {
      let first!: () => void;
      this.firstLooks.push(new Promise<void>((r) => (first = r)));
      this.loops.push(this.run(name, dest, first));
    }
    this.loops.push(this.pruneLoop());
  }

  /** Each destination's health (dashboard, JSON API, /metrics). */
  status(): NotificationHealth[] {
    return [...this.states.values()].map((s) => ({ ...s.health }));
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
    const state = this.states.get(name)!;
    const log = this.log.child({ notification: name, type: dest.TYPE, url: maskUrl(dest.URL) });
    while (!this.abort.signal.aborted) {
      let next: number;
      try {
        next = await this.step(name, dest, state, log);
      } catch (err) {
        // The queue's database is away: the events wait in it.
        log.warn({ err: (err as Error).message }, 'could not read the notification outbox; trying again');
        next = this.retryWait(++state.failures, dest);
      }
      first();
      for (const w of [...this.lookWaiters]) w();
      if (!(await this.wait(next))) return;
    }
  }

  private retryWait(failures: number, dest: NotificationConfig): number {
    return retryWait(failures, this.opts.retryBaseMs, this.opts.maxRetryMs, dest.GIVE_UP_AFTER * 1000);
  }

  /** One look at the outbox for one destination; returns how long to wait before the next. */
  private async step(name: string, dest: NotificationConfig, state: SendState, log: Logger): Promise<number> {
    const now = Date.now();
    const turn = await this.outbox.claim(name, this.opts.relayId, this.opts.leaseMs, now);
    if (turn === undefined) {
      // Another relay sends this destination's events, and goes on with a batch begun here from what the queue kept.
      state.sending = undefined;
      state.health.turn = 'elsewhere';
      return this.opts.pollMs;
    }
    state.health.turn = 'here';
    if (turn.sentAt !== undefined && turn.sentAt > (state.health.lastSuccessAt ?? 0)) state.health.lastSuccessAt = turn.sentAt;
    // A batch the service took part of goes on from its first message not taken (after a restart: as the queue kept it).
    if (!state.sending && turn.batch) {
      state.sending = decodeBatch(turn.batch, dest);
      if (state.sending) log.info({ events: state.sending.events, taken: state.sending.taken, messages: state.sending.messages.length }, `going on with a batch to ${name} the service took part of`);
    }
    if (state.sending) return this.attempt(name, dest, state, log, now, 0);
    const read = await this.outbox.read(turn.cursor, READ);
    const rows = read.events.filter((r) => wants(dest, r.event));
    const next = read.full ? 0 : this.opts.pollMs;
    state.health.waiting = rows.length;
    if (rows.length === 0) {
      if (read.end !== turn.cursor) await this.outbox.advance(name, this.opts.relayId, read.end);
      return next;
    }
    const batch = rows.map((r) => r.event);
    // Gather: the batch goes once BATCH_SECONDS passed without a new event, and at the latest BATCH_WAIT_FACTOR times
    // that after its first (a long drain goes as a few messages, not one per window); at once when a full read waits.
    const window = dest.BATCH_SECONDS * 1000;
    const due = Math.min(batch.at(-1)!.at + window, batch[0]!.at + window * BATCH_WAIT_FACTOR);
    if (due > now && !read.full) return Math.min(due - now, this.opts.pollMs * 5);
    state.sending = { end: read.end, type: dest.TYPE, events: batch.length, messages: FORMATS[dest.TYPE](dest, batch), taken: 0 };
    return this.attempt(name, dest, state, log, now, next, rows);
  }

  /**
   * Sends the batch under way from its first message not taken. Sent or refused (4xx): the cursor moves past it.
   * Not taken: a batch of which nothing was taken is read and rendered again next time (what came meanwhile joins
   * it), a batch taken in part is kept; and what the service refused for GIVE_UP_AFTER since its first refusal is
   * given up. `rows`: a fresh batch's events with their cursors.
   */
  private async attempt(
    name: string,
    dest: NotificationConfig,
    state: SendState,
    log: Logger,
    now: number,
    next: number,
    rows?: ReadonlyArray<{ event: StoredEvent; cursor: string }>,
  ): Promise<number> {
    const b = state.sending!;
    const outcome = await this.send(name, dest, state, b, log);
    const health = state.health;
    if (outcome.kind !== 'retry') {
      if (outcome.kind === 'refused') {
        log.error({ answer: outcome.answer, events: b.events }, `${name} refused the notification; these events are dropped`);
        this.dropped(state, b.events, outcome.answer);
      } else {
        log.debug({ events: b.events, messages: b.messages.length }, 'notification sent');
        health.failingSince = null;
        health.lastAnswer = null;
      }
      state.sending = undefined;
      state.failures = 0;
      state.refused.clear();
      health.waiting = Math.max(0, health.waiting - b.events);
      await this.outbox.advance(name, this.opts.relayId, b.end, outcome.kind === 'sent' ? Date.now() : undefined);
      return next;
    }
    health.failingSince ??= now;
    health.lastAnswer = outcome.answer;
    const giveUpMs = dest.GIVE_UP_AFTER * 1000;
    if (rows && b.taken === 0) {
      state.sending = undefined;
      const ids = rows.map((r) => r.event.id);
      state.refused = firstRefusals(state.refused, ids, now);
      const n = givenUp(ids, state.refused, now, giveUpMs);
      if (n) {
        await this.outbox.advance(name, this.opts.relayId, n === rows.length ? b.end : rows[n - 1]!.cursor);
        this.gaveUp(name, dest, n, state, log, outcome.answer);
      }
    } else if (b.refusedAt === undefined) {
      b.refusedAt = now;
      await this.outbox.keepBatch(name, this.opts.relayId, encodeBatch(b, dest), health.lastSuccessAt ?? now);
    } else if (now - b.refusedAt >= giveUpMs) {
      state.sending = undefined;
      await this.outbox.advance(name, this.opts.relayId, b.end);
      this.gaveUp(name, dest, b.events, state, log, outcome.answer, ' (the rest of a batch the service took part of)');
    }
    const wait = outcome.retryAfterMs ?? this.retryWait(++state.failures, dest);
    log.warn({ answer: outcome.answer, retryInMs: wait, events: b.events }, `notification to ${name} not taken; sending again later`);
    return wait;
  }

  /** Events the service refused for GIVE_UP_AFTER: dropped, one line each time. */
  private gaveUp(name: string, dest: NotificationConfig, events: number, state: SendState, log: Logger, answer: string, what = ''): void {
    log.error(
      { events, giveUpAfterS: dest.GIVE_UP_AFTER, answer },
      `notifications to ${name} given up: ${events} event${events === 1 ? '' : 's'}${what} the service kept refusing for GIVE_UP_AFTER (${dest.GIVE_UP_AFTER} s); later ones are still tried`,
    );
    this.dropped(state, events, answer);
    state.health.waiting = Math.max(0, state.health.waiting - events);
  }

  private dropped(state: SendState, events: number, answer: string): void {
    state.health.givenUp += events;
    state.health.lastGiveUpAt = Date.now();
    state.health.lastAnswer = answer;
  }

  /**
   * Sends the batch's messages in order from its first not taken; the first that is not taken stops it. After each
   * message taken, while more remain, the batch is kept with the cursor: a crash then sends none of it twice.
   */
  private async send(name: string, dest: NotificationConfig, state: SendState, b: SendingBatch, log: Logger): Promise<Outcome> {
    for (let i = b.taken; i < b.messages.length; i++) {
      const r = await postMessage(dest, b.messages[i]!, undefined, this.abort.signal);
      if (r.kind === 'retry') return { kind: 'retry', answer: r.answer, ...(r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {}) };
      if (r.kind === 'refused') return { kind: 'refused', answer: r.answer };
      log.trace({ status: r.status }, 'notification message taken');
      b.taken = i + 1;
      state.health.lastSuccessAt = Date.now();
      if (b.taken < b.messages.length) await this.outbox.keepBatch(name, this.opts.relayId, encodeBatch(b, dest), state.health.lastSuccessAt);
    }
    return { kind: 'sent' };
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
