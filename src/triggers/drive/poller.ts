import { triggerRouting } from '../../config/named-targets.ts';
import type { DriveControl, DriveStatus } from '../../core/status.ts';
import type { Config } from '../../config/schema.ts';
import type { ScanRequest } from '../../core/scan.ts';
import type { DriveCacheStore } from './cache.ts';
import type { ChangeResult } from './changes.ts';
import { DriveApiError } from '../../google/drive-client.ts';
import type { DriveWatcher, WatchedDrive } from './watcher.ts';
import type { Logger } from '../../core/logger.ts';
import { mapIncomingPath } from '../../paths/rewrite.ts';
import type { FolderProbe } from '../../paths/folder.ts';
import type { QueueIntake } from '../../queue/door.ts';
import { MetaConflictError, type QueueBackend } from '../../queue/backend.ts';
import { resolveEach, type SinglePathIntent } from '../../intake/resolve.ts';

export const tokenKey = (drive: Pick<WatchedDrive, 'key'>) => `drive.page_token.${drive.key}`;
const PENDING_PREFIX = 'drive.cache_pending.';
export const pendingKey = (drive: Pick<WatchedDrive, 'key'>) => `${PENDING_PREFIX}${drive.key}`;

/**
 * Who polls the drive when several relays share a queue: one holder at a time, renewed while it runs
 * (PgLease). Without one (a SQLite queue) this relay always polls.
 */
export interface PollLease {
  /** This relay's name, as the others show it. */
  readonly holder: string;
  /** How long a take or a renewal holds. */
  readonly ms: number;
  take(): Promise<{ held: boolean; holder: string | undefined; since: number | undefined }>;
  release(): Promise<void>;
}

/** Pages per drive per poll: a bound on one poll's work (1000 changes a page); the rest waits for the next poll. */
const MAX_PAGES = 1000;

export interface DrivePollerOptions {
  config: Config;
  watcher: DriveWatcher;
  cache: DriveCacheStore;
  store: Pick<QueueBackend, 'meta'>;
  intake: QueueIntake;
  /** True when Plex's database already has the (mapped) file: it is then not scanned. */
  inPlex: (mappedPath: string) => boolean;
  log: Logger;
  probe?: FolderProbe;
  /** Called after each scheduled poll (metrics). */
  onPoll?: (outcome: 'ok' | 'error') => void;
  /** Runs before the first poll (taking over plex_autoscan's state); a failure fails that poll and is retried. */
  prepare?: () => Promise<unknown>;
  /** With a shared queue: only the relay holding this lease polls; the others stand by. */
  lease?: PollLease;
}

/**
 * Polls the drive every POLL_INTERVAL seconds and queues a scan for each change plex_autoscan would
 * scan. Each page's scans, its next page token and its cache writes are committed in one queue
 * transaction; the cache is updated afterwards (and replayed from the queue after a crash), so a
 * crash never loses or repeats a change.
 *
 * With a shared queue several relays run a poller and the lease picks the one that polls; the others
 * try to take it at each POLL_INTERVAL. The lease alone cannot stop a holder that paused past it, so each
 * page's commit is also a compare and set on the page token it started from: a page another relay already
 * committed is dropped, never queued twice. Its cache writes are applied only while they are still the
 * pending ones (PgDriveCache.applyPending).
 */
export class DrivePoller implements DriveControl {
  private drives: WatchedDrive[] | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private lastPollAt: number | undefined;
  private nextPollAt: number | undefined;
  private lastError: string | undefined;
  private prepared = false;
  /** With a lease: whether this relay holds it, until when (this clock), and who holds it otherwise. */
  private holding = false;
  private heldUntil = 0;
  private heldSince: number | undefined;
  private otherHolder: string | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  /** stop() was called: a renewal still under way must not take the lease again. */
  private closed = false;

  constructor(private readonly opts: DrivePollerOptions) {}

  /** The monitor's state for the dashboard: polling, standing by for another relay, or the last error (needs-authorize when a token is missing). */
  status(): DriveStatus {
    const base = { lastPollAt: this.lastPollAt, nextPollAt: this.nextPollAt, ...(this.opts.lease && this.holding ? { polledBy: this.opts.lease.holder } : {}) };
    if (this.stopped) return { state: 'off', lastPollAt: this.lastPollAt };
    if (this.lastError) return { state: /scanrelay authorize/.test(this.lastError) ? 'needs-authorize' : 'error', error: this.lastError, ...base };
    if (this.opts.lease && !this.holding && this.otherHolder) return { state: 'standby', polledBy: this.otherHolder, lastPollAt: this.lastPollAt, nextPollAt: this.nextPollAt };
    return { state: 'polling', ...base };
  }

  enabled(): boolean {
    return true;
  }

  start(): void {
    this.stopped = false;
    this.opts.log.info({ pollInterval: this.opts.config.GOOGLE.POLL_INTERVAL }, `drive monitoring started: polling every ${this.opts.config.GOOGLE.POLL_INTERVAL} s`);
    this.schedule(0);
  }

  /**
   * Stops polling. A poll in progress gets a moment to finish; one stuck in a long backoff is
   * abandoned, which is safe: nothing of a page is kept until its scans and token commit together.
   */
  async stop(graceMs = 2000): Promise<void> {
    this.stopped = true;
    this.closed = true;
    clearTimeout(this.timer);
    this.dropTimer();
    await this.renewing;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.chain.catch(() => {}), new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    // Handed on at once rather than after it runs out; a poll still running is fenced by the token check.
    if (this.opts.lease && this.holding) {
      this.holding = false;
      await this.opts.lease.release().then(
        () => this.opts.log.info({ relay: this.opts.lease!.holder }, 'drive monitoring stopped: released the drive lease for another relay to take'),
        () => undefined,
      );
    }
  }

  /** One poll of every watched drive (serialized with other polls and resets); with a lease, only while holding it. */
  pollOnce(): Promise<void> {
    return this.serialize(async () => {
      if (this.opts.lease && !(await this.takeLease())) return;
      if (!this.prepared) {
        await this.opts.prepare?.();
        this.prepared = true;
      }
      await this.replayPendingCacheWrites();
      // Each drive on its own: one failing shared drive must not stop the others.
      const failures: string[] = [];
      for (const drive of await this.watched()) {
        try {
          await this.pollDrive(drive);
        } catch (err) {
          failures.push(drive.key === 'root' ? (err as Error).message : `shared drive ${drive.name}: ${(err as Error).message}`);
        }
      }
      if (failures.length) throw new Error(failures.join('; '));
    });
  }

  /** The `reset_page_token` command: every drive restarts from a fresh start token. */
  resetPageToken(): Promise<void> {
    return this.serialize(async () => {
      const meta: Record<string, string | null> = {};
      for (const drive of await this.watched()) meta[tokenKey(drive)] = await this.opts.watcher.startToken(drive);
      // Not a compare and set: a reset wins, and the poller's page in flight (here or on another relay) is dropped.
      await this.opts.intake.enqueue([], meta);
      this.opts.log.info('drive page tokens reset: changes before now will not be scanned');
    });
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.nextPollAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      void this.pollOnce()
        .then(() => {
          this.lastError = undefined;
          if (!this.opts.lease || this.holding) this.opts.onPoll?.('ok');
        })
        .catch((err: Error) => {
          this.lastError = err.message;
          this.opts.onPoll?.('error');
          this.opts.log.error({ err: err.message }, `drive poll failed, trying again in ${this.opts.config.GOOGLE.POLL_INTERVAL} s: ${err.message}`);
        })
        .finally(() => {
          this.lastPollAt = Date.now();
          this.schedule(this.opts.config.GOOGLE.POLL_INTERVAL * 1000);
        });
    }, delayMs);
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => {});
    return run;
  }

  private async watched(): Promise<WatchedDrive[]> {
    this.drives ??= await this.opts.watcher.drives();
    return this.drives;
  }

  /** Takes or renews the lease and says so once when this relay starts or stops polling; false: another relay polls. */
  private async takeLease(): Promise<boolean> {
    const lease = this.opts.lease!;
    const asked = Date.now();
    const state = await lease.take();
    const { log } = this.opts;
    if (state.held) {
      this.heldUntil = asked + lease.ms;
      if (!this.holding || state.since !== this.heldSince) {
        const from = this.otherHolder ? ` (taking over from relay ${this.otherHolder})` : '';
        log.info({ relay: lease.holder, from: this.otherHolder }, `drive monitoring: this relay (${lease.holder}) polls the drive now${from}`);
        if (!this.closed && !this.renewTimer) {
          this.renewTimer = setInterval(() => void (this.renewing ??= this.renew().finally(() => (this.renewing = undefined))), Math.max(100, Math.floor(lease.ms / 3)));
          this.renewTimer.unref?.();
        }
      }
      this.holding = true;
      this.heldSince = state.since;
      this.otherHolder = undefined;
      return true;
    }
    if (this.holding) log.warn({ relay: lease.holder, holder: state.holder }, `drive monitoring: relay ${state.holder ?? '(none)'} polls the drive now; this relay lost the drive lease and stands by`);
    else if (state.holder !== this.otherHolder) log.info({ relay: lease.holder, holder: state.holder }, `drive monitoring: relay ${state.holder} polls the drive; this relay stands by`);
    this.dropLease();
    this.otherHolder = state.holder;
    return false;
  }

  /** Renews the lease between polls, so a poll interval longer than the lease does not hand it over. */
  private async renew(): Promise<void> {
    if (this.closed || !this.holding) return;
    try {
      await this.takeLease();
    } catch (err) {
      // The database is away: the lease runs out here as it does for the others, and each page checks it.
      this.opts.log.debug({ err: (err as Error).message }, 'could not renew the drive lease');
    }
  }

  private dropLease(): void {
    this.holding = false;
    this.heldUntil = 0;
    this.dropTimer();
  }

  private dropTimer(): void {
    clearInterval(this.renewTimer);
    this.renewTimer = undefined;
  }

  /** Whether this relay may read another page: always without a lease; with one, while it has not run out. */
  private mayPoll(): boolean {
    return !this.opts.lease || (this.holding && Date.now() < this.heldUntil);
  }

  /**
   * Commits a page token change (with its scans and pending cache writes) only where the token is still
   * `from`. False, with one log line, when another relay or a reset changed it first: the page is dropped.
   */
  private async commit(drive: WatchedDrive, from: string | null, requests: ScanRequest[], meta: Record<string, string | null>): Promise<boolean> {
    try {
      await this.opts.intake.enqueue(requests, meta, { [tokenKey(drive)]: from });
      return true;
    } catch (err) {
      if (!(err instanceof MetaConflictError)) throw err;
      this.opts.log.warn(
        { drive: drive.name, from, found: err.found, dropped: requests.length },
        `drive ${drive.name}: the page token changed while this relay read the page (another relay polled it, or reset_page_token): dropped the page and its ${requests.length} scan request(s)`,
      );
      return false;
    }
  }

  private async pollDrive(drive: WatchedDrive): Promise<void> {
    const { store, watcher, log } = this.opts;
    let token = await store.meta.get(tokenKey(drive));
    if (!token) {
      const start = await watcher.startToken(drive);
      if (await this.commit(drive, null, [], { [tokenKey(drive)]: start })) {
        log.info({ drive: drive.name }, 'drive monitoring: stored the first page token; changes from now on are scanned');
      }
      return;
    }
    for (let page = 1; page <= MAX_PAGES; page++) {
      if (!this.mayPoll()) {
        log.warn({ drive: drive.name }, `drive ${drive.name}: the drive lease ran out before the next page; the relay that holds it now reads on`);
        return;
      }
      let outcome;
      try {
        outcome = await watcher.page(drive, token);
      } catch (err) {
        // Google: a rejected page token is discarded and listing restarts from a fresh start token.
        if (!(err instanceof DriveApiError) || err.status !== 400 || err.path !== 'changes') throw err;
        const fresh = await watcher.startToken(drive);
        if (await this.commit(drive, token, [], { [tokenKey(drive)]: fresh })) {
          log.warn({ drive: drive.name, rejected: token }, `the Drive API rejected the saved page token (${err.message}); restarting from a fresh start token`);
        }
        return;
      }
      const requests = this.requestsFor(outcome.result);
      const pending = outcome.ops.length ? JSON.stringify(outcome.ops) : null;
      if (!(await this.commit(drive, token, requests, { [tokenKey(drive)]: outcome.nextToken, [pendingKey(drive)]: pending }))) return;
      if (pending) await this.applyPending(pendingKey(drive), pending);
      if (outcome.changes) {
        const c = outcome.result.counts;
        log.info(
          { drive: drive.name, changes: outcome.changes, ...c, queued: requests.length },
          `drive: ${outcome.changes} change(s): ${c.added} added / ${c.removed} removed / ${c.unwanted} unwanted / ${c.ignored} ignored / ${c.renamed} renamed / ${c.moved} moved${c.undecoded ? ` / ${c.undecoded} not decoded` : ''}; ${requests.length} scan request(s) queued`,
        );
      }
      token = outcome.nextToken;
      if (outcome.done) return;
    }
  }

  private async applyPending(key: string, value: string): Promise<boolean> {
    const applied = await this.opts.cache.applyPending(key, value, this.opts.store.meta);
    if (!applied) this.opts.log.warn({ key }, 'drive cache writes of this page were already applied or replaced by another relay: left alone');
    return applied;
  }

  /** Cache writes committed with their scans but not applied before a crash (of this relay or another) are applied now. */
  private async replayPendingCacheWrites(): Promise<void> {
    for (const [key, value] of await this.opts.store.meta.list(PENDING_PREFIX)) {
      if (await this.applyPending(key, value)) this.opts.log.info({ key }, 'applied drive cache writes left over from an interrupted poll');
    }
  }

  /** Drive paths -> mapped, validated, ignore-listed scan requests; files Plex already has are left out. */
  private requestsFor(result: ChangeResult): ScanRequest[] {
    const { config, log } = this.opts;
    const seen = new Set<string>();
    // GOOGLE's TARGETS / EXCLUDE_TARGETS and DELAY.
    const routing = triggerRouting(config, config.GOOGLE);
    const paths: SinglePathIntent[] = [];
    const add = (path: string, kind: 'file' | 'gone', event: string) => {
      if (seen.has(`${kind}:${path}`)) return;
      seen.add(`${kind}:${path}`);
      if (kind === 'file' && this.opts.inPlex(mapIncomingPath(config, path).path)) {
        log.info({ path }, `not scanning ${path}: already in the Plex database`);
        return;
      }
      paths.push({ source: 'Drive', event, updateType: kind === 'gone' ? 'Deleted' : event === 'new' ? 'Created' : 'Modified', path: { path, kind }, ...routing });
    };
    for (const s of result.scans) add(s.path, 'file', s.reason);
    for (const r of result.removals) add(r.path, 'gone', 'removed');
    const { requests, skipped } = resolveEach(paths, config, this.opts.probe);
    for (const s of skipped) {
      if (s.why === 'ignored') log.info({ path: s.path }, `not scanning ${s.path}: ${s.reason}`);
      else log.warn({ path: s.path }, `not scanning drive path ${s.path}: ${s.reason} (add its drive form to SERVER_PATH_MAPPINGS)`);
    }
    return requests;
  }
}
