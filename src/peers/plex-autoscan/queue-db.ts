import { existsSync } from 'node:fs';
import { openReadOnly } from '../../db/read-only.ts';
import { UserError } from '../../core/errors.ts';
import type { Config } from '../../config/schema.ts';
import type { ScanRequest, Source } from '../../core/scan.ts';
import type { FolderProbe } from '../../paths/folder.ts';
import { resolveEach } from '../../intake/resolve.ts';

/**
 * plex_autoscan's pending scans: its queue file (default `queue.db`) holds peewee's table
 * `queueitemmodel` (db.py:24-28): id, scan_path (already mapped through SERVER_PATH_MAPPINGS by
 * scan.py before start_scan), scan_for (who asked), scan_section and scan_type (the event). A row
 * stays until its scan is done (scan.py:91-105 restores them all at start).
 *
 * scanrelay's own queue tables have other names, so both can live in the same file.
 */
export interface PlexAutoscanQueueRow {
  id: number;
  scan_path: string;
  scan_for: string;
  scan_section: number;
  scan_type: string;
}

/** The pending rows, oldest first; undefined when the file does not exist or has no queueitemmodel table. */
export function readPlexAutoscanQueue(file: string): PlexAutoscanQueueRow[] | undefined {
  if (!existsSync(file)) return undefined;
  const db = openReadOnly(file, "plex_autoscan's queue");
  try {
    const table = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'queueitemmodel'`).get();
    if (!table) return undefined;
    return db.prepare<[], PlexAutoscanQueueRow>(`SELECT id, scan_path, scan_for, scan_section, scan_type FROM queueitemmodel ORDER BY id`).all();
  } catch (err) {
    throw new UserError(`cannot read plex_autoscan's queue ${file}: ${(err as Error).message}`);
  } finally {
    db.close();
  }
}

/** plex_autoscan's scan_for (scan.py: 'Manual', 'Sonarr', 'Radarr', 'Lidarr', 'Google Drive') as a scanrelay source. */
export function sourceOf(scanFor: string): Source {
  switch (scanFor) {
    case 'Manual':
    case 'Sonarr':
    case 'Radarr':
    case 'Lidarr':
      return scanFor;
    case 'Google Drive':
      return 'Drive';
    default:
      return 'API';
  }
}

export interface QueueImport {
  requests: ScanRequest[];
  /** Rows that cannot be queued, with the reason (a path that is not absolute, an ignore-list match). */
  skipped: Array<{ path: string; reason: string }>;
}

/**
 * Rows -> scan requests, checked and prioritised like any request, with a file or folder told apart as
 * for a manual scan. They are not mapped again: plex_autoscan stored them already mapped, and mapping
 * twice can change a path. plex_autoscan's section number is not kept: scanrelay asks Plex.
 */
export function requestsFromQueue(
  rows: readonly PlexAutoscanQueueRow[],
  config: Pick<Config, 'SERVER_PATH_MAPPINGS' | 'SERVER_FILE_EXIST_PATH_MAPPINGS' | 'SERVER_IGNORE_LIST' | 'SERVER_SCAN_PRIORITIES'>,
  probe?: FolderProbe,
): QueueImport {
  const out: QueueImport = { requests: [], skipped: [] };
  const unmapped = { ...config, SERVER_PATH_MAPPINGS: {} };
  const { requests, skipped } = resolveEach(
    rows.map((row) => ({ source: sourceOf(row.scan_for), event: row.scan_type || 'Manual', updateType: 'Modified' as const, path: { path: row.scan_path, kind: 'guess' as const } })),
    unmapped,
    probe,
  );
  out.requests.push(...requests);
  out.skipped.push(...skipped.map(({ path, reason }) => ({ path, reason })));
  return out;
}
