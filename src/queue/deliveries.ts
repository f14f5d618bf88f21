import { setTimeout as sleep } from 'node:timers/promises';
import type { DeliveryResult, ScanItem, Target } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import { isDiskFull } from '../db/disk-full.ts';
import type { Claimed, QueueBackend } from './backend.ts';
import type { DeliverySlots } from './delivery-slots.ts';
import type { HoldNotices } from './hold-notices.ts';
import type { SerialTurns } from './serial-turns.ts';

/** One delivery's outcome, told after it is recorded (metrics). */
export interface DeliveryEvent {
  target: string;
  item: ScanItem;
  result: DeliveryResult;
  ms: number;
}

export interface DeliveriesDeps {
  store: Pick<QueueBackend, 'putBack'>;
  targets: ReadonlyMap<string, Target>;
  log: Logger;
  serial: SerialTurns;
  slots: DeliverySlots;
  holds: HoldNotices;
  clock: () => number;
  /** Whether the scheduler runs (a stopped one ends the waits that hold a turn). */
  running: () => boolean;
  /** Looks for work again (a slot or a turn was freed). */
  poke: () => void;
  /** The wait before a retry of `item` (its back-off, or what the target asked for). */
  retryWait: (item: ScanItem, result: Extract<DeliveryResult, { outcome: 'retry' }>) => number;
  /** Records an outcome (the scheduler's); true when after-steps were started that hold a serial target's turn. */
  record: (item: ScanItem, target: string, result: DeliveryResult, serial: boolean, sharedTurn: boolean, delivery: string) => Promise<boolean>;
  opts: { onDelivery?: (event: DeliveryEvent) => void; diskFull?: { failed(what: string): void } };
}

/**
 * Sends the deliveries the scheduler claimed, each in its target's slot (or a serial target's turn), and hands each
 * outcome to the scheduler to record. It counts what is in flight, so that stop() can wait for it and then let it go.
 */
export class Deliveries {
  private inFlight = 0;
  /** stop() let go of the deliveries still in flight: their outcomes are not recorded (they are sent again at start). */
  private abandoned = false;
  private readonly idleWaiters: Array<() => void> = [];
  private readonly store: DeliveriesDeps['store'];
  private readonly targets: DeliveriesDeps['targets'];
  private readonly log: Logger;
  private readonly serial: SerialTurns;
  private readonly slots: DeliverySlots;
  private readonly holds: HoldNotices;
  private readonly now: () => number;
  private readonly isRunning: () => boolean;
  private readonly poke: () => void;
  private readonly retryWait: DeliveriesDeps['retryWait'];
  private readonly record: DeliveriesDeps['record'];
  private readonly opts: DeliveriesDeps['opts'];

  constructor(deps: DeliveriesDeps) {
    ({ store: this.store, targets: this.targets, log: this.log, serial: this.serial, slots: this.slots, holds: this.holds, clock: this.now, running: this.isRunning, poke: this.poke, retryWait: this.retryWait, record: this.record, opts: this.opts } = deps);
  }

  /** Deliveries sent and not yet recorded. */
  get count(): number {
    return this.inFlight;
  }

  /** Resolves once no delivery is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
  }

  /** stop() lets go of the deliveries still in flight: their outcomes are not recorded (the store may be closed). */
  abandon(): void {
    this.abandoned = true;
  }

  /**
   * `sharedTurn`: the serial target's turn across relays is held for this delivery (released with it).
   * `delivery`: the delivery's name in the queue, where its outcome is recorded (the target's name on SQLite).
   */
  async deliver(item: ScanItem, targetName: string, sharedTurn = false, delivery = targetName): Promise<void> {
    this.inFlight++;
    const started = this.now();
    const target = this.targets.get(targetName);
    const serial = target?.serial === true;
    if (serial) this.serial.take(targetName);
    else this.slots.take(targetName);
    // A serial target's turn passes on when its after-steps end (runAfter releases it then).
    let releaseLater = false;
    const attempt = async (): Promise<DeliveryResult> => {
      try {
        return target ? await target.deliver(item) : { outcome: 'failed', error: `unknown target ${targetName}` };
      } catch (err) {
        return { outcome: 'retry', error: `unexpected error: ${(err as Error).message}` };
      }
    };
    let result = await attempt();
    // The delivery stays in flight and the turn stays taken while it waits; on stop it is recorded as a retry.
    while (serial && result.outcome === 'retry' && result.holdTurn && this.isRunning()) {
      const wait = this.retryWait(item, result);
      if (result.fileChecks === undefined) this.holds.unreachable(targetName, `${targetName} does not answer: ${result.error}`, this.now());
      this.log.warn({ scan: item.id, target: targetName, folder: item.folder, error: result.error, retryInMs: wait }, 'scan not delivered yet; it keeps its turn and is tried again before any other scan');
      try {
        await sleep(wait, undefined, { signal: this.serial.signal });
      } catch {
        break;
      }
      result = await attempt();
    }
    const ms = this.now() - started;
    try {
      // Let go by stop(): the store may be closed; the delivery is still `sending` there and is sent again at start.
      if (this.abandoned) return;
      if (serial && result.outcome === 'retry' && result.busy && this.isRunning()) {
        // The server is busy with a scan that is not this relay's: the turn is held, not the scan (plex_autoscan's
        // PriorityLock, threads.py:13-41). The scan goes back to its place; after the wait, the first in line goes.
        await this.store.putBack(item.id, delivery, result.error);
        this.log.debug({ scan: item.id, target: targetName, error: result.error, retryInMs: this.retryWait(item, result) }, 'server busy; the scan keeps its place in line and the turn stays taken');
        this.serial.holdFor(targetName, sharedTurn, this.retryWait(item, result));
        releaseLater = true;
      } else {
        releaseLater = await this.record(item, targetName, result, serial, sharedTurn, delivery);
      }
      this.opts.onDelivery?.({ target: targetName, item, result, ms });
    } catch (err) {
      this.outcomeNotRecorded(err, item, targetName);
    } finally {
      if (serial && !releaseLater && !this.abandoned) await this.serial.release(targetName, sharedTurn);
      if (!serial) this.slots.give(targetName);
      this.inFlight--;
      if (this.inFlight === 0) this.idleWaiters.splice(0).forEach((r) => r());
      this.poke();
    }
  }

  /** An outcome the store refused to record: a full disk is told once a minute (diskFull), anything else logged. */
  private outcomeNotRecorded(err: unknown, item: ScanItem, targetName: string): void {
    if (isDiskFull(err) && this.opts.diskFull) this.opts.diskFull.failed(`the outcome of scan ${item.id} for ${targetName} (it is sent again)`);
    else this.log.error({ err, scan: item.id, target: targetName }, 'could not record delivery outcome');
  }

  /**
   * A batch-capable target's claimed scans in one call, in one of the shared slots. Each outcome is recorded on
   * its own (its own row, retries and history), and they share a commit (CompletionBatch).
   */
  async deliverBatch(claimed: readonly Claimed[], targetName: string): Promise<void> {
    this.inFlight++;
    this.slots.take(targetName);
    const started = this.now();
    const target = this.targets.get(targetName)!;
    let results: DeliveryResult[];
    try {
      results = await target.deliverMany!(claimed.map((c) => c.item));
    } catch (err) {
      results = claimed.map(() => ({ outcome: 'retry', error: `unexpected error: ${(err as Error).message}` }));
    }
    const ms = this.now() - started;
    try {
      if (this.abandoned) return;
      await Promise.all(
        claimed.map(async ({ item, target: delivery }, i) => {
          const result: DeliveryResult = results[i] ?? { outcome: 'retry', error: `${targetName} gave no answer for this scan` };
          try {
            await this.record(item, targetName, result, false, false, delivery);
            this.opts.onDelivery?.({ target: targetName, item, result, ms });
          } catch (err) {
            this.outcomeNotRecorded(err, item, targetName);
          }
        }),
      );
    } finally {
      this.slots.give(targetName);
      this.inFlight--;
      if (this.inFlight === 0) this.idleWaiters.splice(0).forEach((r) => r());
      this.poke();
    }
  }
}
