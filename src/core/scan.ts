import { z } from 'zod';
import { invalidText, tooLong } from './text.ts';
import type { ScannedItem } from './events.ts';
import type { SetupProblem } from './status.ts';

/**
 * Text the queue keeps as it is answered, on both stores: no NUL byte, no lone surrogate (core/text.ts).
 * A trigger answers 400 before it gets here; this is the queue's own door, for every trigger and command.
 */
const storedText = z.string().superRefine((value, ctx) => {
  const problem = invalidText(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
const storedPath = storedText.superRefine((value, ctx) => {
  const problem = tooLong(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** Where a scan request came from, in the user's words. */
export const sourceSchema = z.enum(['Manual', 'Sonarr', 'Radarr', 'Lidarr', 'Readarr', 'Drive', 'API', 'Watch', 'A-Train']);
export type Source = z.infer<typeof sourceSchema>;

/** What Jellyfin/Emby are told about the path (plex ignores it). */
export const updateTypeSchema = z.enum(['Created', 'Modified', 'Deleted']);
export type UpdateType = z.infer<typeof updateTypeSchema>;

/**
 * What a target is asked to do (issue 39 item 5): `scan` the folder (the default), or `refresh` the metadata or
 * `analyze` the media of exactly the item(s) at the request's files, for a file changed in place (new
 * subtitles, a transcode) that a scan would find nothing new in. Targets without such an action scan.
 */
export const scanActionSchema = z.enum(['scan', 'refresh', 'analyze']);
export type ScanAction = z.infer<typeof scanActionSchema>;

/**
 * What a trigger hands to the queue: a folder as the media server sees it (already mapped), and the
 * file(s) that caused it, when known. Triggers produce these; nothing else crosses into the queue.
 */
export const scanRequestSchema = z.object({
  folder: storedPath.min(1),
  files: z.array(storedPath).default([]),
  source: sourceSchema,
  event: storedText.default('Manual'),
  title: storedText.optional(),
  ids: z.record(storedText, z.union([storedText, z.number()])).optional(),
  updateType: updateTypeSchema.default('Modified'),
  priority: z.number().int().default(0),
  /**
   * Scans a folder above one that is gone (a deleted or renamed-away movie/series folder), so the media
   * server drops what was in it. At a library root the queue keeps it apart from new files (queue/coalesce.ts).
   */
  removal: z.boolean().optional(),
  /**
   * The targets this request may go to (its trigger's TARGETS / EXCLUDE_TARGETS; absent: every target). The
   * queue's intake narrows it by each target's own INCLUDE/EXCLUDE (queue/route.ts) and stores the result with
   * the scan: the scheduler delivers to exactly those.
   */
  targets: z.array(z.string()).optional(),
  /** Seconds before it is due, replacing SERVER_SCAN_DELAY (its trigger's DELAY). */
  delay: z.number().min(0).optional(),
  /** What the targets are asked to do (absent: scan). Scans of different actions never merge (queue/enqueue-batch.ts). */
  action: scanActionSchema.optional(),
});
export type ScanRequest = z.input<typeof scanRequestSchema>;

/** An upgrade of a file (plex_autoscan's "Upgrade" event): it makes the scan empty Plex's trash even with nothing deleted. */
export function isUpgradeEvent(event: string): boolean {
  return /upgrade/i.test(event);
}
export type NormalizedScanRequest = z.output<typeof scanRequestSchema>;

/** A queued scan as the queue hands it to a target. */
export interface ScanItem {
  id: number;
  folder: string;
  /** The files its requests named, up to a bounded sample (the queue's MAX_FILES_PER_SCAN). */
  files: string[];
  /** File names beyond `files` that were not kept (0: `files` is the whole list). */
  moreFiles: number;
  source: Source;
  event: string;
  title: string | null;
  ids: Record<string, string | number>;
  updateType: UpdateType;
  priority: number;
  requests: number;
  /** Any request merged into the scan was an upgrade (isUpgradeEvent). */
  upgrade: boolean;
  /** A library root scan for removed items only (`requests` of them); see queue/coalesce.ts removalApart. */
  removal?: boolean;
  firstAt: number;
  /** This target's attempts so far, including the current one. */
  attempt: number;
  /** File-exists checks this target has already made for the scan (durable; see SERVER_MAX_FILE_CHECKS). */
  fileChecks: number;
  /** `refresh` or `analyze` of the item(s) at its files instead of a scan (absent: a scan). */
  action?: Exclude<ScanAction, 'scan'>;
}

/**
 * Work a target does after its delivery is recorded (scan completion watch, empty trash, analyze, an
 * after-scan command). It never holds back other deliveries. It returns what happened, which replaces the
 * delivery's detail in the history; the signal aborts it when scanrelay stops.
 */
export type AfterDelivery = (signal: AbortSignal) => Promise<string | AfterOutcome>;

/**
 * After-steps' outcome with more than a detail: `items` finds the items the scan added or updated (Plex), for the
 * `scanned` event. The scheduler runs it after a serial target's turn is let go, so the next scan never waits for
 * it, and a failure costs the items, never the delivery.
 */
export interface AfterOutcome {
  detail: string;
  items?: (signal: AbortSignal) => Promise<ScannedItem[]>;
}

/** An after-step's answer as an AfterOutcome (a plain string is its detail). */
export function asOutcome(out: string | AfterOutcome): AfterOutcome {
  return typeof out === 'string' ? { detail: out } : out;
}

/** How one delivery to one target ended. The scheduler reacts to the kind, never to the message. */
export type DeliveryResult =
  | { outcome: 'done'; detail?: string; after?: AfterDelivery }
  /**
   * Try again later: target unavailable. `retryAfterMs` overrides the backoff (e.g. a file check delay);
   * `fileChecks` is the new durable file-check count to store with the delivery. `holdTurn` (a serial target
   * only): the scan keeps the target's turn and is delivered again after the wait, before any other scan of
   * that target (plex_autoscan's scan lock, held while it waits for Plex). `busy` (a serial target only): the
   * server is busy with a scan that is not the relay's; the target's turn stays taken for `retryAfterMs`, the scan
   * goes back to its place in line, and the next scan sent is again the first by priority and age
   * (plex_autoscan's PriorityLock).
   */
  | { outcome: 'retry'; error: string; slow?: boolean; retryAfterMs?: number; countsAsAttempt?: boolean; fileChecks?: number; holdTurn?: boolean; busy?: boolean }
  /** Will never succeed as it stands (no section for the path, bad request): recorded, not retried. */
  | { outcome: 'failed'; error: string };

/** A library section of a server that has them (Plex), and the location in it that holds a folder. */
export interface SectionRef {
  id: string;
  title: string;
  /** The section location that holds the folder, as the server names it. */
  location: string;
}

/** A server's library sections, for the kinds that have them (Plex); asked by the map and the dashboard. */
export interface TargetSections {
  /**
   * The section that holds a folder, given as the relay names it (the target applies its own rewrite); undefined:
   * no section does. Throws when the server cannot be asked.
   */
  find(folder: string): Promise<SectionRef | undefined>;
}

/** What a target is, for the start-up log, the CLI and the dashboard. */
export interface TargetDescription {
  /** Its TYPE: plex, jellyfin, emby, tdarr, ... */
  type: string;
  /** Where its server is, when it has one (a URL). */
  url?: string;
  /** How it is made to scan, when the kind has more than one way (Plex: api or scanner). */
  method?: string;
}

export interface Target {
  /** Stable name stored with each delivery: plex, jellyfin, emby. */
  readonly name: string;
  /**
   * One delivery at a time, and a delivery's after-steps hold the turn until they end (Plex: plex_autoscan's
   * scan lock). Each other target has the scheduler's `concurrency` slots of its own and never waits for this one.
   */
  readonly serial?: boolean;
  /**
   * Its TYPE (plex, jellyfin, ...). A serial target's turn belongs to its server, named by the kind and the server's
   * id: two names for one Plex share it (queue/server-turns.ts). Absent: the name stands for the kind.
   */
  readonly kind?: string;
  /** Where its server is (a URL): the turn's name until identity() tells the server's id. */
  readonly address?: string;
  deliver(item: ScanItem): Promise<DeliveryResult>;
  /**
   * Several scans in as few requests as the kind's API allows (a list of paths: Tdarr's scan-files, Jellyfin's and
   * Emby's Media/Updated; autopulse sends each target its pending events at once, runner.rs:248-292). One result
   * per item, in order: each is recorded, retried and kept in history on its own. Absent: one deliver() each.
   */
  deliverMany?(items: readonly ScanItem[]): Promise<DeliveryResult[]>;
  /** Cheap reachability check for status displays; `note` says how it is being watched (Plex: stream or polling). */
  available(): Promise<{ ok: boolean; error?: string; note?: string }>;
  /** Lets go of long-lived connections (scanrelay stopping). */
  close?(): void;
  /**
   * What the server is scanning now (Plex's /activities), empty when idle; throws when it cannot be asked. A relay
   * that took a serial target's turn over from a relay that died asks it before sending anything.
   */
  scanning?(): Promise<string[]>;
  /**
   * Who the server is: its own id (Plex's machineIdentifier, Jellyfin's and Emby's server Id), the same whichever
   * relay or URL asks, and its name when it tells one. Relays sharing a queue tell "the same server" from
   * "another server" by it. Throws while the server cannot be asked; undefined when it answers but cannot say
   * (no such endpoint, no id in the answer). Absent or undefined: the target's name stands for it.
   */
  identity?(): Promise<{ id: string; name?: string } | undefined>;
  /**
   * The folders this server's libraries live in (Plex section locations, Jellyfin/Emby virtual folders),
   * as the server names them. `fresh` asks the server again instead of a cached list. Throws when the
   * server cannot be asked. Absent: the target does not know its libraries.
   */
  libraryRoots?(fresh?: boolean): Promise<string[]>;
  /**
   * How scans go to this server now and why (Jellyfin/Emby's SCAN_MODE, or what `auto` chose), for the dashboard and
   * /metrics; undefined while it is not known yet. Absent: the kind has one way.
   */
  scanMode?(): { mode: string; why: string } | undefined;
  /**
   * The target's own rewrite (autoscan's per-target `rewrite`): the relay's path as this server names it.
   * Absent: the server sees the relay's path. deliver() applies it itself; the library check asks it.
   */
  toTargetPath?(path: string): string;
  /** What it is (its TYPE and server). Absent: the name says it all. */
  describe?(): TargetDescription;
  /**
   * What its set-up lacks (a token, the scanner, a library), checked once at start: logged, shown on the dashboard,
   * and told with a queued scan while no target can scan. Absent: the kind has no such check and is taken as able.
   */
  setupProblems?(): Promise<SetupProblem[]>;
  /** Its library sections, for the kinds that have them (Plex). */
  readonly sections?: TargetSections;
  /**
   * Its library roots hold a path whatever the case of its ASCII letters (a Windows or UNC server: autopulse's
   * emby `path_match: case_insensitive`, emby.rs:167-170). Absent: compared as written.
   */
  readonly pathsIgnoreCase?: boolean;
  /** The text with this target's secrets taken out (targets/redact.ts), for what is said about it elsewhere. */
  redact?(text: string): string;
}
