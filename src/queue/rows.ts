import type { ScanItem, Source, UpdateType } from '../core/scan.ts';
import type { DeliveryRow, QueueEntry, ScanRow } from './types.ts';

/** A scan row as a target receives it (the same for every store). */
export function toItem(row: ScanRow, files: string[], attempt: number, fileChecks: number): ScanItem {
  return {
    id: Number(row.id),
    folder: row.folder,
    files,
    source: row.source as Source,
    event: row.event,
    title: row.title,
    ids: row.ids ? JSON.parse(row.ids) : {},
    updateType: row.update_type as UpdateType,
    priority: row.priority,
    requests: row.requests,
    upgrade: row.upgrade === 1,
    removal: row.removal === 1,
    firstAt: Number(row.first_at),
    attempt,
    fileChecks,
  };
}

/** A scan row as the dashboard and the JSON API show it. */
export function toEntry(row: ScanRow, files: string[], deliveries: DeliveryRow[]): QueueEntry {
  return {
    id: Number(row.id),
    folder: row.folder,
    status: row.status,
    priority: row.priority,
    source: row.source,
    event: row.event,
    title: row.title,
    ids: row.ids ? JSON.parse(row.ids) : {},
    updateType: row.update_type,
    requests: row.requests,
    upgrade: row.upgrade === 1,
    removal: row.removal === 1,
    firstAt: Number(row.first_at),
    lastAt: Number(row.last_at),
    dueAt: Number(row.due_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
    files,
    deliveries,
  };
}
