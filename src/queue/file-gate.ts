import type { Logger } from '../core/logger.ts';
import type { QueueBackend } from './backend.ts';
import type { FileVerdict, FileWaitCheck, FileWaitPolicy } from './file-wait.ts';
import { routeNames } from './route.ts';

/** One path on the relay's disk: there, missing, or `outside` every library folder the relay knows (never looked at). */
export type FileAnswer = 'there' | 'missing' | 'outside';

/**
 * Looks at the relay's disk for the scans routed to `route` (undefined: every target): the library folders those
 * targets know are read once, then each path answers. Wired by the server (server/file-look.ts), which confines it.
 */
export type FileLook = (route: readonly string[] | undefined) => Promise<(path: string) => Promise<FileAnswer>>;

/** Paths of one scan looked at side by side at most. */
const LOOKS_AT_ONCE = 16;

/**
 * SERVER_WAIT_FOR_FILES' look at the disk, before each activation (Scheduler.tick): every due scan that waits for
 * files has its files (or its folder) looked for, outside the queue's transaction; activation then applies the
 * rule (queue/file-wait.ts) to what was found. A path that does not answer within `lookTimeoutMs` (a hung mount)
 * counts as missing.
 */
export class FileGate {
  /** Scans whose wait was logged (once each, and once when it ends). */
  private readonly waiting = new Set<number>();

  constructor(
    private readonly look: FileLook,
    readonly policy: FileWaitPolicy,
    private readonly log: Logger,
    private readonly lookTimeoutMs = 10_000,
  ) {}

  async pass(store: Pick<QueueBackend, 'dueWaitingForFiles'>, now: number): Promise<FileWaitCheck> {
    const scans = await store.dueWaitingForFiles(now);
    const verdicts = new Map<number, FileVerdict>();
    for (const s of scans) {
      const paths = s.files.length ? s.files : [s.folder];
      const at = await this.look(routeNames(s.targets));
      const answers = await inBatches(paths, LOOKS_AT_ONCE, (p) => this.timed(at(p), p));
      const missing = paths.filter((_, i) => answers[i] !== 'there');
      const outside = paths.filter((_, i) => answers[i] === 'outside');
      verdicts.set(s.id, { lastAt: s.lastAt, looked: paths.length, missing, outside });
      const ctx = { scan: s.id, folder: s.folder };
      if (missing.length && !this.waiting.has(s.id)) {
        this.waiting.add(s.id);
        this.log.info({ ...ctx, missing: missing.slice(0, 5), missingCount: missing.length, ...(outside.length ? { outside: outside.slice(0, 5) } : {}) },
          outside.length
            ? 'scan waits for its files (SERVER_WAIT_FOR_FILES); some are outside every library folder the relay knows and are never looked at: add their folder to SERVER_FILE_EXIST_PATH_MAPPINGS'
            : 'scan waits for its files to appear on disk before any target gets it (SERVER_WAIT_FOR_FILES)');
      } else if (!missing.length && this.waiting.delete(s.id)) {
        this.log.info(ctx, 'its files appeared: the scan goes to its targets');
      } else if (missing.length) {
        this.log.debug({ ...ctx, missingCount: missing.length }, 'files still missing');
      }
      if (missing.length === paths.length && s.since !== null && now - s.since >= this.policy.giveUpMs) this.waiting.delete(s.id);
    }
    return { policy: this.policy, verdicts };
  }

  private timed(answer: Promise<FileAnswer>, path: string): Promise<FileAnswer> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<FileAnswer>((resolve) => {
      timer = setTimeout(() => {
        this.log.warn({ path, afterMs: this.lookTimeoutMs }, 'the disk did not answer whether a file is there (a hung mount?): it counts as missing');
        resolve('missing');
      }, this.lookTimeoutMs);
      timer.unref?.();
    });
    return Promise.race([answer.catch((): FileAnswer => 'missing'), late]).finally(() => clearTimeout(timer));
  }
}

async function inBatches<T, R>(items: readonly T[], size: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(f))));
  return out;
}
