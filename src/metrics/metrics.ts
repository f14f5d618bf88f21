import type { Registry } from 'prom-client';
import { buildInfo } from '../core/version.ts';
import type { NotificationHealth } from '../core/status.ts';
import type { NormalizedScanRequest } from '../core/scan.ts';
import type { DeliveryEvent } from '../queue/scheduler.ts';
import type { EnqueueResult } from '../queue/types.ts';

/** What a scan request came to: queued or merged (committed), ignored (SERVER_IGNORE_LIST), rejected (4xx), test. */
export type RequestOutcome = 'queued' | 'merged' | 'ignored' | 'rejected' | 'test';

/** Where the queue depth comes from; read at scrape time so the gauge is never stale. */
export interface QueueCounts {
  counts(): Record<string, number> | Promise<Record<string, number>>;
}

type Labels = Record<string, string>;

/** One metric as prom-client's registry formats it (the shape its own metrics' `get()` returns). */
interface MetricView {
  name: string;
  get(): MetricValue | Promise<MetricValue>;
}

interface MetricValue {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregator: 'sum';
  values: Array<{ labels: Labels; value: number; metricName?: string }>;
}

/** A labelled counter kept as plain numbers until a scrape formats it. */
class Tally implements MetricView {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    private readonly help: string,
  ) {}

  inc(labels: Labels, n = 1): void {
    const key = JSON.stringify(labels);
    const entry = this.values.get(key);
    if (entry) entry.value += n;
    else this.values.set(key, { labels, value: n });
  }

  get() {
    return { name: this.name, help: this.help, type: 'counter' as const, aggregator: 'sum' as const, values: [...this.values.values()].map((v) => ({ ...v })) };
  }
}

/** A gauge read from its source at scrape time, so it is never stale (prom-client awaits it). */
function gauge(name: string, help: string, read: () => Array<{ labels: Labels; value: number }> | Promise<Array<{ labels: Labels; value: number }>>): MetricView {
  return { name, get: async () => ({ name, help, type: 'gauge', aggregator: 'sum', values: await read() }) };
}

/** A counter another part keeps, read at scrape time. */
function counter(name: string, help: string, read: () => Array<{ labels: Labels; value: number }>): MetricView {
  return { name, get: () => ({ name, help, type: 'counter', aggregator: 'sum', values: read() }) };
}

/** A labelled histogram (cumulative `le` buckets, `_sum`, `_count`), as Prometheus expects it. */
class Buckets implements MetricView {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  observe(labels: Labels, value: number): void {
    const key = JSON.stringify(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels, counts: this.bounds.map(() => 0), sum: 0, count: 0 }));
    this.bounds.forEach((b, i) => {
      if (value <= b) s.counts[i]!++;
    });
    s.sum += value;
    s.count++;
  }

  get() {
    const values = [...this.series.values()].flatMap((s) => [
      ...this.bounds.map((b, i) => ({ labels: { le: String(b), ...s.labels }, value: s.counts[i]!, metricName: `${this.name}_bucket` })),
      { labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${this.name}_bucket` },
      { labels: s.labels, value: s.sum, metricName: `${this.name}_sum` },
      { labels: s.labels, value: s.count, metricName: `${this.name}_count` },
    ]);
    return { name: this.name, help: this.help, type: 'histogram' as const, aggregator: 'sum' as const, values };
  }
}

/**
 * The relay's Prometheus metrics. They are counted as plain numbers; prom-client (its text format and the
 * process metrics) is loaded on the first scrape of /metrics, so a relay nobody scrapes never pays for it.
 * Each relay instance has its own registry (several run in one test process).
 */
export class Metrics {
  /** prom-client's Prometheus text format type (a constant, so it is known before prom-client is loaded). */
  readonly contentType = 'text/plain; version=0.0.4; charset=utf-8';
  private readonly requests = new Tally('scanrelay_requests_total', 'Scan requests (one per path) by source and outcome');
  private readonly scans = new Tally('scanrelay_scans_total', 'Delivery attempts by target and outcome (done, retry, failed)');
  private readonly latency = new Buckets(
    'scanrelay_request_to_scan_seconds',
    'Time from the first request for a folder to its delivered scan, by target',
    [1, 5, 15, 30, 60, 120, 180, 300, 600, 1200, 3600, 7200],
  );
  private readonly drivePolls = new Tally('scanrelay_drive_polls_total', 'Drive change polls by outcome (ok, error)');
  private readonly driveErrors = new Tally('scanrelay_drive_api_errors_total', 'Errors from the drive API by kind (auth, rate_limit, network, server, other)');
  private readonly views: MetricView[];
  private registry: Promise<Registry> | undefined;

  constructor(
    queue: QueueCounts,
    private readonly opts: {
      processMetrics?: boolean;
      held?: () => { held: boolean; fullDisks?: ReadonlyArray<{ holds: boolean }> };
      relay?: string;
      /** Each target's scan mode now (Jellyfin/Emby: SCAN_MODE or what auto chose), read at scrape time. */
      scanModes?: () => Array<{ target: string; mode: string }>;
      /** Each NOTIFICATIONS destination's health (labelled by its name, never its URL). */
      notifications?: () => readonly NotificationHealth[];
    } = {},
  ) {
    const held = opts.held;
    const each = (value: (n: NotificationHealth) => number | null) => () =>
      (opts.notifications?.() ?? []).flatMap((n) => {
        const v = value(n);
        return v === null ? [] : [{ labels: { destination: n.name }, value: v }];
      });
    this.views = [
      this.requests,
      gauge('scanrelay_queue_depth', 'Scans in the queue by state (pending: waiting for their delay, active: being delivered)', async () => {
        const counts = await queue.counts();
        return [
          { labels: { state: 'pending' }, value: counts.pending ?? 0 },
          { labels: { state: 'active' }, value: counts.active ?? 0 },
        ];
      }),
      gauge('scanrelay_held', "Whether every scan is held (1) and why: mount_guard = an SERVER_ANCHOR_FILES file is missing; disk_full = an anchor's disk is below SERVER_DISK_MIN_FREE", () => {
        const h = held?.();
        return [
          { labels: { reason: 'mount_guard' }, value: h?.held ? 1 : 0 },
          { labels: { reason: 'disk_full' }, value: h?.fullDisks?.some((d) => d.holds) ? 1 : 0 },
        ];
      }),
      // Which release runs (CHANGELOG.md), and, on a shared PostgreSQL queue, the relay's name: there the queue
      // depth is the shared queue's and the counters are this relay's.
      gauge('scanrelay_relay_info', 'This relay: its release (version, commit where known) and, in a shared queue (SERVER_QUEUE_URL), its name', () => {
        const { version, commit } = buildInfo();
        return [{ labels: { version, commit: commit ?? '', ...(opts.relay ? { relay: opts.relay } : {}) }, value: 1 }];
      }),
      gauge('scanrelay_target_scan_mode', 'The scan mode a target uses now (Jellyfin/Emby: plugin, item or media-updated; SCAN_MODE or what auto chose): 1 for the mode', () =>
        (opts.scanModes?.() ?? []).map((m) => ({ labels: { target: m.target, mode: m.mode }, value: 1 })),
      ),
      gauge('scanrelay_notification_last_success_timestamp_seconds', 'When each notification destination last took a message (Unix time; absent: not yet)', each((n) => (n.lastSuccessAt === null ? null : n.lastSuccessAt / 1000))),
      gauge('scanrelay_notification_events_waiting', 'Events each notification destination takes that are not sent yet, as of its last look (counted up to 1000)', each((n) => n.waiting)),
      gauge('scanrelay_notification_failing', 'Whether the service of each notification destination is refusing what it is sent (1) since its last success', each((n) => (n.failingSince === null ? 0 : 1))),
      counter('scanrelay_notification_events_given_up_total', 'Events each notification destination dropped since the relay started: refused for GIVE_UP_AFTER, or refused outright (4xx)', each((n) => n.givenUp)),
      this.scans,
      this.latency,
      this.drivePolls,
      this.driveErrors,
    ];
  }

  /** A request that did not reach the queue, or a test request. */
  request(source: string, outcome: RequestOutcome, n = 1): void {
    if (n > 0) this.requests.inc({ source, outcome }, n);
  }

  /** Requests committed by the intake (every trigger passes here, the drive poller included). */
  committed(requests: readonly NormalizedScanRequest[], results: readonly EnqueueResult[]): void {
    // A request no target takes is never stored; it is counted where it is answered (as ignored).
    requests.forEach((r, i) => this.request(r.source, results[i]?.status === 'unrouted' ? 'ignored' : (results[i]?.status ?? 'queued')));
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

  async text(): Promise<string> {
    return (await (this.registry ??= this.load())).metrics();
  }

  private async load(): Promise<Registry> {
    // prom-client is CommonJS: its module.exports is the default export, in node and in the bundle alike (the
    // bundle's chunk for it has no named exports).
    const { Registry, collectDefaultMetrics } = (await import('prom-client')).default;
    const registry = new Registry();
    for (const view of this.views) registry.registerMetric(view as unknown as Parameters<Registry['registerMetric']>[0]);
    if (this.opts.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'scanrelay_' });
    return registry;
  }
}
