import { z } from 'zod';
import { sourceSchema, type ScanAction, type Target } from '../../core/scan.ts';
import type { DriveStatus, NotificationHealth, SetupProblem } from '../../core/status.ts';
import { scanFolderFor } from '../../paths/folder.ts';
import { mapIncomingPath } from '../../paths/rewrite.ts';
import { ignoredBy } from '../../paths/rules.ts';
import { invalidMappedPath, invalidRequestPath } from '../../paths/validate.ts';
import { invalidText } from '../../core/text.ts';
import type { QueueEntry } from '../../queue/store.ts';
import type { RunningRelay } from '../../queue/backend.ts';
import type { AppDeps } from '../deps.ts';
import { removalScanLabel } from '../../queue/scheduler.ts';
import { scanState, shownRoute } from '../../queue/state.ts';

/** The relay's target names, whose full list a shown route leaves out (scanView). */
export function relayTargetNames(deps: Pick<AppDeps, 'targets' | 'config'>): string[] {
  return deps.targets ? deps.targets.map((t) => t.name) : [...deps.config.targets.keys()];
}

/** scanView for a relay with these targets: a route naming all of them is shown as none (null), as before routes were stored. */
export const scanViewOf = (every: readonly string[]) => (e: QueueEntry) => viewOf(e, every);

/** One scan as the JSON API and the dashboard show it. Times are epoch milliseconds. */
export function scanView(e: QueueEntry) {
  return viewOf(e, []);
}

function viewOf(e: QueueEntry, every: readonly string[]) {
  const action: ScanAction = e.action ?? 'scan';
  return {
    id: e.id,
    folder: e.folder,
    status: e.status as 'pending' | 'active' | 'done' | 'failed',
    /** What it is doing: pending, sending, "waiting to retry" (after an error), "waiting for its turn", done, failed. */
    state: scanState(e).state,
    /** The same as a line, with the reason when it waits to retry: "waiting to retry (Plex refused the token (401))". */
    stateText: scanState(e).text,
    source: e.source,
    event: e.event,
    title: e.title,
    /** The first files (a list shows LIST_FILES; GET queue/{id}/files pages through the rest). */
    files: e.files,
    fileCount: e.fileCount,
    requests: e.requests,
    /** What the scan stands for when the folder alone does not say it (a library root scan for removed items). */
    what: e.removal ? removalScanLabel(e.requests) : null,
    priority: e.priority,
    requestedAt: e.firstAt,
    lastRequestAt: e.lastAt,
    dueAt: e.dueAt,
    finishedAt: e.finishedAt,
    /** From the first request to the end of the last delivery. */
    tookMs: e.finishedAt === null ? null : Math.max(0, e.finishedAt - e.firstAt),
    /** Why a scan that is due still waits (a shared queue with no relay that has a target), else null. */
    waiting: e.waiting ?? null,
    /** The targets it was routed to when queued (docs/targets.md); null: every target. A pending scan has no deliveries yet. */
    targets: shownRoute(e.targets, every),
    /** What each target is asked to do: scan the folder, or refresh or analyze the items at its files (docs/targets.md). */
    action,
    deliveries: e.deliveries.map((d) => ({
      /** The delivery's name in the queue: plex, jellyfin, emby; on a shared queue the server's, plex@<its id>. */
      target: d.target,
      /** The server as people read it: plex, or on a shared queue "plex (Living Room)". */
      name: d.label ?? d.target,
      /** Waiting, and no running relay has this server: it goes once one is back (a shared queue). */
      unserved: d.unserved ?? false,
      status: d.status,
      attempts: d.attempts,
      nextAt: d.status === 'waiting' ? d.next_at : null,
      lastError: d.last_error,
      detail: d.detail,
      finishedAt: d.finished_at,
      /** The relay that sent it (a queue shared in PostgreSQL), else null. */
      relay: d.relay ?? null,
    })),
  };
}
export type ScanView = ReturnType<typeof viewOf>;

/** The most a list answer of the JSON API holds, in bytes of JSON: a page stops early rather than grow past it. */
export const PAGE_BYTES = 1024 * 1024;

/**
 * The items of a page that fit in `budget` bytes of JSON (at least one, so paging always moves on), and
 * whether any were left out for it.
 */
export function withinBytes<T>(items: readonly T[], budget = PAGE_BYTES): { items: T[]; cut: boolean } {
  let bytes = 0;
  const out: T[] = [];
  for (const item of items) {
    bytes += JSON.stringify(item).length + 1;
    if (out.length > 0 && bytes > budget) return { items: out, cut: true };
    out.push(item);
  }
  return { items: out, cut: false };
}

export const historyQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  status: z.enum(['done', 'failed']).optional(),
  source: sourceSchema.optional(),
  // A NUL byte cannot be searched for in PostgreSQL (and no stored folder has one): a 400, not a 500.
  text: z
    .string()
    .max(4096)
    .superRefine((value, ctx) => {
      const problem = invalidText(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
});
export type HistoryQuery = z.infer<typeof historyQuerySchema>;

/** Query strings from an HTML form send empty fields for "any"; those mean "no filter". */
export function dropEmpty(query: unknown): Record<string, unknown> {
  if (!query || typeof query !== 'object') return {};
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== '' && v !== undefined));
}

export interface MapPreview {
  input: string;
  /** Why the path would be rejected (400), when it would be. */
  problem: string | null;
  mapped: string | null;
  match: { key: string; value: string } | null;
  folder: string | null;
  ignored: string | null;
  section: { target: string; id: string; title: string; location: string } | null;
  sectionError: string | null;
}

/**
 * What a manual request for `input` would do, without queueing it: the same checks, mapping and folder
 * choice as resolveIntent, plus the Plex section that holds the folder (asked through the Plex target).
 */
export async function mapPreview(
  input: string,
  deps: Pick<AppDeps, 'config' | 'probe' | 'targets' | 'libraries'>,
  timeoutMs = 3000,
  noSection: NoSectionCache = new NoSectionCache(),
): Promise<MapPreview> {
  const out: MapPreview = { input, problem: null, mapped: null, match: null, folder: null, ignored: null, section: null, sectionError: null };
  out.problem = invalidRequestPath(input) ?? null;
  if (out.problem) return out;
  const mapped = mapIncomingPath(deps.config, input);
  out.mapped = mapped.path;
  out.match = mapped.match ?? null;
  out.problem = invalidMappedPath(mapped.path) ?? null;
  if (out.problem) return out;
  out.ignored = ignoredBy(deps.config.SERVER_IGNORE_LIST, mapped.path) ?? null;
  const roots = [...Object.keys(deps.config.SERVER_PATH_MAPPINGS), ...(deps.libraries ? (await deps.libraries.check([])).roots : [])];
  out.folder = scanFolderFor(mapped.path, deps.config.SERVER_FILE_EXIST_PATH_MAPPINGS, deps.probe, roots);
  const plex = deps.targets?.find((t) => t.sections);
  if (!plex?.sections) {
    out.sectionError = 'no Plex target is enabled';
    return out;
  }
  // The cache is kept by the folder as Plex names it (its REWRITE); sections.find rewrites it the same way.
  const plexFolder = plex.toTargetPath ? plex.toTargetPath(out.folder) : out.folder;
  if (noSection.has(plexFolder)) {
    out.sectionError = NO_SECTION;
    return out;
  }
  try {
    const section = await withTimeout(plex.sections.find(out.folder), timeoutMs, 'Plex did not answer the section list in time');
    if (section) out.section = { target: plex.name, ...section };
    else {
      out.sectionError = NO_SECTION;
      noSection.add(plexFolder);
    }
  } catch (err) {
    out.sectionError = (err as Error).message;
  }
  return out;
}

const NO_SECTION = 'no Plex section location holds this folder';

/**
 * Folders the preview found in no Plex section, remembered for a minute: a miss makes Plex's section list
 * be fetched again, and the preview asks on every keystroke. Bounded: the oldest entries go first.
 */
export class NoSectionCache {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly ttlMs = 60_000,
    private readonly max = 1000,
  ) {}

  has(folder: string, now = Date.now()): boolean {
    const t = this.until.get(folder);
    if (t === undefined) return false;
    if (t > now) return true;
    this.until.delete(folder);
    return false;
  }

  add(folder: string, now = Date.now()): void {
    if (this.until.size >= this.max) this.until.delete(this.until.keys().next().value!);
    this.until.set(folder, now + this.ttlMs);
  }
}

export interface StatusView {
  targets: Array<{ name: string; ok: boolean; error?: string; note?: string }>;
  /** What the start-up check found wrong with the set-up, each naming the key to fix. */
  problems?: readonly SetupProblem[];
  queue: { pending: number; active: number };
  drive: DriveStatus;
  /** Why every scan is held, when it is (the mount guard: SERVER_ANCHOR_FILES missing). */
  held?: { reason: 'mount guard'; missing: string[] } | null;
  /** Disks below SERVER_DISK_MIN_FREE (`holds`: an anchor's, which holds every scan; else the queue file's). */
  fullDisks?: ReadonlyArray<{ path: string; freeBytes: number; holds: boolean }>;
  /** The relays sharing the queue (PostgreSQL) that run now, with their servers; absent with SQLite. */
  relays?: RunningRelay[];
  /** Each NOTIFICATIONS destination's health; absent when none is configured. */
  notifications?: readonly NotificationHealth[];
}

/** Target reachability is asked at most every `maxAgeMs`, so open dashboards do not hammer the media server. */
export function statusSource(deps: Pick<AppDeps, 'store' | 'targets' | 'driveStatus' | 'setupProblems' | 'holdStatus' | 'notifications'>, maxAgeMs = 5000, timeoutMs = 3000) {
  let cached: { at: number; value: Promise<StatusView['targets']> } | undefined;
  const reachability = (targets: readonly Target[]) =>
    Promise.all(
      targets.map(async (t) => {
        try {
          const r = await withTimeout(t.available(), timeoutMs, `no answer within ${timeoutMs / 1000} s`);
          return { name: t.name, ok: r.ok, ...(r.error ? { error: r.error } : {}), ...(r.note ? { note: r.note } : {}) };
        } catch (err) {
          return { name: t.name, ok: false, error: (err as Error).message };
        }
      }),
    );
  return async (): Promise<StatusView> => {
    if (!cached || Date.now() - cached.at > maxAgeMs) cached = { at: Date.now(), value: reachability(deps.targets ?? []) };
    const counts = await deps.store.view.counts();
    const relays = await deps.store.shared?.relays();
    const hold = deps.holdStatus?.();
    const notifications = deps.notifications?.() ?? [];
    return {
      targets: await cached.value,
      problems: deps.setupProblems?.() ?? [],
      queue: { pending: counts.pending ?? 0, active: counts.active ?? 0 },
      drive: deps.driveStatus?.() ?? { state: 'off' },
      held: hold?.held ? { reason: 'mount guard', missing: hold.missing } : null,
      ...(hold?.fullDisks?.length ? { fullDisks: hold.fullDisks } : {}),
      ...(relays ? { relays } : {}),
      ...(notifications.length ? { notifications } : {}),
    };
  };
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
