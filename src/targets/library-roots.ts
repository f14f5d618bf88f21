import type { Target } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';
import { withinRoots, type LibraryPlace } from '../paths/library.ts';

/** What the enabled targets say about some folders (see LibraryRoots.check). */
export interface LibraryCheck {
  /** Folders in no known library root. */
  outside: string[];
  /** Every known root, for the message. */
  roots: string[];
  /** Targets whose libraries could not be read (down) or that list none: their roots are unknown. */
  unknown: string[];
}

/**
 * The library roots of every enabled target that knows its libraries, cached for `maxAgeMs`. The intake
 * asks it whether a folder lies in a library before queueing (plex_autoscan dropped a path in no
 * section); the queue gets the last known roots so one scan never stands for folders across a root.
 */
export class LibraryRoots {
  private readonly cache = new Map<string, { roots: string[]; at: number }>();
  /** When each target last failed to list its libraries. */
  private readonly failedAt = new Map<string, number>();
  /** A read under way, per target: requests that arrive meanwhile wait for it instead of asking again. */
  private readonly inflight = new Map<string, Promise<string[]>>();

  constructor(
    private readonly targets: readonly Pick<Target, 'name' | 'libraryRoots' | 'toTargetPath' | 'pathsIgnoreCase'>[],
    private readonly log: Logger,
    private readonly maxAgeMs = 60_000,
    /**
     * After a failure, the target is not asked again for this long: while Plex is down, a burst of requests
     * must not become a burst of connection attempts (and waits) on the request path.
     */
    private readonly retryFailedMs = 5_000,
  ) {}

  /** The roots known now (last read), without asking anyone: for the queue's absorption bound. */
  known(): string[] {
    // A target with its own rewrite names its roots in its own terms, not the relay's: they bound nothing here.
    return this.targets.filter((t) => !t.toTargetPath).flatMap((t) => this.cache.get(t.name)?.roots ?? []);
  }

  /**
   * The library folders each of these targets (every target when absent) is known to have, with how it names the
   * relay's paths (its REWRITE): where the relay may look at its own disk on a client's word (paths/library.ts). A
   * target that cannot be asked now brings the folders it had last, or none.
   */
  async places(names?: readonly string[]): Promise<LibraryPlace[]> {
    const read = await this.read(false);
    return this.targets
      .filter((t) => names === undefined || names.includes(t.name))
      .map((t) => {
        const toTarget = t.toTargetPath;
        return { roots: read.byTarget.get(t.name) ?? [], ...(toTarget ? { name: (path: string) => toTarget(path) } : {}), ...(t.pathsIgnoreCase ? { ignoreCase: true } : {}) };
      });
  }

  async check(folders: readonly string[]): Promise<LibraryCheck> {
    let read = await this.read(false);
    const isOutside = (f: string) => !this.targets.some((t) => withinRoots(t.toTargetPath ? t.toTargetPath(f) : f, read.byTarget.get(t.name) ?? [], t.pathsIgnoreCase));
    let outside = folders.filter(isOutside);
    // A library added since the last read: ask again before refusing.
    if (outside.length && read.cached) {
      read = await this.read(true);
      outside = folders.filter(isOutside);
    }
    // No target enabled: nothing to check against, never refuse.
    if (read.roots.length === 0 && read.unknown.length === 0) return { outside: [], roots: [], unknown: [] };
    return { outside, roots: read.roots, unknown: read.unknown };
  }

  private async read(fresh: boolean): Promise<{ roots: string[]; unknown: string[]; cached: boolean; byTarget: Map<string, string[]> }> {
    const all: string[] = [];
    const unknown: string[] = [];
    const byTarget = new Map<string, string[]>();
    let cached = false;
    await Promise.all(
      this.targets.map(async (t) => {
        // Each target's roots are checked against the folder as that target names it (toTargetPath).
        const mine: string[] = [];
        byTarget.set(t.name, mine);
        const roots = { push: (...list: string[]) => (mine.push(...list), all.push(...list)) };
        if (!t.libraryRoots) return unknown.push(t.name);
        const hit = this.cache.get(t.name);
        if (hit && !fresh && Date.now() - hit.at < this.maxAgeMs) {
          cached = true;
          if (hit.roots.length === 0) unknown.push(t.name);
          return roots.push(...hit.roots);
        }
        const failed = this.failedAt.get(t.name);
        if (failed !== undefined && Date.now() - failed < this.retryFailedMs) {
          unknown.push(t.name);
          return roots.push(...(hit?.roots ?? []));
        }
        try {
          // A fresh read (to find a library added since) never settles for a cached one under way.
          const key = `${t.name}\0${fresh}`;
          let pending = this.inflight.get(key);
          if (!pending) {
            pending = t.libraryRoots(fresh).finally(() => this.inflight.delete(key));
            this.inflight.set(key, pending);
          }
          const list = await pending;
          this.cache.set(t.name, { roots: list, at: Date.now() });
          this.failedAt.delete(t.name);
          // A server that lists no library is treated as not knowing: it never causes a refusal.
          if (list.length === 0) unknown.push(t.name);
          roots.push(...list);
        } catch (err) {
          this.failedAt.set(t.name, Date.now());
          this.log.debug({ target: t.name, err: (err as Error).message }, 'cannot read the library roots; not refusing folders on its account');
          const stale = this.cache.get(t.name);
          unknown.push(t.name);
          if (stale) roots.push(...stale.roots);
        }
      }),
    );
    return { roots: [...new Set(all)], unknown, cached, byTarget };
  }
}
