import { triggerRouting } from '../../config/named-targets.ts';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Config } from '../../config/schema.ts';
import type { Logger } from '../../core/logger.ts';
import { statProbe, type FolderProbe } from '../../paths/folder.ts';
import type { QueueIntake } from '../../queue/door.ts';
import { resolveEach } from '../../intake/resolve.ts';
import { placeRewriter, type PathRewriter } from '../../paths/rewrite.ts';
import { isDiskFull } from '../../db/disk-full.ts';
import { allowedByEntry, excluded, scanForEvent, watchFilter, type WatchEventName, type WatchFilter, type WatchScan } from './rules.ts';

/** A watched folder with its own rules (autoscan's inotify `paths[]`): rewrite, then filter the rewritten path. */
interface WatchRoot {
  root: string;
  rewrite?: PathRewriter;
  filter?: WatchFilter;
  priority: number;
  /** Its TARGETS / EXCLUDE_TARGETS and DELAY (config/named-targets.ts triggerRouting). */
  routing?: ReturnType<typeof triggerRouting>;
  /** false: only changes directly in the folder count (RECURSIVE). */
  recursive: boolean;
}

type Gathered = { event: WatchEventName; scan: WatchScan; priority: number; routing?: WatchRoot['routing'] };

export interface FolderWatcherOptions {
  config: Config;
  intake: QueueIntake;
  log: Logger;
  /** A new or changed file counts once its size stayed the same this long (ms): it is still being written before. */
  writeSettleMs?: number;
  /** Events are gathered this long (ms) and queued in one commit. */
  batchMs?: number;
  /** Looks at the local disk (deleted files: the nearest folder that still exists). */
  probe?: FolderProbe;
  /** Changes the queue had no room for (its disk is full) are queued again after this long (ms). */
  diskFullRetryMs?: number;
}

/** One gathered change's place in the pending map: a later event for the same folder and kind replaces it. */
const pendingKey = (g: Gathered) => `${g.scan.updateType}:${g.scan.path.kind}:${g.scan.path.path}`;

const EVENTS = new Set<string>(['add', 'change', 'unlink', 'addDir', 'unlinkDir']);

/** The log line for a watch error; the inotify limit gets the sysctl that raises it. */
export function watchErrorMessage(err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOSPC')
    return 'the inotify watch limit is reached, so some folders are not watched: raise it with `sudo sysctl fs.inotify.max_user_watches=524288` (add `fs.inotify.max_user_watches=524288` to /etc/sysctl.conf to keep it), or set WATCH.POLL to true';
  return `folder watcher error: ${err.message}`;
}

/**
 * WATCH: watches local folders and queues the folder of every new, changed or deleted media file through
 * the same mapping, ignore list and coalescing as every other trigger. Inotify events by default; POLL
 * for network mounts that send none. It only produces scan requests.
 */
export class FolderWatcher {
  private watcher: FSWatcher | undefined;
  private pending = new Map<string, Gathered>();
  private timer: NodeJS.Timeout | undefined;
  /** Set while changes the full queue refused wait to be queued again. */
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private flushing: Promise<void> = Promise.resolve();
  private limitLogged = false;
  private readonly roots: string[];
  private readonly entries: WatchRoot[];
  private readonly filter;
  private readonly log: Logger;

  constructor(private readonly opts: FolderWatcherOptions) {
    this.entries = opts.config.WATCH.PATHS.map((p) =>
      typeof p === 'string'
        ? { root: resolve(p), priority: 0, recursive: true }
        : {
            root: resolve(p.PATH),
            rewrite: placeRewriter(p.REWRITE, p.REWRITE_MODE),
            filter: p.INCLUDE.length || p.EXCLUDE.length ? watchFilter(p) : undefined,
            priority: p.PRIORITY,
            routing: triggerRouting(opts.config, p),
            recursive: p.RECURSIVE !== false,
          },
    );
    this.roots = this.entries.map((e) => e.root);
    this.filter = watchFilter(opts.config.WATCH);
    this.log = opts.log.child({ component: 'watch' });
  }

  /** Resolves once the initial walk is done and events are being delivered. */
  async start(): Promise<void> {
    const { WATCH } = this.opts.config;
    for (const root of this.roots) if (!existsSync(root)) this.log.warn({ path: root }, `WATCH.PATHS: ${root} does not exist (yet); it is watched for when it appears`);
    const settle = this.opts.writeSettleMs ?? WATCH.SETTLE * 1000;
    this.watcher = watch(this.roots, {
      ignoreInitial: true,
      persistent: true,
      ignored: (path, stats) => excluded(path, this.filter, stats?.isDirectory() ?? false),
      awaitWriteFinish: { stabilityThreshold: settle, pollInterval: Math.min(100, settle) },
      usePolling: WATCH.POLL,
      interval: WATCH.POLL_INTERVAL * 1000,
      binaryInterval: WATCH.POLL_INTERVAL * 1000,
    });
    this.watcher.on('all', (event, path) => {
      if (EVENTS.has(event)) this.onEvent(event as WatchEventName, path);
    });
    this.watcher.on('error', (err) => this.onError(err as NodeJS.ErrnoException));
    await new Promise<void>((done) => this.watcher!.once('ready', () => done()));
    this.log.info({ paths: this.roots, mode: WATCH.POLL ? `poll every ${WATCH.POLL_INTERVAL} s` : 'events' }, 'watching folders');
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.watcher?.close();
    if (this.timer) clearTimeout(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.timer = undefined;
    this.retryTimer = undefined;
    await this.flush();
  }

  /** For chokidar's error event (exposed so the limit message can be checked without filling the limit). */
  onError(err: NodeJS.ErrnoException): void {
    if (err.code === 'ENOSPC') {
      if (this.limitLogged) return;
      this.limitLogged = true;
      this.log.error({ code: err.code, sysctl: 'fs.inotify.max_user_watches' }, watchErrorMessage(err));
      return;
    }
    this.log.warn({ err }, watchErrorMessage(err));
  }

  private onEvent(event: WatchEventName, path: string): void {
    const root = this.rootOf(path);
    if (!root) return;
    let scan = scanForEvent(event, path, root, this.filter, this.opts.probe ?? statProbe);
    if (!scan) return;
    const entry = this.entries.find((e) => e.root === root)!;
    // RECURSIVE false: what is directly in the folder, as a non-recursive watch reports it (notify.rs:169-178).
    if (!entry.recursive && path !== root && dirname(path) !== root) return;
    if (entry.rewrite || entry.filter) {
      // autoscan's order (triggers/inotify/inotify.go:199-205): the path's rewrite, then its filter on the result.
      const rewritten = entry.rewrite ? entry.rewrite(path) : path;
      if (entry.filter && !allowedByEntry(rewritten, entry.filter)) return;
      if (entry.rewrite) scan = { ...scan, path: { ...scan.path, path: entry.rewrite(scan.path.path) } };
    }
    this.log.debug({ event, path }, 'watch event');
    const gathered = { event, scan, priority: entry.priority, routing: entry.routing };
    this.pending.set(pendingKey(gathered), gathered);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.opts.batchMs ?? 250);
  }

  private rootOf(path: string): string | undefined {
    return this.roots.filter((r) => path === r || path.startsWith(r.endsWith('/') ? r : `${r}/`)).sort((a, b) => b.length - a.length)[0];
  }

  /** Queues what was gathered; one commit per batch, after the previous batch's. */
  private flush(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.flushing = this.flushing
      .then(() => (batch.length ? this.queue(batch) : undefined))
      .catch((err: unknown) => this.log.error({ err }, 'watch: could not queue scans'));
    return this.flushing;
  }

  private async queue(batch: Gathered[]): Promise<void> {
    const { config, intake } = this.opts;
    const { requests, skipped } = resolveEach(
      batch.map(({ event, scan, priority, routing }) => ({ source: 'Watch', event, updateType: scan.updateType, path: scan.path, ...(priority ? { priority } : {}), ...routing })),
      config,
    );
    for (const s of skipped) {
      if (s.why === 'ignored') this.log.info({ path: s.path }, `not scanning ${s.path}: ${s.reason}`);
      else this.log.warn({ path: s.path }, `not scanning watched path ${s.path}: ${s.reason}`);
    }
    if (!requests.length) return;
    try {
      const results = await intake.enqueue(requests);
      this.log.info(
        { events: batch.length, folders: results.map((r) => r.folder), status: results.map((r) => r.status) },
        `watch: ${batch.length} change(s); ${requests.length} scan request(s) queued`,
      );
    } catch (err) {
      if (!isDiskFull(err)) {
        this.log.error({ err, folders: requests.map((r) => r.folder) }, 'watch: could not queue scans');
        return;
      }
      // The change is not seen again once missed: it waits here (a newer event for the same folder wins) until
      // the queue has room, as an HTTP sender told 503 sends again.
      for (const g of batch) if (!this.pending.has(pendingKey(g))) this.pending.set(pendingKey(g), g);
      const retryMs = this.opts.diskFullRetryMs ?? 60_000;
      this.log.warn({ folders: requests.map((r) => r.folder), retryInS: retryMs / 1000 }, `watch: the queue's disk is full: ${requests.length} scan request(s) are kept and queued again in ${retryMs / 1000} s`);
      if (this.closed) return;
      this.retryTimer ??= setTimeout(() => {
        this.retryTimer = undefined;
        void this.flush();
      }, retryMs);
      this.retryTimer.unref?.();
    }
  }
}
