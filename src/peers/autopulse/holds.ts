import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { FileHasher, HASH_FILE_TIME_LIMIT_MS, type FileHasherOptions } from '../../fs/file-hash.ts';
import { scanIntentSchema, type ScanIntent } from '../../intake/intent.ts';
import { PathProblem } from '../../intake/resolve.ts';
import { submitIntent } from '../../intake/submit.ts';
import type { Logger } from '../../core/logger.ts';
import type { LibraryPlace } from '../../paths/library.ts';
import { MetaConflictError, type QueueMetaStore } from '../../queue/backend.ts';
import { autopulseTitle } from './names.ts';
import type { PluginDeps } from '../../server/deps.ts';
import { hashDiskPath, hashPlaces } from '../../server/library-places.ts';

/*
 * autopulse keeps a manual request whose file does not match its `hash` as a row of its queue, pending, and
 * checks it again on every run until it matches (service/src/runner.rs:37-144); rows still not_found are deleted
 * `cleanup_days` after they were made (runner.rs:332-347). Here such a request is a held request in the queue's
 * `meta` table (both stores have it), so a restart loses nothing, and several relays on one PostgreSQL queue
 * release it once: the release queues the scan and marks the hold in one commit, compare-and-set on the hold.
 */

export const HOLD_PREFIX = 'autopulse.hold.';
/** Open holds at most; beyond, a request is refused (503) rather than held without bound. */
export const MAX_HOLDS = 10_000;
const DAY_MS = 86_400_000;

const holdSchema = z.object({
  id: z.string(),
  trigger: z.string(),
  path: z.string(),
  hash: z.string(),
  /** autopulse's found_status while held: the file is missing, or there and another sha256. */
  found: z.enum(['not_found', 'hash_mismatch', 'found']),
  createdAt: z.number(),
  updatedAt: z.number(),
  foundAt: z.number().nullable(),
  /** The scan it became, once the file matched (kept so /status/<id> keeps answering). */
  scanId: z.number().optional(),
  /** That scan's folder when it was queued: a scan of another folder under the same number is not it. */
  scanFolder: z.string().optional(),
  intent: scanIntentSchema,
});
export type Hold = z.infer<typeof holdSchema>;

export function parseHold(value: string | undefined): Hold | undefined {
  if (value === undefined) return undefined;
  try {
    const r = holdSchema.safeParse(JSON.parse(value));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** How long a client's request waits for its file's hash before it is answered as held (the hash goes on). */
export const REQUEST_HASH_WAIT_MS = 2_000;
/** How long a sweep waits for the targets' library folders (cached; a server that is down is not asked again at once). */
const PLACES_WAIT_MS = 30_000;

/** What a sweep does with one hold (pure): expired holds go, as autopulse's cleanup deletes its rows. */
export function holdExpired(h: Pick<Hold, 'createdAt'>, now: number, cleanupDays: number): boolean {
  return now - h.createdAt > cleanupDays * DAY_MS;
}

export class TooManyHolds extends Error {}

/**
 * Rows taken over from autopulse's queue (import-autopulse), recorded as requests already released to their scan:
 * /status/<uuid> answers for each as autopulse did, and the sweep drops them after SERVER_AUTOPULSE_CLEANUP_DAYS.
 */
export async function recordTakenOver(
  meta: Pick<QueueMetaStore, 'set'>,
  rows: ReadonlyArray<{ uuid: string; trigger: string; path: string; scanId: number; folder: string }>,
  now = Date.now(),
): Promise<void> {
  for (const r of rows) {
    const intent: ScanIntent = { kind: 'scan', source: 'API', event: 'autopulse takeover', title: autopulseTitle(r.trigger), updateType: 'Modified', paths: [{ path: r.path, kind: 'guess' }] };
    const h: Hold = { id: r.uuid, trigger: r.trigger, path: r.path, hash: '', found: 'found', createdAt: now, updatedAt: now, foundAt: now, scanId: r.scanId, scanFolder: r.folder, intent };
    await meta.set(HOLD_PREFIX + h.id, JSON.stringify(h));
  }
}

/**
 * The held requests of one relay's routes: `hold` writes one, a sweep every SERVER_FILE_CHECK_DELAY seconds hashes
 * each open one and releases those that match (all of them when file checks are turned off, as autopulse ignores the
 * hash without check_path), and drops what is older than SERVER_AUTOPULSE_CLEANUP_DAYS.
 */
export class HashHolds {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private closed = false;
  private open = 0;
  /** Holds written by this relay so far: those written while a sweep runs are not in what it read. */
  private added = 0;
  private readonly hasher: FileHasher;
  private readonly fileTimeLimitMs: number;
  /** Resolved by close(): a sweep stops waiting for the targets' libraries. */
  private readonly stopped: Promise<void>;
  private stop!: () => void;

  constructor(
    private readonly deps: PluginDeps,
    private readonly log: Logger,
    hashing: FileHasherOptions = {},
  ) {
    this.hasher = new FileHasher(hashing);
    this.fileTimeLimitMs = hashing.fileTimeLimitMs ?? HASH_FILE_TIME_LIMIT_MS;
    this.stopped = new Promise((resolve) => (this.stop = resolve));
  }

  /**
   * utils/src/checksum.rs: the sha256 (lower-case hex) of the file a request of a trigger going to `targets` named;
   * undefined when it is not there, not a regular file, not inside a known library (then nothing is read), or not
   * hashed within `waitMs`. All four look the same to the client.
   */
  async sha256(path: string, targets: readonly string[] | undefined, opts: { waitMs: number; first?: boolean; places?: LibraryPlace[] }): Promise<string | undefined> {
    const until = Date.now() + opts.waitMs;
    // The targets' libraries are cached; a server slow to list them (down, hanging) counts against the same wait.
    // (The config's own folders are known at once.)
    const places = opts.places ?? (await hashPlaces(this.deps.config, this.deps.libraries, targets, { ms: opts.waitMs, stop: this.stopped }));
    const disk = hashDiskPath(path, places, this.deps.config);
    if (disk === undefined) return undefined;
    const answer = await this.hasher.hash(disk, { waitMs: Math.max(0, until - Date.now()), ...(opts.first ? { first: true } : {}) });
    return answer.kind === 'digest' ? answer.hex : undefined;
  }

  /** Counts the open holds a previous run left, before the routes answer, then checks them at once. */
  async start(): Promise<void> {
    const left = await this.deps.store.meta.list(HOLD_PREFIX);
    this.open = left.filter(([, v]) => {
      const h = parseHold(v);
      return h !== undefined && h.scanId === undefined && h.found !== 'found';
    }).length;
    this.schedule(0);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    // Every hash the sweep waits for is answered at once: close() never waits for a file or a server.
    this.stop();
    this.hasher.close();
    await this.sweeping;
  }

  async get(id: string): Promise<Hold | undefined> {
    return parseHold(await this.deps.store.meta.get(HOLD_PREFIX + id));
  }

  async hold(trigger: string, path: string, hash: string, found: 'not_found' | 'hash_mismatch', intent: ScanIntent): Promise<Hold> {
    if (this.open >= MAX_HOLDS) throw new TooManyHolds(`${MAX_HOLDS} requests are held for their hash already; send this one again once some are scanned`);
    const now = Date.now();
    const h: Hold = { id: randomUUID(), trigger, path, hash, found, createdAt: now, updatedAt: now, foundAt: found === 'hash_mismatch' ? now : null, intent };
    await this.deps.store.meta.set(HOLD_PREFIX + h.id, JSON.stringify(h));
    this.open++;
    this.added++;
    return h;
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.sweeping = this.sweep()
        .catch((err: unknown) => this.log.error({ err }, 'held requests could not be checked; trying again'))
        .finally(() => {
          this.sweeping = undefined;
          // A delay of 0 would spin: 10 ms at least between two passes.
          this.schedule(Math.max(10, this.deps.config.SERVER_FILE_CHECK_DELAY * 1000));
        });
    }, ms);
    this.timer.unref?.();
  }

  /** One pass over every hold, this relay's and those another relay on the same queue took. */
  private async sweep(): Promise<void> {
    const { config, store } = this.deps;
    const addedBefore = this.added;
    let open = 0;
    const rows = await store.meta.list(HOLD_PREFIX);
    // Every open hold's file is asked for at once: the hasher reads a few at a time, and the pass waits for none
    // longer than a file's time limit, so a hung mount or a huge file never stalls it.
    const sums = new Map<string, Promise<string | undefined>>();
    if (config.SERVER_FILE_CHECKS_ENABLED) {
      const placesFor = new Map<string, Promise<LibraryPlace[]>>();
      for (const [key, value] of rows) {
        const h = parseHold(value);
        if (!h || h.scanId !== undefined || h.found === 'found') continue;
        const targets = h.intent.targets;
        const which = targets ? JSON.stringify(targets) : '*';
        let places = placesFor.get(which);
        // A server that never lists its libraries leaves them unknown for this pass: nothing there is read.
        if (!places) placesFor.set(which, (places = hashPlaces(config, this.deps.libraries, targets, { ms: PLACES_WAIT_MS, stop: this.stopped })));
        const sum = places.then((p) => this.sha256(h.path, targets, { waitMs: this.fileTimeLimitMs + 1_000, places: p }));
        sum.catch(() => undefined);
        sums.set(key, sum);
      }
    }
    for (const [key, value] of rows) {
      if (this.closed) return;
      const h = parseHold(value);
      const now = Date.now();
      if (!h) {
        this.log.warn({ key }, 'a held request could not be read; dropped');
        await store.meta.set(key, null);
        continue;
      }
      const expired = holdExpired(h, now, config.SERVER_AUTOPULSE_CLEANUP_DAYS);
      if (h.scanId !== undefined || h.found === 'found') {
        if (expired) await store.meta.set(key, null);
        continue;
      }
      // Checked once more before it expires, as autopulse's run checks its files before its cleanup (runner.rs:373-375).
      const actual = config.SERVER_FILE_CHECKS_ENABLED ? await sums.get(key) : h.hash;
      if (actual === h.hash) {
        await this.release(key, value, h);
        continue;
      }
      if (expired) {
        this.log.warn({ trigger: h.trigger, path: h.path, expected: h.hash, found: h.found }, 'held request expired: its file never matched its hash, and it was not scanned');
        await store.meta.set(key, null);
        continue;
      }
      open++;
      // Only the first mismatch is written, as autopulse persists only that transition (runner.rs:89-100).
      if (actual !== undefined && h.found === 'not_found') {
        await store.meta.set(key, JSON.stringify({ ...h, found: 'hash_mismatch', foundAt: now, updatedAt: now }));
      }
    }
    this.open = open + (this.added - addedBefore);
  }

  private async release(key: string, value: string, h: Hold): Promise<void> {
    const now = Date.now();
    const released = { ...h, found: 'found' as const, foundAt: now, updatedAt: now };
    try {
      const result = await submitIntent(h.intent, this.deps, this.log, 'hash check', { meta: { [key]: JSON.stringify(released) }, expect: { [key]: value } });
      const scan = result.scans.find((s) => s.status !== 'ignored');
      if (!scan || !('id' in scan)) {
        this.log.warn({ trigger: h.trigger, path: h.path, reason: result.scans[0] && 'reason' in result.scans[0] ? result.scans[0].reason : undefined }, 'held request matched its hash but goes to no target: not scanned');
        await this.deps.store.meta.set(key, null);
        return;
      }
      await this.deps.store.meta.set(key, JSON.stringify({ ...released, scanId: scan.id, scanFolder: scan.folder }));
      this.log.info({ trigger: h.trigger, path: h.path, scan: scan.id }, 'held request matched its hash: queued');
    } catch (err) {
      if (err instanceof MetaConflictError) return; // another relay on the shared queue released it
      if (err instanceof PathProblem) {
        this.log.warn({ trigger: h.trigger, path: h.path, err: err.message }, 'held request matched its hash but its path was refused: not scanned');
        await this.deps.store.meta.set(key, null);
        return;
      }
      throw err;
    }
  }
}
