import { asOutcome, type AfterOutcome, type DeliveryResult, type ScanItem, type Target } from '../core/scan.ts';
import type { ScannedItem } from '../core/events.ts';
import type { Logger } from '../core/logger.ts';
import type { QueueBackend } from './backend.ts';
import { deliveryEvent } from './events.ts';
import { toldLate, UntoldScans, type Untold } from './untold.ts';

export interface AfterStepsOptions {
  /** This relay's clock. */
  clock: () => number;
  /** Whether a target's `scanned` events from a trigger carry the items the scan added or updated. */
  scannedItems: (target: string, trigger: string) => boolean;
  /** The longest a scan's `scanned` event waits for its items. */
  itemLookupMaxMs: number;
  /** Frees a serial target's turn (this relay's and the shared one) and looks for work again. */
  releaseTurn: (target: string, sharedTurn: boolean) => Promise<void>;
}

/**
 * A target's after-delivery steps (Plex's completion watch, Jellyfin's look for the new items), run outside the
 * delivery slots once the delivery is recorded: their `afterSteps: 'running'` delivery ends with an `'ended'` event.
 * A scan sent is kept as untold (untold.ts) until that event is written, and a relay that stopped or died before it
 * tells its scans at the next start, once the server no longer scans them.
 */
export class AfterSteps {
  /** Scans sent whose end is told once their after-steps confirm it: kept in the queue until told (crash, stop). */
  private readonly untold: UntoldScans;
  /** Left untold by this relay's last run, by target: told once the server says it no longer scans (or cannot say). */
  private readonly untoldLeft = new Map<string, Untold[]>();
  /** After-delivery steps still running (and serial turns held with no delivery in them); aborted and awaited on stop. */
  private readonly afterSteps = new Set<Promise<void>>();
  private readonly afterAbort = new AbortController();
  /** Targets whose last item lookup failed (logged once until one works again). */
  private readonly lookupFailing = new Set<string>();
  private readonly opts: Pick<AfterStepsOptions, 'scannedItems' | 'itemLookupMaxMs'>;
  private readonly now: () => number;
  private readonly releaseTurn: AfterStepsOptions['releaseTurn'];

  constructor(
    private readonly store: QueueBackend,
    private readonly targets: ReadonlyMap<string, Target>,
    private readonly log: Logger,
    opts: AfterStepsOptions,
  ) {
    this.untold = new UntoldScans(store.meta, store.shared?.relayId ?? 'local');
    this.now = opts.clock;
    this.releaseTurn = opts.releaseTurn;
    this.opts = { scannedItems: opts.scannedItems, itemLookupMaxMs: opts.itemLookupMaxMs };
  }

  /** Whether scans this relay sent before its last stop are still untold for `target` (nothing is sent to it meanwhile). */
  hasUntoldLeft(target: string): boolean {
    return this.untoldLeft.has(target);
  }

  /** Keeps `step` among the after-steps that stop() waits for (a serial target's turn held with no delivery in it). */
  track(step: Promise<void>): void {
    this.afterSteps.add(step);
    void step.finally(() => this.afterSteps.delete(step));
  }

  /** Resolves when every after-delivery step started so far has ended (tests, orderly shutdown). */
  async settled(): Promise<void> {
    while (this.afterSteps.size) await Promise.allSettled([...this.afterSteps]);
  }

  /** On stop, past the grace period: the steps still running are told to end. */
  abort(): void {
    this.afterAbort.abort();
  }

  /** Resolves when the steps running now have ended (not those started meanwhile). */
  running(): Promise<unknown> {
    return Promise.allSettled([...this.afterSteps]);
  }

  /**
   * Scans this relay sent before it stopped or died whose end it had not told: a target that can say what its server
   * scans (Plex's activities) is asked before anything else is sent to it (SerialTurns.stillScanning), and each is
   * told once the server no longer scans; a target that cannot say tells them at once as "completion unknown".
   */
  async findUntold(): Promise<void> {
    let left: Untold[];
    try {
      left = await this.untold.left();
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not read the scans whose end was not told before the last stop');
      return;
    }
    for (const u of left) {
      const entry = await this.store.view.get(u.scan);
      // Never recorded as sent (the relay died between the two writes): it is sent again, and told then.
      if (entry && entry.deliveries.find((d) => d.target === u.delivery)?.status !== 'done') {
        await this.untold.forget(u.scan, u.delivery);
        continue;
      }
      const target = this.targets.get(u.target);
      if (!target?.scanning) {
        await this.tellUntold(u, 'completion unknown: scanrelay stopped before the server confirmed the scan');
        continue;
      }
      this.untoldLeft.set(u.target, [...(this.untoldLeft.get(u.target) ?? []), u]);
    }
    for (const [target, list] of this.untoldLeft) {
      this.log.info({ target, scans: list.map((u) => u.scan) }, 'scans sent before scanrelay stopped were not confirmed yet: asking the server whether it still scans before sending more');
    }
  }

  /** Writes an untold scan's event (with its detail in the history) and forgets it; a failure is logged, kept for the next start. */
  private async tellUntold(u: Untold, how: string): Promise<void> {
    const event = toldLate(u, how, this.now());
    try {
      await this.store.setDeliveryDetail(u.scan, u.delivery, event.detail ?? how, event);
      await this.untold.forget(u.scan, u.delivery);
      this.log.info({ scan: u.scan, target: u.target, folder: u.event.folder, detail: event.detail }, 'told the end of a scan sent before scanrelay stopped');
    } catch (err) {
      this.log.error({ scan: u.scan, target: u.target, err }, 'could not record the end of a scan sent before scanrelay stopped');
    }
  }

  /** The server no longer scans (`unknown`: it could not be asked): the scans left untold for it are told. */
  async tellUntoldOf(target: string, unknown: string | undefined): Promise<void> {
    const list = this.untoldLeft.get(target);
    if (!list) return;
    this.untoldLeft.delete(target);
    const how = unknown
      ? `completion unknown: scanrelay stopped before the server confirmed the scan, and the server could not be asked at the next start (${unknown})`
      : 'scanrelay stopped before the server confirmed the scan; at the next start the server no longer scanned, so the scan had ended';
    for (const u of list) await this.tellUntold(u, how);
  }

  /** Keeps a sent scan as untold until its after-steps tell it; a failure to keep it is logged (it is told as before). */
  async rememberUntold(item: ScanItem, target: string, delivery: string, detail: string | undefined, now: number): Promise<void> {
    try {
      // Told late, it tells the delivery again, as runAfter's event would: it settles nothing (afterSteps 'ended').
      const event = { ...deliveryEvent(item, target, { status: 'done', ...(detail ? { detail } : {}) }, now), afterSteps: 'ended' as const };
      await this.untold.remember({ target, delivery, scan: item.id, event });
    } catch (err) {
      this.log.warn({ scan: item.id, target, err: (err as Error).message }, 'could not keep the sent scan as untold: a crash before it is confirmed would not tell it');
    }
  }

  /** The items a scan added or updated, for its `scanned` event; a failure costs the items, never the event. */
  private async lookUpItems(item: ScanItem, target: string, lookup: NonNullable<AfterOutcome['items']>): Promise<ScannedItem[] | undefined> {
    const signal = this.afterAbort.signal;
    if (signal.aborted) return undefined;
    // Neither stopping nor the event waits long for a server that does not answer a lookup that only names items.
    let onAbort = () => {};
    let timer: NodeJS.Timeout | undefined;
    const stopped = new Promise<never>((_, reject) => {
      signal.addEventListener('abort', (onAbort = () => reject(signal.reason)), { once: true });
      timer = setTimeout(() => reject(new Error(`no answer within ${this.opts.itemLookupMaxMs} ms`)), this.opts.itemLookupMaxMs);
    });
    try {
      const items = await Promise.race([lookup(signal), stopped]);
      this.lookupFailing.delete(target);
      return items;
    } catch (err) {
      // One line when lookups start failing, not one per scan of a drain.
      const level = this.lookupFailing.has(target) ? 'debug' : 'warn';
      this.lookupFailing.add(target);
      if (!signal.aborted) this.log[level]({ scan: item.id, target, err: (err as Error).message }, 'could not look up the items the scan added or updated; it is told without them');
      return undefined;
    } finally {
      signal.removeEventListener('abort', onAbort);
      clearTimeout(timer);
    }
  }

  /**
   * Runs a target's after-delivery steps outside the delivery slots: the delivery is already recorded
   * (and other deliveries go on); what the steps find replaces the delivery's detail.
   */
  runAfter(
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
      let lookup: AfterOutcome['items'];
      try {
        const out = asOutcome(await after(this.afterAbort.signal));
        full = out.detail || detail || '';
        if (this.opts.scannedItems(target, item.source)) lookup = out.items;
      } catch (err) {
        const why = this.afterAbort.signal.aborted ? 'scanrelay stopped before the after-scan steps ended' : `after-scan steps failed: ${(err as Error).message}`;
        full = [detail, why].filter(Boolean).join('; ');
        if (!this.afterAbort.signal.aborted) this.log.error({ scan: item.id, target, err }, 'after-scan steps failed');
      }
      if (this.afterAbort.signal.aborted) {
        // Stopped before the server confirmed the scan: `scanned` would be told early. The history says so, and the
        // scan stays untold: the next start asks the server how it ended and tells it then.
        full = [detail, 'scanrelay stopped before the after-scan steps ended'].filter(Boolean).join('; ');
        try {
          await this.store.setDeliveryDetail(item.id, delivery, full);
        } catch (err) {
          this.log.error({ scan: item.id, target, err }, 'could not record the after-scan outcome');
        }
        this.log.info({ scan: item.id, target, folder: item.folder }, 'stopped before the scan was confirmed; its end is told at the next start');
        return;
      }
      let items: ScannedItem[] | undefined;
      if (lookup) {
        // The lookup is for the notification only: the turn goes first, so the server's next scan never waits for it.
        if (holdsTurn) {
          holdsTurn = false;
          await this.releaseTurn(target, sharedTurn);
        }
        items = await this.lookUpItems(item, target, lookup);
      }
      try {
        const told = deliveryEvent(item, target, { status: 'done', ...(full ? { detail: full } : {}), ...(items ? { items } : {}) }, this.now());
        await this.store.setDeliveryDetail(item.id, delivery, full, { ...told, afterSteps: 'ended' });
        await this.untold.forget(item.id, delivery);
      } catch (err) {
        this.log.error({ scan: item.id, target, err }, 'could not record the after-scan outcome');
      }
      this.log.info({ scan: item.id, target, folder: item.folder, detail: full }, 'after-scan steps finished');
    })();
    this.afterSteps.add(step);
    void step.finally(async () => {
      this.afterSteps.delete(step);
      if (holdsTurn) {
        await this.releaseTurn(target, sharedTurn);
      }
    });
  }
}
