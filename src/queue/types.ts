/** Row and result shapes shared by the queue store and its batched enqueue (kept apart so neither imports the other). */

export type EnqueueStatus = 'queued' | 'merged';

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

export interface ScanRow {
  id: number;
  folder: string;
  status: string;
  priority: number;
  source: string;
  event: string;
  title: string | null;
  ids: string | null;
  update_type: string;
  requests: number;
  upgrade: number;
  first_at: number;
  last_at: number;
  due_at: number;
  finished_at: number | null;
}
