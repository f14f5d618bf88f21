import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NormalizedScanRequest, ScanItem, Source, UpdateType } from '../core/scan.ts';
import { UserError } from '../core/errors.ts';
import { relativeTo } from '../paths/mapping.ts';
import { routeNames } from './route.ts';
import type { DeliveryRow, PartRow, QueueEntry, ScanRow } from './types.ts';

/** A scan row as a target receives it (the same for every store). */
export function toItem(row: ScanRow, files: string[], attempt: number, fileChecks: number): ScanItem {
  return {
    id: Number(row.id),
    folder: row.folder,
    files,
    moreFiles: Number(row.files_more),
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
    ...(isItemAction(row.action) ? { action: row.action } : {}),
  };
}

/**
 * A scan row as the dashboard and the JSON API show it: `files`, the first of its sample; `sampleSize`, how
 * many the sample holds (with files_more, the count of every name its requests sent).
 */
export function toEntry(row: ScanRow, files: string[], sampleSize: number, deliveries: DeliveryRow[]): QueueEntry {
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
    fileCount: sampleSize + Number(row.files_more),
    deliveries,
    ...(row.targets ? { targets: routeNames(row.targets) } : {}),
    ...(isItemAction(row.action) ? { action: row.action } : {}),
    // SERVER_WAIT_FOR_FILES (queue/file-wait.ts): looked for again at its due time.
    ...(row.status === 'pending' && row.files_wait_since !== null && row.files_wait_since !== undefined ? { waiting: 'its files are not on disk yet (SERVER_WAIT_FOR_FILES)' } : {}),
  };
}

/**
 * The parts of a failed scan as requests of their own, each with the files of the scan below its folder;
 * `removal`: the scan was a removal scan, and its parts stay removals.
 */
export function partRequests(parts: readonly PartRow[], files: readonly string[], removal = false, route: string | null = null, action: string | null = null): NormalizedScanRequest[] {
  // The scan's route: every part was routed alike (scans of different routes never merge).
  const targets = routeNames(route);
  return parts.map((p) => ({
    folder: p.folder,
    files: files.filter((f) => (relativeTo(f, p.folder) ?? '') !== ''),
    source: p.source as Source,
    event: p.event,
    title: p.title ?? undefined,
    ids: p.ids ? JSON.parse(p.ids) : undefined,
    updateType: p.update_type as UpdateType,
    priority: p.priority,
    ...(removal ? { removal } : {}),
    ...(targets ? { targets } : {}),
    ...(isItemAction(action) ? { action } : {}),
  }));
}

/** A stored action other than a scan (scans.action); anything else (NULL, an unknown word) is a scan. */
function isItemAction(action: string | null | undefined): action is 'refresh' | 'analyze' {
  return action === 'refresh' || action === 'analyze';
}

/** A store's numbered SQL migrations (`<n>_<name>.sql`), in order. */
export function migrationFiles(dir: string): Array<{ version: number; name: string; sql: string }> {
  return readdirSync(dir)
    .filter((f) => /^\d+_.*\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number.parseInt(f, 10), name: f, sql: readFileSync(join(dir, f), 'utf8') }));
}

/**
 * A queue a newer release wrote (a schema_migrations row above every migration this release has) is refused:
 * this release would read rows whose meaning it does not know (an older relay merged a request into a removal
 * scan it did not understand). `where` names the file or database, never a password. Undefined when it is known.
 */
export function newerSchemaError(where: string, applied: Iterable<number>, known: ReadonlyArray<{ version: number }>): UserError | undefined {
  const newest = Math.max(0, ...applied);
  const knows = Math.max(0, ...known.map((m) => m.version));
  if (newest <= knows) return undefined;
  return new UserError(
    `${where} was written by a newer scanrelay (schema ${newest}; this one knows ${knows}): start that release again, ` +
      `or restore the copy kept from before the upgrade (docs/upgrading.md)`,
  );
}
