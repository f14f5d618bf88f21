import type { ScanAction } from '../core/scan.ts';

/**
 * Files kept per scan (its sample). The targets use them to check, analyze or report single files; a scan
 * with more (ScanItem.moreFiles) is treated as a folder where the whole list matters.
 */
export const MAX_FILES_PER_SCAN = 1000;

/** Files each scan of a list shows (with its count); a scan read alone shows its whole sample. */
export const LIST_FILES = 10;

/** Row and result shapes shared by the queue store, its batched enqueue and its view (kept apart so none imports another). */

/** `unrouted`: no target takes the request (its trigger's TARGETS, each target's INCLUDE/EXCLUDE): not queued. */
export type EnqueueStatus = 'queued' | 'merged' | 'unrouted';

export interface EnqueueResult {
  id: number;
  status: EnqueueStatus;
  folder: string;
  dueAt: number;
}

export interface Timing {
  delayMs: number;
  maxMs: number;
  /**
   * Library roots known to the targets (section locations, virtual folders). A pending scan never stands
   * for a folder across one (coalesce.ts crossesRoot). Absent or empty: nothing is known, nothing is bounded.
   */
  roots?: readonly string[];
}

/** The columns a scan and each request it took in for another folder (scan_parts) have alike. */
interface RequestColumns {
  folder: string;
  priority: number;
  source: string;
  event: string;
  title: string | null;
  ids: string | null;
  update_type: string;
  upgrade: number;
  requests: number;
  first_at: number;
}

/** A row of `scans`. */
export interface ScanRow extends RequestColumns {
  id: number;
  status: string;
  /** File names its requests sent that the sample (scan_files) had no room for. */
  files_more: number;
  last_at: number;
  due_at: number;
  finished_at: number | null;
  /** 1: a library root scan for removed items, kept apart from other scans (coalesce.ts removalApart). */
  removal: number;
  /** A removal scan waits for open scans of new files below it until then at most (coalesce.ts removalHoldUntil). */
  hold_until: number | null;
  /** Its route: the target names it goes to, joined by "," (queue/route.ts); null for every target. */
  targets?: string | null;
  /** What it asks the targets to do (core/scan.ts ScanAction): null for a scan, 'refresh' or 'analyze'. */
  action?: string | null;
  /** Since when it waits for its files to appear on the relay's disk (SERVER_WAIT_FOR_FILES, queue/file-wait.ts); null: never waited. */
  files_wait_since?: number | null;
}

/** A request for another folder that a scan stands for (scan_parts; see EnqueueBatch). */
export interface PartRow extends RequestColumns {
  scan_id: number;
}

export interface DeliveryRow {
  scan_id: number;
  target: string;
  status: 'waiting' | 'sending' | 'done' | 'failed';
  attempts: number;
  next_at: number;
  last_error: string | null;
  detail: string | null;
  finished_at: number | null;
  file_checks: number;
  priority: number;
  /** The relay that claimed it last (a queue shared in PostgreSQL); absent in SQLite. */
  relay?: string | null;
  /** Until when that claim holds (PostgreSQL). */
  lease_until?: number | null;
  /** The server as people read it, "plex (Living Room)" (a queue shared in PostgreSQL). */
  label?: string;
  /** Waiting, and no running relay has this server: it goes once a relay beside it runs again (PostgreSQL). */
  unserved?: boolean;
}

/** A scan as the dashboard and the JSON API show it: the row's own columns, the rest in camelCase and decoded. */
export interface QueueEntry extends Pick<ScanRow, 'id' | 'folder' | 'status' | 'priority' | 'source' | 'event' | 'title' | 'requests'> {
  ids: Record<string, string | number>;
  updateType: string;
  upgrade: boolean;
  /** A library root scan for removed items only (`requests` of them). */
  removal: boolean;
  firstAt: number;
  lastAt: number;
  dueAt: number;
  finishedAt: number | null;
  /** The first files of the scan's sample (a list shows a few; one scan read alone, the whole sample). */
  files: string[];
  /** Every file name the scan's requests sent: its sample and those that did not fit. */
  fileCount: number;
  deliveries: DeliveryRow[];
  /** The targets it was routed to when queued (docs/targets.md); absent: every target. */
  targets?: string[];
  /** `refresh` or `analyze` of the items at its files; absent: a scan. */
  action?: Exclude<ScanAction, 'scan'>;
  /** Why a scan that is due still waits (a shared queue with no relay that has a target). */
  waiting?: string;
}

export interface HistoryFilter {
  limit?: number;
  offset?: number;
  status?: 'done' | 'failed';
  source?: string;
  text?: string;
}
