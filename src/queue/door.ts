import { scanRequestSchema, type NormalizedScanRequest, type ScanRequest } from '../core/scan.ts';
import { isBusy } from '../db/sqlite.ts';
import { QueueUnavailableError, type MetaExpect, type OnceMarker, type OnceResult, type QueueBackend } from './backend.ts';
import type { Config } from '../config/schema.ts';
import { scanDelayMax } from '../config/schema.ts';
import { relayRoutes, routeRequest, withPeerTargets, type RouteEntry } from './route.ts';
import type { EnqueueResult, Timing } from './types.ts';

const BUSY_RETRY_EVERY_MS = 50;

interface Waiting {
  requests: NormalizedScanRequest[];
  meta?: Readonly<Record<string, string | null>>;
  expect?: MetaExpect;
  resolve: (r: EnqueueResult[]) => void;
  reject: (e: unknown) => void;
}

/**
 * The one door into the queue for every trigger. Requests that arrive in the same turn of the event
 * loop are committed together (group commit): each caller still gets its answer only after its
 * request is on disk, but many requests share one fsync.
 */
export class QueueIntake {
  private batch: Waiting[] = [];
  private scheduled = false;
  /** A commit is running (an asynchronous store): the next batch waits for it and grows meanwhile. */
  private committing = false;
  /** The table with the other relays' targets (table()), and the list of theirs it was built from. */
  private withPeers: { peers: readonly string[]; table: readonly RouteEntry[] } | undefined;

  constructor(
    private readonly store: QueueBackend,
    /**
     * The routing table (queue/route.ts relayRoutes): where each request goes is decided here, once, before it is
     * stored, as the explicit list of its targets ([]: none takes it, answered `unrouted` and not queued). Required:
     * an intake that could queue without it is a path that skips the targets' INCLUDE/EXCLUDE. On a shared queue
     * the other relays' targets are added as they come and go (table()).
     */
    private readonly routes: readonly RouteEntry[],
    private readonly timing: () => Timing,
    private readonly onCommitted: (results: EnqueueResult[], requests: NormalizedScanRequest[]) => void = () => {},
    /** How long a batch keeps retrying while the queue file is locked by another process. */
    private readonly busyRetryMs = 2000,
  ) {}

  /**
   * The table requests are routed by: this relay's targets and, on a shared queue, the other relays' (withPeerTargets,
   * from the list the store keeps fresh; rebuilt only when that list changes).
   */
  private table(): readonly RouteEntry[] {
    const peers = this.store.shared?.peerTargets();
    if (!peers?.length) return this.routes;
    if (this.withPeers?.peers !== peers) this.withPeers = { peers, table: withPeerTargets(this.routes, peers) };
    return this.withPeers.table;
  }

  /**
   * Gives the scans queued without a route (before issue 49) theirs, by this intake's table; before any is due. A
   * relay without targets leaves them: they go to every relay's servers. Returns how many it routed.
   */
  async routeUnrouted(): Promise<number> {
    const table = this.table();
    if (!table.length) return 0;
    return this.store.routeUnrouted((scan) => routeRequest(table, scan) ?? [], table.map((r) => r.name));
  }

  /**
   * Routes requests: the ones some target takes, with their route in `targets`, and for each request either its
   * index among those or the answer of a request no target takes.
   */
  private routed(requests: NormalizedScanRequest[]): { kept: NormalizedScanRequest[]; answer: (results: EnqueueResult[]) => EnqueueResult[] } {
    const kept: NormalizedScanRequest[] = [];
    const at: Array<number | EnqueueResult> = [];
    const table = this.table();
    for (const req of requests) {
      const { targets: _selection, ...rest } = req;
      const route = routeRequest(table, req);
      if (route && route.length === 0) {
        at.push({ id: 0, status: 'unrouted', folder: req.folder, dueAt: Date.now() });
        continue;
      }
      at.push(kept.length);
      kept.push(route ? { ...rest, targets: route } : rest);
    }
    return { kept, answer: (results) => at.map((a) => (typeof a === 'number' ? results[a]! : a)) };
  }

  /**
   * Queues requests; resolves once they are committed. `meta` keys (null clears one) are written in the same
   * commit, also when there are no requests, so a trigger's saved position never runs ahead of, or behind,
   * the scans it produced. A request that does not match the schema rejects the promise (never a throw).
   * `expect`: meta values that must be there for anything to be written (else MetaConflictError); such a
   * commit goes on its own, so a conflict never fails the requests of others.
   */
  async enqueue(requests: readonly ScanRequest[], meta?: Readonly<Record<string, string | null>>, expect?: MetaExpect): Promise<EnqueueResult[]> {
    const { kept: normalized, answer } = this.routed(requests.map((r) => scanRequestSchema.parse(r)));
    if (normalized.length === 0 && !meta) return answer([]);
    return new Promise<EnqueueResult[]>((resolve, reject) => {
      this.batch.push({ requests: normalized, meta, expect, resolve: (r) => resolve(answer(r)), reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Queues requests unless `once.done` says the marker's value means they were queued before; decided and
   * committed in one transaction, so relays doing the same at once (on a shared queue) queue them once. A commit
   * of its own, outside the group: it is rare (a takeover) and its answer depends on what the queue holds.
   */
  async enqueueOnce(requests: readonly ScanRequest[], once: OnceMarker): Promise<OnceResult> {
    const { kept: normalized, answer } = this.routed(requests.map((r) => scanRequestSchema.parse(r)));
    const deadline = Date.now() + this.busyRetryMs;
    for (;;) {
      try {
        const out = await this.store.enqueueOnce(normalized, this.timing(), Date.now(), once);
        if (out.results) this.onCommitted(out.results, normalized);
        return out.results ? { ...out, results: answer(out.results) } : out;
      } catch (err) {
        // Another process holds the queue file's lock: wait as a grouped commit does, until the deadline.
        if (!isBusy(err) || Date.now() >= deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_EVERY_MS));
      }
    }
  }

  private flush(): void {
    if (this.committing) return;
    this.scheduled = false;
    const batch = this.batch;
    this.batch = [];
    this.committing = true;
    // A compare-and-set commit goes alone: its conflict must not fail the others' requests.
    const plain = batch.filter((w) => !w.expect);
    const groups = [...(plain.length ? [plain] : []), ...batch.filter((w) => w.expect).map((w) => [w])];
    void (async () => {
      for (const group of groups) await this.commit(group, Date.now() + this.busyRetryMs);
    })().finally(() => {
      this.committing = false;
      if (this.scheduled) this.flush();
    });
  }

  /**
   * Commits a batch. While another process holds the queue file's lock, tries again on a timer (the
   * event loop stays free for other requests and /healthz) until `deadline`, then rejects with the busy
   * error, which the server answers 503 with Retry-After.
   */
  private async commit(batch: Waiting[], deadline: number): Promise<void> {
    const all = batch.flatMap((w) => w.requests);
    let results: EnqueueResult[];
    try {
      const meta = Object.assign({}, ...batch.map((w) => w.meta ?? {})) as Record<string, string | null>;
      results = await this.store.enqueueMany(all, this.timing(), Date.now(), meta, batch[0]?.expect);
    } catch (err) {
      if (isBusy(err) && Date.now() < deadline) {
        setTimeout(() => void this.commit(batch, deadline), BUSY_RETRY_EVERY_MS);
        return;
      }
      // One caller's request the store refuses must not fail its neighbours: each goes again on its own, so
      // only the one that fails gets the error. A queue that is down, busy or out of disk fails them all alike.
      if (batch.length > 1 && refusesData(err)) {
        for (const w of batch) await this.commit([w], deadline);
        return;
      }
      for (const w of batch) w.reject(err);
      return;
    }
    let offset = 0;
    for (const w of batch) {
      w.resolve(results.slice(offset, offset + w.requests.length));
      offset += w.requests.length;
    }
    this.onCommitted(results, all);
  }
}

/**
 * An error about the values a commit wrote, not about the store: PostgreSQL's data exceptions (22: an invalid
 * byte sequence), integrity constraints (23) and limits (54: an index entry too large); SQLite's constraints and
 * values too big. Another request of the same batch may be fine.
 */
function refusesData(err: unknown): boolean {
  if (err instanceof QueueUnavailableError) return false;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return /^(22|23|54)[0-9A-Z]{3}$/.test(code) || /^SQLITE_(CONSTRAINT|TOOBIG|MISMATCH)/.test(code);
}

/**
 * The intake of a command that queues without running a relay (the plex_autoscan, autoscan and autopulse
 * takeovers): the config's routing table and scan delays, as the server's own intake has them.
 */
export function configIntake(store: QueueBackend, config: Config): QueueIntake {
  return new QueueIntake(store, relayRoutes(config), () => ({ delayMs: config.SERVER_SCAN_DELAY * 1000, maxMs: scanDelayMax(config) * 1000 }));
}
