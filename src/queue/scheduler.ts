import { setTimeout as sleep } from 'node:timers/promises';
import type { DeliveryResult, ScanItem, Target } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import { backoffMs } from './coalesce.ts';
import type { CompleteResult, Completion, QueueBackend } from './backend.ts';
import { isDiskFull } from '../db/disk-full.ts';
import { deliveryEvent, RETRYING_TOLD } from './events.ts';
import { HoldNotices } from './hold-notices.ts';
import type { FullDisk } from '../paths/disk-space.ts';
import { SerialTurns } from './serial-turns.ts';
import { DeliverySlots } from './delivery-slots.ts';
import { Deliveries } from './deliveries.ts';
import { CompletionBatch } from './complete-batch.ts';
import { AfterSteps } from './after-steps.ts';
import type { FileGate } from './file-gate.ts';

export interface SchedulerOptions {
  /**
   * Deliveries in flight at once to each target that is not serial (Jellyfin, Emby, Tdarr, a command): its own slots,
   * so a target that hangs fills only its own. A serial target (Plex) has one.
   */
  concurrency?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Finished scans kept as history. */
  historyLimit?: number;
  /** Called after each delivery, for metrics. */
  onDelivery?: (event: DeliveryEvent) => void;
  /** True while every delivery must wait (SERVER_ANCHOR_FILES: a mount is down); asked before claiming work. */
  held?: () => boolean;
  /** Disks below SERVER_DISK_MIN_FREE, asked before claiming work: told once each, and those that hold stop deliveries. */
  fullDisks?: () => readonly FullDisk[];
  /** While held, the next look; the guard also pokes the scheduler when it releases. */
  heldRecheckMs?: number;
  /** Told about writes refused because the disk is full (it logs them once a minute, not once each). */
  diskFull?: { failed(what: string): void };
  /** A target that does not answer for this long is told as `waiting` (NOTIFICATIONS), and `recovered` after. */
  waitingAfterMs?: number;
  /** While a serial target's server still runs a scan of a relay that died holding its turn: the next look. */
  settleRecheckMs?: number;
  /** This relay's clock (a test seam: a relay whose clock is off). */
  clock?: () => number;
  /** Whether a target's `scanned` events from a trigger carry the items the scan added or updated (a destination wants them). */
  scannedItems?: (target: string, trigger: string) => boolean;
  /** The longest a scan's `scanned` event waits for its items (a server that does not answer the lookup). */
  itemLookupMaxMs?: number;
  /**
   * How long stop() waits for deliveries in flight and after-steps (Plex confirming a scan) before it lets them go:
   * those still in flight are sent again at the next start, and the programs of command targets are killed.
   */
  stopGraceMs?: number;
  /** SERVER_WAIT_FOR_FILES: due scans are looked for on disk before activation, which sends only those whose files are there. */
  fileGate?: FileGate;
}

/** stop()'s wait for what it let go (a killed command recording its retry), past the grace period. */
const STOP_SETTLE_MS = 1000;

import type { DeliveryEvent } from './deliveries.ts';
export type { DeliveryEvent };

const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * Scans a batch-capable target (Target.deliverMany) takes in one call and one delivery slot, when more are due
 * than there are free slots (a backlog); fewer go one request each, side by side, as before: none of them waits.
 */
export const BATCH_SCANS = 50;

/** What a removal scan is, in the log and on the dashboard: "library root scan for 2 removed items". */
export function removalScanLabel(requests: number): string {
  return `library root scan for ${requests} removed items`;
}

/**
 * One timer for the whole queue (no thread or sleep per item): it wakes at the next due time, moves
 * due scans to their targets and retries failed deliveries with backoff. Targets never block each other:
 * a serial target (Plex) takes one delivery at a time, held until its after-steps end; each other target has
 * its own `concurrency` slots, and stop() lets go of whatever still hangs after its grace period.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;
  /** Each non-serial target's own `concurrency` delivery slots. */
  private readonly slots: DeliverySlots;
  /** Claimed deliveries being sent, each in its target's slot or turn. */
  private readonly deliveries: Deliveries;
  /** Serial targets' one-at-a-time turns: one scan at a time per server, whatever its names. */
  private readonly serial: SerialTurns;
  private running = false;
  private ticking = false;
  /** A wake-up came while a tick was running: tick again when it ends. */
  private tickAgain = false;
  private finishedSincePrune = 0;
  /** After-delivery steps (Plex's completion watch) and the scans they have not told yet; aborted and awaited on stop. */
  private readonly after: AfterSteps;
  private readonly targets: Map<string, Target>;
  /** Holds told to the outbox once when they begin and once when they end; a target that does not answer, logged once a minute. */
  private readonly holds: HoldNotices;
  /** Outcomes grouped into shared commits, where the store's commits block the event loop (SQLite). */
  private readonly completions: CompletionBatch | undefined;
  private readonly opts: Required<Omit<SchedulerOptions, 'onDelivery' | 'held' | 'diskFull' | 'waitingAfterMs' | 'fullDisks' | 'fileGate'>> & Pick<SchedulerOptions, 'onDelivery' | 'held' | 'diskFull' | 'fullDisks' | 'fileGate'>;
  private readonly stopped = new AbortController();

  constructor(
    private readonly store: QueueBackend,
    targets: readonly Target[],
    private readonly log: Logger,
    opts: SchedulerOptions = {},
  ) {
    this.targets = new Map(targets.map((t) => [t.name, t]));
    this.holds = new HoldNotices(store, log, () => this.now(), () => this.running, opts.waitingAfterMs ?? 60_000);
    this.serial = new SerialTurns(store, this.targets, log, opts.clock ?? Date.now, {
      poke: () => this.poke(),
      track: (wait) => this.after.track(wait),
      tellUntoldOf: (target, unknown) => this.after.tellUntoldOf(target, unknown),
    });
    store.shared?.onWake((at) => (at === undefined ? this.poke() : this.wakeBy(at)));
    if (store.completeDeliveries) this.completions = new CompletionBatch((list) => store.completeDeliveries!(list));
    this.opts = {
      concurrency: opts.concurrency ?? 8,
      retryBaseMs: opts.retryBaseMs ?? 1000,
      retryMaxMs: opts.retryMaxMs ?? 5 * 60_000,
      historyLimit: opts.historyLimit ?? 10_000,
      onDelivery: opts.onDelivery,
      held: opts.held,
      fullDisks: opts.fullDisks,
      fileGate: opts.fileGate,
      heldRecheckMs: opts.heldRecheckMs ?? 15_000,
      diskFull: opts.diskFull,
      settleRecheckMs: opts.settleRecheckMs ?? 1000,
      clock: opts.clock ?? Date.now,
      scannedItems: opts.scannedItems ?? (() => false),
      itemLookupMaxMs: opts.itemLookupMaxMs ?? 30_000,
      stopGraceMs: opts.stopGraceMs ?? 5000,
    };
    this.slots = new DeliverySlots(this.opts.concurrency);
    this.deliveries = new Deliveries({
      store,
      targets: this.targets,
      log,
      serial: this.serial,
      slots: this.slots,
      holds: this.holds,
      clock: () => this.now(),
      running: () => this.running,
      poke: () => this.poke(),
      retryWait: (item, result) => this.retryWait(item, result),
      record: (item, target, result, serial, sharedTurn, delivery) => this.record(item, target, result, serial, sharedTurn, delivery),
      opts: this.opts,
    });
    this.after = new AfterSteps(store, this.targets, log, {
      clock: () => this.now(),
      scannedItems: this.opts.scannedItems,
      itemLookupMaxMs: this.opts.itemLookupMaxMs,
      releaseTurn: async (target, sharedTurn) => {
        await this.serial.release(target, sharedTurn);
        this.poke();
      },
    });
  }

  private now(): number {
    return this.opts.clock();
  }

  get targetNames(): string[] {
    return [...this.targets.keys()];
  }

  async start(): Promise<void> {
    this.running = true;
    // A shared queue learns which servers this relay reaches before it hands out or claims anything.
    await this.store.shared?.join([...this.targets.values()]);
    // Serial targets' servers are asked who they are now; each sends once it answered (two names, one turn).
    this.serial.ask(this.targets.values());
    const resent = await this.store.recoverInFlight();
    if (resent) this.log.info({ deliveries: resent }, 'resending deliveries that were in flight when scanrelay stopped');
    const retried = await this.store.retryWaitingNow(this.targetNames);
    if (retried) this.log.info({ deliveries: retried }, 'deliveries waiting to retry after an error are due now: the config was read again at start, and it may fix what failed');
    const failed = await this.store.failUnknownTargets(this.targetNames);
    if (failed) this.log.warn({ deliveries: failed }, 'deliveries to targets no longer configured were marked failed');
    await this.after.findUntold();
    const open = await this.store.countOpen();
    if (open) this.log.info({ scans: open }, 'resuming queued scans');
    this.poke();
  }

  /**
   * Ends within its grace period (stopGraceMs, then STOP_SETTLE_MS at most) whatever hangs: deliveries in flight and
   * after-steps get the grace period; then the targets are closed (a command's program is killed with its process
   * group), after-steps are aborted, and deliveries still in flight are let go: they are sent again at the next start.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.serial.stop();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.holds.stop();
    const deadline = Date.now() + this.opts.stopGraceMs;
    const until = (ms: number) => sleep(Math.max(0, ms), undefined, { signal: this.stopped.signal }).catch(() => undefined);
    const idle = () => this.deliveries.idle();
    await Promise.race([idle(), until(deadline - Date.now())]);
    // After-steps (Plex confirming a scan) get what is left of the grace period: `scanned` is told only once confirmed.
    await Promise.race([this.afterStepsSettled(), until(deadline - Date.now())]);
    this.after.abort();
    for (const t of this.targets.values()) t.close?.();
    await Promise.race([Promise.all([idle(), this.after.running()]), until(STOP_SETTLE_MS)]);
    if (this.deliveries.count > 0) {
      this.deliveries.abandon();
      this.log.warn({ deliveries: this.deliveries.count }, 'stopping with deliveries still in flight: they are sent again at the next start');
    }
    this.stopped.abort();
  }

  /** Resolves when every after-delivery step started so far has ended (tests, orderly shutdown). */
  async afterStepsSettled(): Promise<void> {
    await this.after.settled();
  }

  /** Something changed (a new request, a retry request): re-plan the next wake. */
  poke(): void {
    if (!this.running) return;
    this.schedule(this.now());
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
    const delay = Math.min(Math.max(0, at - this.now()), MAX_TIMER_MS);
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
      let now = this.now();
      const mountHeld = this.opts.held?.() ?? false;
      if (mountHeld || this.opts.held) this.holds.mount(mountHeld, now);
      const disks = this.opts.fullDisks?.() ?? [];
      this.holds.disks(disks, now);
      if (mountHeld || disks.some((d) => d.holds)) {
        // Nothing becomes due or is sent while held; queued scans stay as they are.
        this.log.debug('deliveries held');
        this.schedule(now + this.opts.heldRecheckMs);
        return;
      }
      const files = await this.opts.fileGate?.pass(this.store, now);
      const activated = await this.store.activateDue(this.targetNames, now, undefined, files);
      if (activated) this.log.debug({ scans: activated }, 'scans due');
      // Serial targets whose turn another relay holds: its release wakes this one (NOTIFY, or the poll).
      const elsewhere = new Set<string>();
      for (const target of this.targets.values()) {
        const slots = this.freeSlots(target);
        if (slots <= 0) continue;
        // A serial target's turn is shared by every relay of the queue: taken before claiming, so that
        // the media server never gets two scans at once, whichever relays send them.
        const turn = target.serial && shared !== undefined;
        const took = turn ? await shared.takeTurn(target.name) : true;
        if (!took) {
          elsewhere.add(target.name);
          continue;
        }
        if (took === 'taken over' || this.serial.isSettling(target) || this.after.hasUntoldLeft(target.name)) {
          // The relay that held the turn died: its scan may still run on the server. The turn is kept (no
          // other relay sends meanwhile) and nothing is sent until the server says it is done.
          if (await this.serial.stillScanning(target)) {
            elsewhere.add(target.name);
            this.schedule(this.now() + this.opts.settleRecheckMs);
            continue;
          }
          now = this.now();
        }
        let claimed: Awaited<ReturnType<QueueBackend['claimDeliveries']>> = [];
        try {
          claimed = await this.store.claimDeliveries(this.batches(target) ? Math.max(slots, BATCH_SCANS) : slots, now, target.name);
        } finally {
          // A look that found nothing wakes nobody: the other relays look when they were told something changed.
          if (turn && claimed.length === 0) await shared.releaseTurn(target.name, false);
        }
        // `delivery`: the name the queue gave this delivery (on a shared queue, the server's: plex@<id>).
        if (claimed.length > slots) void this.deliveries.deliverBatch(claimed, target.name);
        else for (const { item, target: delivery } of claimed) void this.deliveries.deliver(item, target.name, turn, delivery);
      }
      // Busy targets are claimed again when a delivery (or a serial target's after-steps) ends.
      const free = [...this.targets.values()].filter((t) => this.freeSlots(t) > 0 && !elsewhere.has(t.name)).map((t) => t.name);
      const next = await this.store.nextWakeAt(free);
      // Shared: another relay's change is announced, and looked for anyway every pollMs.
      const poll = shared ? this.now() + shared.pollMs : undefined;
      const at = Math.min(next ?? Infinity, poll ?? Infinity);
      if (at !== Infinity) this.schedule(at);
    } catch (err) {
      if (isDiskFull(err) && this.opts.diskFull) this.opts.diskFull.failed('the queue scheduler');
      else this.log.error({ err }, 'queue scheduler error; retrying in 5 s');
      this.schedule(this.now() + 5000);
    } finally {
      this.ticking = false;
      if (this.tickAgain) {
        this.tickAgain = false;
        this.poke();
      }
    }
  }

  private freeSlots(target: Target): number {
    if (target.serial) return this.serial.free(target) ? 1 : 0;
    return this.slots.free(target.name);
  }

  /** A target that takes several scans per call: they share one slot (a serial target's turn is one scan). */
  private batches(target: Target): boolean {
    return target.deliverMany !== undefined && !target.serial;
  }

  /** Records the outcome; true when after-steps were started that hold a serial target's turn. */
  private async record(item: ScanItem, target: string, result: DeliveryResult, serial = false, sharedTurn = false, delivery = target): Promise<boolean> {
    const what = item.removal ? removalScanLabel(item.requests) : undefined;
    const ctx = { scan: item.id, target, folder: item.folder, source: item.source, attempt: item.attempt, priority: item.priority, ...(what ? { what } : {}), ...(item.action ? { action: item.action } : {}) };
    const relay = this.store.shared ? { relay: this.store.shared.relayId } : {};
    const now = this.now();
    if (result.outcome !== 'retry') await this.holds.answered(target, now);
    if (result.outcome === 'done') {
      // A scan with after-steps (Plex's completion watch) is told to people once they end (runAfter), not when it
      // was sent; until then it is kept as untold, so that a crash or a stop meanwhile still tells it at the next
      // start. The event written now only marks the delivery's end (afterSteps 'running'), so that the scan's last
      // delivery is known (the store stamps it: events.ts).
      const done = deliveryEvent(item, target, { status: 'done', ...(result.detail ? { detail: result.detail } : {}) }, now);
      if (result.after) await this.after.rememberUntold(item, target, delivery, result.detail, now);
      const event = result.after ? { ...done, afterSteps: 'running' as const } : done;
      const { scanFinished } = await this.complete({ scanId: item.id, target: delivery, result: { status: 'done', detail: result.detail, event } }, serial);
      this.log.info({ ...ctx, ...relay, detail: result.detail, waitedMs: this.now() - item.firstAt }, what ? `scan delivered: ${what}` : 'scan delivered');
      if (scanFinished) await this.afterFinish();
      if (result.after) {
        this.after.runAfter(item, target, result.after, result.detail, serial, sharedTurn, delivery);
        return serial;
      }
    } else if (result.outcome === 'failed') {
      const event = deliveryEvent(item, target, { status: 'failed', error: result.error }, now);
      const { scanFinished, requeued } = await this.complete({ scanId: item.id, target: delivery, result: { status: 'failed', error: result.error, event } }, serial);
      this.log.error({ ...ctx, error: result.error }, 'scan failed and will not be retried');
      if (requeued) this.log.warn({ scan: item.id, folder: item.folder, requeued }, 'the failed scan had taken in requests for other folders; each is queued again on its own');
      if (scanFinished) await this.afterFinish();
    } else {
      const wait = this.retryWait(item, result);
      // A retry that counts file checks waits for files, not for the server.
      const unreachable = result.fileChecks === undefined;
      if (unreachable) this.holds.unreachable(target, `${target} does not answer: ${result.error}`, now);
      // A try that failed (not a wait for files, not a busy server) is autopulse's `retrying` (runner.rs:200-219).
      const told = (result.countsAsAttempt ?? true) && unreachable && item.attempt <= RETRYING_TOLD;
      const event = told ? deliveryEvent(item, target, { status: 'retrying', error: result.error }, now) : undefined;
      await this.store.retryDelivery(item.id, delivery, result.error, this.now() + wait, result.countsAsAttempt ?? true, result.fileChecks, event);
      // A target that does not answer: one line per target per minute, with counts; the other attempts at debug.
      const summary = unreachable ? this.holds.failedAttempt(target, item.id, now) : undefined;
      if (!unreachable || summary?.failedAttempts === 1) this.log.warn({ ...ctx, error: result.error, retryInMs: wait }, 'scan not delivered yet; will retry');
      else if (summary) this.log.warn({ ...ctx, error: result.error, retryInMs: wait, ...summary }, `${target} still does not answer: ${summary.failedAttempts} attempts for ${summary.scans} scans failed since the last line; each is retried`);
      else this.log.debug({ ...ctx, error: result.error, retryInMs: wait }, 'scan not delivered yet; will retry');
    }
    return false;
  }

  /**
   * Records an outcome. The other targets' outcomes share commits; a serial target's commits at once (its turn
   * waits on it) and takes theirs along, so Plex's deliveries never wait for another target's fsync.
   */
  private async complete(c: Completion, serial: boolean): Promise<CompleteResult> {
    if (this.completions) return this.completions.add(c, serial);
    return this.store.completeDelivery(c.scanId, c.target, c.result);
  }

  private retryWait(item: ScanItem, result: Extract<DeliveryResult, { outcome: 'retry' }>): number {
    return result.retryAfterMs ?? (result.slow ? this.opts.retryMaxMs : backoffMs(item.attempt, this.opts.retryBaseMs, this.opts.retryMaxMs));
  }

  private async afterFinish(): Promise<void> {
    if (++this.finishedSincePrune < 500) return;
    this.finishedSincePrune = 0;
    const pruned = await this.store.pruneHistory(this.opts.historyLimit);
    if (pruned) this.log.debug({ pruned }, 'old history pruned');
  }
}
