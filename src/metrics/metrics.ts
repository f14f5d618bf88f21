import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { NormalizedScanRequest } from '../core/scan.ts';
import type { DeliveryEvent } from '../queue/scheduler.ts';
import type { EnqueueResult } from '../queue/store.ts';

/** What a scan request came to: queued or merged (committed), ignored (SERVER_IGNORE_LIST), rejected (4xx), test. */
export type RequestOutcome = 'queued' | 'merged' | 'ignored' | 'rejected' | 'test';

/** Where the queue depth comes from; read at scrape time so the gauge is never stale. */
export interface QueueCounts {
  counts(): Record<string, number>;
}

/**
 * The relay's Prometheus metrics in their own registry (not prom-client's global one), so every relay
 * instance, including several in one test process, counts on its own.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'source' | 'outcome'>;
  private readonly scans: Counter<'target' | 'outcome'>;
  private readonly latency: Histogram<'target'>;
  private readonly drivePolls: Counter<'outcome'>;
  private readonly driveErrors: Counter<'kind'>;

  constructor(queue: QueueCounts, opts: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'scanrelay_requests_total',
      help: 'Scan requests (one per path) by source and outcome',
      labelNames: ['source', 'outcome'],
      registers,
    });
    new Gauge({
      name: 'scanrelay_queue_depth',
      help: 'Scans in the queue by state (pending: waiting for their delay, active: being delivered)',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = queue.counts();
        this.set({ state: 'pending' }, counts.pending ?? 0);
        this.set({ state: 'active' }, counts.active ?? 0);
      },
    });
    this.scans = new Counter({
      name: 'scanrelay_scans_total',
      help: 'Delivery attempts by target and outcome (done, retry, failed)',
      labelNames: ['target', 'outcome'],
      registers,
    });
    this.latency = new Histogram({
      name: 'scanrelay_request_to_scan_seconds',
      help: 'Time from the first request for a folder to its delivered scan, by target',
      labelNames: ['target'],
      buckets: [1, 5, 15, 30, 60, 120, 180, 300, 600, 1200, 3600, 7200],
      registers,
    });
    this.drivePolls = new Counter({
      name: 'scanrelay_drive_polls_total',
      help: 'Drive change polls by outcome (ok, error)',
      labelNames: ['outcome'],
      registers,
    });
    this.driveErrors = new Counter({
      name: 'scanrelay_drive_api_errors_total',
      help: 'Errors from the drive API by kind (auth, rate_limit, network, server, other)',
      labelNames: ['kind'],
      registers,
    });
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'scanrelay_' });
  }

  /** A request that did not reach the queue, or a test request. */
  request(source: string, outcome: RequestOutcome, n = 1): void {
    if (n > 0) this.requests.inc({ source, outcome }, n);
  }

  /** Requests committed by the intake (every trigger passes here, the drive poller included). */
  committed(requests: readonly NormalizedScanRequest[], results: readonly EnqueueResult[]): void {
    requests.forEach((r, i) => this.request(r.source, results[i]?.status ?? 'queued'));
  }

  /** Scheduler `onDelivery`: one count per attempt, and the wait from request to scan when it is done. */
  readonly delivery = (event: DeliveryEvent): void => {
    this.scans.inc({ target: event.target, outcome: event.result.outcome });
    if (event.result.outcome === 'done') this.latency.observe({ target: event.target }, Math.max(0, Date.now() - event.item.firstAt) / 1000);
  };

  /** For the drive monitor: one poll of the changes list. */
  drivePoll(outcome: 'ok' | 'error'): void {
    this.drivePolls.inc({ outcome });
  }

  /** For the drive monitor: an error answer or failure talking to the drive API. */
  driveApiError(kind: 'auth' | 'rate_limit' | 'network' | 'server' | 'other'): void {
    this.driveErrors.inc({ kind });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
