import { createHash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, open, stat } from 'node:fs/promises';

/** What a hash job found: the file's sha256, no regular file there (or none may be read), or no answer in time. */
export type HashAnswer = { kind: 'digest'; hex: string } | { kind: 'missing' } | { kind: 'later' };

export interface FileHasherOptions {
  /** Files hashed at once (each holds one of libuv's four pool threads while it reads). */
  jobs?: number;
  /** A job still reading this long after its turn came is given up (answered `later`). */
  fileTimeLimitMs?: number;
  /** Jobs waiting for a turn at most; beyond, a request is answered `later` at once. */
  queueMax?: number;
  /** Digests kept by path, each valid while the file's device, inode, size and times stay the same. */
  cacheEntries?: number;
}

export const HASH_JOBS = 2;
export const HASH_FILE_TIME_LIMIT_MS = 10 * 60_000;
const CHUNK = 1 << 20;
// O_NONBLOCK: opening a FIFO that slipped in between the stat and the open returns at once instead of waiting
// for a writer (and holding a pool thread for good); O_NOCTTY: a terminal never becomes the relay's.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

const LATER: HashAnswer = { kind: 'later' };
const MISSING: HashAnswer = { kind: 'missing' };

/**
 * sha256 of files named by clients (autopulse's `?hash=`), off the request path: at most `jobs` files are read at
 * once, each for at most `fileTimeLimitMs`, and a caller waits only as long as it says. Only a regular file is ever
 * opened: the path is lstat'ed (and a symlink stat'ed) first, so a FIFO, a device, a socket or a folder is answered
 * `missing` without an open, and the open file is fstat'ed again before its first read. A job stuck in the kernel
 * (a hung mount) keeps its turn until the read returns, so stuck reads never take more than `jobs` pool threads;
 * the callers are answered `later` all the same. Two callers asking for one path share its job.
 */
export class FileHasher {
  private readonly jobs: number;
  private readonly limitMs: number;
  private readonly queueMax: number;
  private readonly cacheEntries: number;
  private running = 0;
  /** Jobs waiting for a turn: called with true when a turn is handed over, false when the hasher closes. */
  private readonly waiting: Array<(turn: boolean) => void> = [];
  private readonly inflight = new Map<string, Promise<HashAnswer>>();
  private readonly cache = new Map<string, { key: string; hex: string }>();
  /** Callers still waiting: close() answers them all. */
  private readonly callers = new Set<() => void>();
  private closed = false;

  constructor(opts: FileHasherOptions = {}) {
    this.jobs = Math.max(1, opts.jobs ?? HASH_JOBS);
    this.limitMs = opts.fileTimeLimitMs ?? HASH_FILE_TIME_LIMIT_MS;
    this.queueMax = opts.queueMax ?? 20_000;
    this.cacheEntries = opts.cacheEntries ?? 1_000;
  }

  /** Files being read now (for tests and figures). */
  get busy(): number {
    return this.running;
  }

  /**
   * The file's sha256, waiting at most `waitMs` (or until `signal` aborts) for it; the job goes on after a caller
   * stops waiting, and its digest is kept for the next ask. `first`: ahead of the jobs already waiting (a client's
   * request before the background sweep's).
   */
  hash(path: string, opts: { waitMs: number; signal?: AbortSignal; first?: boolean }): Promise<HashAnswer> {
    if (this.closed || opts.signal?.aborted) return Promise.resolve(LATER);
    let job = this.inflight.get(path);
    if (!job) {
      if (this.waiting.length >= this.queueMax) return Promise.resolve(LATER);
      job = this.run(path, opts.first ?? false).finally(() => this.inflight.delete(path));
      this.inflight.set(path, job);
    }
    return new Promise<HashAnswer>((resolve) => {
      const done = (answer: HashAnswer) => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', abort);
        this.callers.delete(abort);
        resolve(answer);
      };
      const abort = () => done(LATER);
      this.callers.add(abort);
      const timer = setTimeout(abort, Math.max(0, opts.waitMs));
      timer.unref?.();
      opts.signal?.addEventListener('abort', abort, { once: true });
      job.then(done, () => done(LATER));
    });
  }

  /** No new job starts, running ones stop at their next chunk, and every caller still waiting is answered `later`. */
  close(): void {
    this.closed = true;
    for (const wake of this.waiting.splice(0)) wake(false);
    for (const answer of [...this.callers]) answer();
  }

  private async run(path: string, first: boolean): Promise<HashAnswer> {
    if (this.running >= this.jobs) {
      const turn = await new Promise<boolean>((resolve) => (first ? this.waiting.unshift(resolve) : this.waiting.push(resolve)));
      if (!turn) return LATER;
    } else {
      this.running++;
    }
    // The turn is ours now (handed over by the job that ended, or taken above); the file's time starts here.
    try {
      if (this.closed) return LATER;
      return await this.read(path, Date.now() + this.limitMs);
    } finally {
      const next = this.waiting.shift();
      if (next) next(true);
      else this.running--;
    }
  }

  private async read(path: string, deadline: number): Promise<HashAnswer> {
    const link = await lstat(path).catch(() => undefined);
    if (!link) return MISSING;
    // A symlink is followed (media libraries use them), but what it points at must be a regular file too.
    const target = link.isSymbolicLink() ? await stat(path).catch(() => undefined) : link;
    if (!target?.isFile()) return MISSING;
    const fh = await open(path, OPEN_FLAGS).catch(() => undefined);
    if (!fh) return MISSING;
    try {
      const st = await fh.stat();
      if (!st.isFile()) return MISSING;
      const key = identity(st);
      const hit = this.cache.get(path);
      if (hit?.key === key) return { kind: 'digest', hex: hit.hex };
      const hash = createHash('sha256');
      const buf = Buffer.allocUnsafe(CHUNK);
      for (;;) {
        if (this.closed || Date.now() > deadline) return LATER;
        const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
        if (bytesRead === 0) break;
        hash.update(buf.subarray(0, bytesRead));
      }
      const hex = hash.digest('hex');
      // Keyed on the stat taken before the read: a file written meanwhile is read again next time.
      this.cache.delete(path);
      this.cache.set(path, { key, hex });
      if (this.cache.size > this.cacheEntries) this.cache.delete(this.cache.keys().next().value!);
      return { kind: 'digest', hex };
    } catch {
      return MISSING;
    } finally {
      await fh.close().catch(() => undefined);
    }
  }
}

const identity = (st: Stats) => `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
