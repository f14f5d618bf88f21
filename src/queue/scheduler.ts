import type { DeliveryResult, ScanItem, Target } from '../core/scan.ts';
import type { Logger } from '../log.ts';
import { backoffMs } from './coalesce.ts';
import type { QueueStore } from './store.ts';

export interface SchedulerOptions {
  /** Deliveries in flight at once, across targets. */
  concurrency?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Finished scans kept as history. */
  historyLimit?: number;
  /** Called after each delivery, for metrics. */
  onDelivery?: (event: DeliveryEvent) => void;
}

export interface DeliveryEvent {
  target: string;
  item: ScanItem;
  result: DeliveryResult;
  ms: number;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One timer for the whole queue (no thread or sleep per item): it wakes at the next due time, moves
 * due scans to their targets and retries failed deliveries with backoff. Targets never block each other.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;
  private inFlight = 0;
  private running = false;
  private ticking = false;
  private finishedSincePrune = 0;
  private readonly idleWaiters: Array<() => void> = [];
  /** After-delivery steps still running; aborted and awaited on stop. */
  private readonly afterSteps = new Set<Promise<void>>();
  private readonly afterAbort = new AbortController();
  private readonly targets: Map<string, Target>;
  private readonly opts: Required<Omit<SchedulerOptions, 'onDelivery'>> & Pick<SchedulerOptions, 'onDelivery'>;

  constructor(
    private readonly store: QueueStore,
    targets: readonly Target[],
    private readonly log: Logger,
    opts: SchedulerOptions = {},
  ) {
    this.targets = new Map(targets.map((t) => [t.name, t]));
    this.opts = {
      concurrency: opts.concurrency ?? 8,
      retryBaseMs: opts.retryBaseMs ?? 1000,
      retryMaxMs: opts.retryMaxMs ?? 5 * 60_000,
      historyLimit: opts.historyLimit ?? 10_000,
      onDelivery: opts.onDelivery,
    };
  }

  get targetNames(): string[] {
    return [...this.targets.keys()];
  }

  start(): void {
    this.running = true;
    const resent = this.store.recoverInFlight();
    if (resent) this.log.info({ deliveries: resent }, 'resending deliveries that were in flight when scanrelay stopped');
    const failed = this.store.failUnknownTargets(this.targetNames);
    if (failed) this.log.warn({ deliveries: failed }, 'deliveries to targets no longer configured were marked failed');
    const open = this.store.countOpen();
    if (open) this.log.info({ scans: open }, 'resuming queued scans');
    this.poke();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.inFlight > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
    this.afterAbort.abort();
    await Promise.allSettled([...this.afterSteps]);
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

  private schedule(at: number): void {
    if (!this.running) return;
    if (this.timer && at >= this.wakeAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.wakeAt = at;
    const delay = Math.min(Math.max(0, at - Date.now()), MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wakeAt = Infinity;
      this.tick();
    }, delay);
    this.timer.unref?.();
  }

  private tick(): void {
    if (!this.running || this.ticking) return;
    this.ticking = true;
    try {
      const now = Date.now();
      const activated = this.store.activateDue(this.targetNames, now);
      if (activated) this.log.debug({ scans: activated }, 'scans due');
      const claimed = this.store.claimDeliveries(this.opts.concurrency - this.inFlight, now);
      for (const { item, target } of claimed) void this.deliver(item, target);
      const next = this.store.nextWakeAt();
      // While deliveries run, the next claim happens when one finishes.
      if (next !== undefined && this.inFlight < this.opts.concurrency) this.schedule(next);
    } catch (err) {
      this.log.error({ err }, 'queue scheduler error; retrying in 5 s');
      this.schedule(Date.now() + 5000);
    } finally {
      this.ticking = false;
    }
  }

  private async deliver(item: ScanItem, targetName: string): Promise<void> {
    this.inFlight++;
    const started = Date.now();
    const target = this.targets.get(targetName);
    let result: DeliveryResult;
    try {
      result = target ? await target.deliver(item) : { outcome: 'failed', error: `unknown target ${targetName}` };
    } catch (err) {
      result = { outcome: 'retry', error: `unexpected error: ${(err as Error).message}` };
    }
    const ms = Date.now() - started;
    try {
      this.record(item, targetName, result);
      this.opts.onDelivery?.({ target: targetName, item, result, ms });
    } catch (err) {
      this.log.error({ err, scan: item.id, target: targetName }, 'could not record delivery outcome');
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) this.idleWaiters.splice(0).forEach((r) => r());
      this.poke();
    }
  }

  private record(item: ScanItem, target: string, result: DeliveryResult): void {
    const ctx = { scan: item.id, target, folder: item.folder, source: item.source, attempt: item.attempt, priority: item.priority };
    if (result.outcome === 'done') {
      const { scanFinished } = this.store.completeDelivery(item.id, target, { status: 'done', detail: result.detail });
      this.log.info({ ...ctx, detail: result.detail, waitedMs: Date.now() - item.firstAt }, 'scan delivered');
      if (scanFinished) this.afterFinish();
      if (result.after) this.runAfter(item, target, result.after, result.detail);
    } else if (result.outcome === 'failed') {
      const { scanFinished } = this.store.completeDelivery(item.id, target, { status: 'failed', error: result.error });
      this.log.error({ ...ctx, error: result.error }, 'scan failed and will not be retried');
      if (scanFinished) this.afterFinish();
    } else {
      const wait = result.retryAfterMs ?? (result.slow ? this.opts.retryMaxMs : backoffMs(item.attempt, this.opts.retryBaseMs, this.opts.retryMaxMs));
      this.store.retryDelivery(item.id, target, result.error, Date.now() + wait, result.countsAsAttempt ?? true, result.fileChecks);
      this.log.warn({ ...ctx, error: result.error, retryInMs: wait }, 'scan not delivered yet; will retry');
    }
  }

  /**
   * Runs a target's after-delivery steps outside the delivery slots: the delivery is already recorded
   * (and other deliveries go on); what the steps find replaces the delivery's detail.
   */
  private runAfter(item: ScanItem, target: string, after: NonNullable<Extract<DeliveryResult, { outcome: 'done' }>['after']>, detail: string | undefined): void {
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
        this.store.setDeliveryDetail(item.id, target, full);
      } catch (err) {
        this.log.error({ scan: item.id, target, err }, 'could not record the after-scan outcome');
      }
      this.log.info({ scan: item.id, target, folder: item.folder, detail: full }, 'after-scan steps finished');
    })();
    this.afterSteps.add(step);
    void step.finally(() => this.afterSteps.delete(step));
  }

  private afterFinish(): void {
    if (++this.finishedSincePrune < 500) return;
    this.finishedSincePrune = 0;
    const pruned = this.store.pruneHistory(this.opts.historyLimit);
    if (pruned) this.log.debug({ pruned }, 'old history pruned');
  }
}
