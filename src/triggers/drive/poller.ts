import type { DriveControl, DriveStatus } from '../../core/status.ts';
import type { Config } from '../../config/schema.ts';
import type { ScanRequest } from '../../core/scan.ts';
import type { CacheOp, DriveCache } from './cache.ts';
import type { ChangeResult } from './changes.ts';
import { DriveApiError } from '../../google/drive-client.ts';
import type { DriveWatcher, WatchedDrive } from './watcher.ts';
import type { Logger } from '../../log.ts';
import { mapIncomingPath } from '../../paths/rewrite.ts';
import type { FolderProbe } from '../../paths/folder.ts';
import type { QueueIntake } from '../../queue/intake.ts';
import type { QueueStore } from '../../queue/store.ts';
import { resolveEach, type SinglePathIntent } from '../../intake/resolve.ts';

export const tokenKey = (drive: Pick<WatchedDrive, 'key'>) => `drive.page_token.${drive.key}`;
export const pendingKey = (drive: Pick<WatchedDrive, 'key'>) => `drive.cache_pending.${drive.key}`;

/** Pages per drive per poll: a bound on one poll's work (1000 changes a page); the rest waits for the next poll. */
const MAX_PAGES = 1000;

export interface DrivePollerOptions {
  config: Config;
  watcher: DriveWatcher;
  cache: DriveCache;
  store: QueueStore;
  intake: QueueIntake;
  /** True when Plex's database already has the (mapped) file: it is then not scanned. */
  inPlex: (mappedPath: string) => boolean;
  log: Logger;
  probe?: FolderProbe;
  /** Called after each scheduled poll (metrics). */
  onPoll?: (outcome: 'ok' | 'error') => void;
  /** Runs before the first poll (taking over plex_autoscan's state); a failure fails that poll and is retried. */
  prepare?: () => Promise<unknown>;
}

/**
 * Polls the drive every POLL_INTERVAL seconds and queues a scan for each change plex_autoscan would
 * scan. Each page's scans, its next page token and its cache writes are committed in one queue
 * transaction; the cache is updated afterwards (and replayed from the queue after a crash), so a
 * crash never loses or repeats a change.
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

  constructor(private readonly opts: DrivePollerOptions) {}

  /** The monitor's state for the dashboard: polling, or the last error (needs-authorize when a token is missing). */
  status(): DriveStatus {
    const base = { lastPollAt: this.lastPollAt, nextPollAt: this.nextPollAt };
    if (this.stopped) return { state: 'off', ...base };
    if (!this.lastError) return { state: 'polling', ...base };
    return { state: /scanrelay authorize/.test(this.lastError) ? 'needs-authorize' : 'error', error: this.lastError, ...base };
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
    clearTimeout(this.timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.chain.catch(() => {}), new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
  }

  /** One poll of every watched drive (serialized with other polls and resets). */
  pollOnce(): Promise<void> {
    return this.serialize(async () => {
      if (!this.prepared) {
        await this.opts.prepare?.();
        this.prepared = true;
      }
      this.replayPendingCacheWrites();
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
          this.opts.onPoll?.('ok');
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

  private async pollDrive(drive: WatchedDrive): Promise<void> {
    const { store, intake, watcher, log } = this.opts;
    let token = store.meta.get(tokenKey(drive));
    if (!token) {
      token = await watcher.startToken(drive);
      await intake.enqueue([], { [tokenKey(drive)]: token });
      log.info({ drive: drive.name }, 'drive monitoring: stored the first page token; changes from now on are scanned');
      return;
    }
    for (let page = 1; page <= MAX_PAGES; page++) {
      let outcome;
      try {
        outcome = await watcher.page(drive, token);
      } catch (err) {
        // Google: a rejected page token is discarded and listing restarts from a fresh start token.
        if (!(err instanceof DriveApiError) || err.status !== 400 || err.path !== 'changes') throw err;
        const fresh = await watcher.startToken(drive);
        await intake.enqueue([], { [tokenKey(drive)]: fresh });
        log.warn({ drive: drive.name, rejected: token }, `the Drive API rejected the saved page token (${err.message}); restarting from a fresh start token`);
        return;
      }
      const requests = this.requestsFor(outcome.result);
      await intake.enqueue(requests, {
        [tokenKey(drive)]: outcome.nextToken,
        [pendingKey(drive)]: outcome.ops.length ? JSON.stringify(outcome.ops) : null,
      });
      if (outcome.ops.length) this.applyCache(drive, outcome.ops);
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

  private applyCache(drive: WatchedDrive, ops: CacheOp[]): void {
    this.opts.cache.apply(ops);
    this.opts.store.meta.set(pendingKey(drive), null);
  }

  /** Cache writes committed with their scans but not applied before a crash are applied now. */
  private replayPendingCacheWrites(): void {
    const rows = this.opts.store.db
      .prepare<[], { key: string; value: string | null }>(`SELECT key, value FROM meta WHERE key LIKE 'drive.cache_pending.%' AND value IS NOT NULL`)
      .all();
    for (const row of rows) {
      this.opts.cache.apply(JSON.parse(row.value!) as CacheOp[]);
      this.opts.store.meta.set(row.key, null);
      this.opts.log.info({ key: row.key }, 'applied drive cache writes left over from an interrupted poll');
    }
  }

  /** Drive paths -> mapped, validated, ignore-listed scan requests; files Plex already has are left out. */
  private requestsFor(result: ChangeResult): ScanRequest[] {
    const { config, log } = this.opts;
    const seen = new Set<string>();
    const paths: SinglePathIntent[] = [];
    const add = (path: string, kind: 'file' | 'gone', event: string) => {
      if (seen.has(`${kind}:${path}`)) return;
      seen.add(`${kind}:${path}`);
      if (kind === 'file' && this.opts.inPlex(mapIncomingPath(config, path).path)) {
        log.info({ path }, `not scanning ${path}: already in the Plex database`);
        return;
      }
      paths.push({ source: 'Drive', event, updateType: kind === 'gone' ? 'Deleted' : event === 'new' ? 'Created' : 'Modified', path: { path, kind } });
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
