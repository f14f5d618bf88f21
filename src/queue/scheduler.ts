import { setTimeout as sleep } from 'node:timers/promises';
import type { DeliveryResult, ScanItem, Target } from '../core/scan.ts';
import type { Logger } from '../log.ts';
import { backoffMs } from './coalesce.ts';
import type { QueueBackend } from './backend.ts';
import { isDiskFull } from '../db/disk-full.ts';

export interface SchedulerOptions {
  /** Deliveries in flight at once, across the targets that are not serial (Jellyfin, Emby). A serial target (Plex) has one. */
  concurrency?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Finished scans kept as history. */
  historyLimit?: number;
  /** Called after each delivery, for metrics. */
  onDelivery?: (event: DeliveryEvent) => void;
  /** True while every delivery must wait (SERVER_ANCHOR_FILES: a mount is down); asked before claiming work. */
  held?: () => boolean;
  /** While held, the next look; the guard also pokes the scheduler when it releases. */
  heldRecheckMs?: number;
  /** Told about writes refused because the disk is full (it logs them once a minute, not once each). */
  diskFull?: { failed(what: string): void };
}

export interface DeliveryEvent {
  target: string;
  item: ScanItem;
  result: DeliveryResult;
  ms: number;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** What a removal scan is, in the log and on the dashboard: "library root scan for 2 removed items". */
export function removalScanLabel(requests: number): string {
  return `library root scan for ${requests} removed items`;
}

/**
 * One timer for the whole queue (no thread or sleep per item): it wakes at the next due time, moves
 * due scans to their targets and retries failed deliveries with backoff. Targets never block each other.
 * A serial target (Plex) takes one delivery at a time, held until its after-steps end; the others share
 * `concurrency` slots.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;
  private inFlight = 0;
  /** Deliveries to non-serial targets in flight (they share `concurrency`). */
  private poolInFlight = 0;
  /** Serial targets whose turn is taken (a delivery, or its after-steps, still running). */
  private readonly serialBusy = new Set<string>();
  private running = false;
  private ticking = false;
  /** A wake-up came while a tick was running: tick again when it ends. */
  private tickAgain = false;
  private finishedSincePrune = 0;
  private readonly idleWaiters: Array<() => void> = [];
  /** After-delivery steps still running; aborted and awaited on stop. */
  private readonly afterSteps = new Set<Promise<void>>();
  private readonly afterAbort = new AbortController();
  /** Ends the waits of deliveries that hold a serial target's turn (holdTurn), on stop. */
  private readonly holdAbort = new AbortController();
  private readonly targets: Map<string, Target>;
  private readonly opts: Required<Omit<SchedulerOptions, 'onDelivery' | 'held' | 'diskFull'>> & Pick<SchedulerOptions, 'onDelivery' | 'held' | 'diskFull'>;

  constructor(
    private readonly store: QueueBackend,
    targets: readonly Target[],
    private readonly log: Logger,
    opts: SchedulerOptions = {},
  ) {
    this.targets = new Map(targets.map((t) => [t.name, t]));
    store.shared?.onWake((at) => (at === undefined ? this.poke() : this.wakeBy(at)));
    this.opts = {
      concurrency: opts.concurrency ?? 8,
      retryBaseMs: opts.retryBaseMs ?? 1000,
      retryMaxMs: opts.retryMaxMs ?? 5 * 60_000,
      historyLimit: opts.historyLimit ?? 10_000,
      onDelivery: opts.onDelivery,
      held: opts.held,
      heldRecheckMs: opts.heldRecheckMs ?? 15_000,
      diskFull: opts.diskFull,
    };
  }

  get targetNames(): string[] {
    return [...this.targets.keys()];
  }

  async start(): Promise<void> {
    this.running = true;
    // A shared queue learns which servers this relay reaches before it hands out or claims anything.
    await this.store.shared?.join([...this.targets.values()]);
    const resent = await this.store.recoverInFlight();
    if (resent) this.log.info({ deliveries: resent }, 'resending deliveries that were in flight when scanrelay stopped');
    const retried = await this.store.retryWaitingNow(this.targetNames);
    if (retried) this.log.info({ deliveries: retried }, 'deliveries waiting to retry after an error are due now: the config was read again at start, and it may fix what failed');
    const failed = await this.store.failUnknownTargets(this.targetNames);
    if (failed) this.log.warn({ deliveries: failed }, 'deliveries to targets no longer configured were marked failed');
    const open = await this.store.countOpen();
    if (open) this.log.info({ scans: open }, 'resuming queued scans');
    this.poke();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.holdAbort.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.inFlight > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
    this.afterAbort.abort();
    await Promise.allSettled([...this.afterSteps]);
    for (const t of this.targets.values()) t.close?.();
  }

  /** Resolves when every after-delivery step started so far has ended (tests, orderly shutdown). */
  async afterStepsSettled(): Promise<void> {
    while (this.afterSteps.size) await Promise.allSettled([...this.afterSteps]);
  }

  /** Something changed (a new request, a retry request): re-plan the next wake. */
  poke(): void {
    if (!this.running) return;
    this.schedule(Date.now());
  }

  /**
   * Something becomes due at `at` (a committed request): the timer moves earlier if it must, and the queue is
   * not looked at before then (a look costs statements on PostgreSQL; a request is rarely due at once).
   */
  wakeBy(at: number): void {
    this.schedule(at);
  }

  private schedule(at: number): void {
    if (!this.running) return;
    if (this.timer && at >= this.wakeAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.wakeAt = at;
    const delay = Math.min(Math.max(0, at - Date.now()), MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wakeAt = Infinity;
      void this.tick();
    }, delay);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    if (!this.running) return;
    if (this.ticking) {
      this.tickAgain = true;
      return;
    }
    this.ticking = true;
    const shared = this.store.shared;
    try {
      const now = Date.now();
      if (this.opts.held?.()) {
        // Nothing becomes due or is sent while held; queued scans stay as they are.
        this.log.debug('deliveries held');
        this.schedule(now + this.opts.heldRecheckMs);
        return;
      }
      const activated = await this.store.activateDue(this.targetNames, now);
      if (activated) this.log.debug({ scans: activated }, 'scans due');
      // Serial targets whose turn another relay holds: its release wakes this one (NOTIFY, or the poll).
      const elsewhere = new Set<string>();
      for (const target of this.targets.values()) {
        const slots = this.freeSlots(target);
        if (slots <= 0) continue;
        // A serial target's turn is shared by every relay of the queue: taken before claiming, so that
        // the media server never gets two scans at once, whichever relays send them.
        const turn = target.serial && shared !== undefined;
        if (turn && !(await shared.takeTurn(target.name))) {
          elsewhere.add(target.name);
          continue;
        }
        let claimed: Awaited<ReturnType<QueueBackend['claimDeliveries']>> = [];
        try {
          claimed = await this.store.claimDeliveries(slots, now, target.name);
        } finally {
          if (turn && claimed.length === 0) await shared.releaseTurn(target.name);
        }
        // `delivery`: the name the queue gave this delivery (on a shared queue, the server's: plex@<id>).
        for (const { item, target: delivery } of claimed) void this.deliver(item, target.name, turn, delivery);
      }
      // Busy targets are claimed again when a delivery (or a serial target's after-steps) ends.
      const free = [...this.targets.values()].filter((t) => this.freeSlots(t) > 0 && !elsewhere.has(t.name)).map((t) => t.name);
      const next = await this.store.nextWakeAt(free);
      // Shared: another relay's change is announced, and looked for anyway every pollMs.
      const poll = shared ? Date.now() + shared.pollMs : undefined;
      const at = Math.min(next ?? Infinity, poll ?? Infinity);
      if (at !== Infinity) this.schedule(at);
    } catch (err) {
      if (isDiskFull(err) && this.opts.diskFull) this.opts.diskFull.failed('the queue scheduler');
      else this.log.error({ err }, 'queue scheduler error; retrying in 5 s');
      this.schedule(Date.now() + 5000);
    } finally {
      this.ticking = false;
      if (this.tickAgain) {
        this.tickAgain = false;
        this.poke();
      }
    }
  }

  private freeSlots(target: Target): number {
    if (target.serial) return this.serialBusy.has(target.name) ? 0 : 1;
    return Math.max(0, this.opts.concurrency - this.poolInFlight);
  }

  /**
   * `sharedTurn`: the serial target's turn across relays is held for this delivery (released with it).
   * `delivery`: the delivery's name in the queue, where its outcome is recorded (the target's name on SQLite).
   */
  private async deliver(item: ScanItem, targetName: string, sharedTurn = false, delivery = targetName): Promise<void> {
    this.inFlight++;
    const started = Date.now();
    const target = this.targets.get(targetName);
    const serial = target?.serial === true;
    if (serial) this.serialBusy.add(targetName);
    else this.poolInFlight++;
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
    while (serial && result.outcome === 'retry' && result.holdTurn && this.running) {
      const wait = this.retryWait(item, result);
      this.log.warn({ scan: item.id, target: targetName, folder: item.folder, error: result.error, retryInMs: wait }, 'scan not delivered yet; it keeps its turn and is tried again before any other scan');
      try {
        await sleep(wait, undefined, { signal: this.holdAbort.signal });
      } catch {
        break;
      }
      result = await attempt();
    }
    const ms = Date.now() - started;
    try {
      releaseLater = await this.record(item, targetName, result, serial, sharedTurn, delivery);
      this.opts.onDelivery?.({ target: targetName, item, result, ms });
    } catch (err) {
      if (isDiskFull(err) && this.opts.diskFull) this.opts.diskFull.failed(`the outcome of scan ${item.id} for ${targetName} (it is sent again)`);
      else this.log.error({ err, scan: item.id, target: targetName }, 'could not record delivery outcome');
    } finally {
      if (serial && !releaseLater) await this.releaseSerial(targetName, sharedTurn);
      if (!serial) this.poolInFlight--;
      this.inFlight--;
      if (this.inFlight === 0) this.idleWaiters.splice(0).forEach((r) => r());
      this.poke();
    }
  }

  /** Frees a serial target's turn: this relay's, and the one shared with other relays when held. */
  private async releaseSerial(target: string, sharedTurn: boolean): Promise<void> {
    this.serialBusy.delete(target);
    if (sharedTurn) await this.store.shared?.releaseTurn(target);
  }

  /** Records the outcome; true when after-steps were started that hold a serial target's turn. */
  private async record(item: ScanItem, target: string, result: DeliveryResult, serial = false, sharedTurn = false, delivery = target): Promise<boolean> {
    const what = item.removal ? removalScanLabel(item.requests) : undefined;
    const ctx = { scan: item.id, target, folder: item.folder, source: item.source, attempt: item.attempt, priority: item.priority, ...(what ? { what } : {}) };
    const relay = this.store.shared ? { relay: this.store.shared.relayId } : {};
    if (result.outcome === 'done') {
      const { scanFinished } = await this.store.completeDelivery(item.id, delivery, { status: 'done', detail: result.detail });
      this.log.info({ ...ctx, ...relay, detail: result.detail, waitedMs: Date.now() - item.firstAt }, what ? `scan delivered: ${what}` : 'scan delivered');
      if (scanFinished) await this.afterFinish();
      if (result.after) {
        this.runAfter(item, target, result.after, result.detail, serial, sharedTurn, delivery);
        return serial;
      }
    } else if (result.outcome === 'failed') {
      const { scanFinished, requeued } = await this.store.completeDelivery(item.id, delivery, { status: 'failed', error: result.error });
      this.log.error({ ...ctx, error: result.error }, 'scan failed and will not be retried');
      if (requeued) this.log.warn({ scan: item.id, folder: item.folder, requeued }, 'the failed scan had taken in requests for other folders; each is queued again on its own');
      if (scanFinished) await this.afterFinish();
    } else {
      const wait = this.retryWait(item, result);
      await this.store.retryDelivery(item.id, delivery, result.error, Date.now() + wait, result.countsAsAttempt ?? true, result.fileChecks);
      this.log.warn({ ...ctx, error: result.error, retryInMs: wait }, 'scan not delivered yet; will retry');
    }
    return false;
  }

  private retryWait(item: ScanItem, result: Extract<DeliveryResult, { outcome: 'retry' }>): number {
    return result.retryAfterMs ?? (result.slow ? this.opts.retryMaxMs : backoffMs(item.attempt, this.opts.retryBaseMs, this.opts.retryMaxMs));
  }

  /**
   * Runs a target's after-delivery steps outside the delivery slots: the delivery is already recorded
   * (and other deliveries go on); what the steps find replaces the delivery's detail.
   */
  private runAfter(
    item: ScanItem,
    target: string,
    after: NonNullable<Extract<DeliveryResult, { outcome: 'done' }>['after']>,
    detail: string | undefined,
    holdsTurn = false,
    sharedTurn = false,
    delivery = target,
  ): void {
    const step = (async () => {
      let full: string;
      try {
        full = (await after(this.afterAbort.signal)) || detail || '';
      } catch (err) {
        const why = this.afterAbort.signal.aborted ? 'scanrelay stopped before the after-scan steps ended' : `after-scan steps failed: ${(err as Error).message}`;
        full = [detail, why].filter(Boolean).join('; ');
        if (!this.afterAbort.signal.aborted) this.log.error({ scan: item.id, target, err }, 'after-scan steps failed');
      }
      try {
        await this.store.setDeliveryDetail(item.id, delivery, full);
      } catch (err) {
        this.log.error({ scan: item.id, target, err }, 'could not record the after-scan outcome');
      }
      this.log.info({ scan: item.id, target, folder: item.folder, detail: full }, 'after-scan steps finished');
    })();
    this.afterSteps.add(step);
    void step.finally(async () => {
      this.afterSteps.delete(step);
      if (holdsTurn) {
        await this.releaseSerial(target, sharedTurn);
        this.poke();
      }
    });
  }

  private async afterFinish(): Promise<void> {
    if (++this.finishedSincePrune < 500) return;
    this.finishedSincePrune = 0;
    const pruned = await this.store.pruneHistory(this.opts.historyLimit);
    if (pruned) this.log.debug({ pruned }, 'old history pruned');
  }
}
