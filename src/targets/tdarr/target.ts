import { z } from 'zod';
import type { TdarrTarget } from '../../config/target-kinds/tdarr.ts';
import type { DeliveryResult, ScanItem, Target } from '../../core/scan.ts';
import type { Logger } from '../../log.ts';
import { placeRewriter } from '../../paths/rewrite.ts';
import { resultFromError, ServiceClient } from '../http.ts';
import { itemForTarget } from '../rewrite.ts';

/** The body of `POST /api/v2/scan-files` (Tdarr's API docs: `data.scanConfig` with `dbID`, `mode`, `arrayOrPath`). */
export interface TdarrScanConfig {
  dbID: string;
  mode: 'scanFolderWatcher' | 'scanFindNew';
  arrayOrPath: string[] | string;
}

/**
 * What to ask Tdarr for one scan. Tdarr's `scanFolderWatcher` takes a list of file paths (as autopulse's
 * tdarr.rs:58-81 sends them); `scanFindNew` takes one folder, adds its new files and drops the ones gone. So
 * named files that are there are scanned as files, and a folder alone (no file list, a cut one, or a
 * deletion) is scanned with `scanFindNew`.
 */
export function tdarrScanConfig(dbID: string, item: Pick<ScanItem, 'folder' | 'files' | 'moreFiles' | 'updateType'>): TdarrScanConfig {
  if (item.files.length && !item.moreFiles && item.updateType !== 'Deleted') return { dbID, mode: 'scanFolderWatcher', arrayOrPath: item.files };
  return { dbID, mode: 'scanFindNew', arrayOrPath: item.folder };
}

/**
 * Tdarr: asks the library `DB_ID` to scan the changed files (`POST /api/v2/scan-files`), so they join its
 * transcode and health-check queues without waiting for its folder watcher. With auth on, the API key goes
 * in `x-api-key`, as Tdarr's own plugins send it (HaveAGitGat/Tdarr_Plugins #873).
 */
export function createTdarrTarget(name: string, entry: TdarrTarget, log: Logger): Target {
  const client = new ServiceClient({
    product: 'Tdarr',
    url: entry.URL,
    request: entry.REQUEST,
    headers: entry.API_KEY ? { 'x-api-key': entry.API_KEY } : {},
    secrets: [entry.API_KEY],
  });
  const rewrite = placeRewriter(entry.REWRITE, entry.REWRITE_MODE);
  return {
    name,
    ...(rewrite ? { toTargetPath: rewrite } : {}),
    async deliver(queued: ScanItem): Promise<DeliveryResult> {
      const item = itemForTarget(queued, rewrite);
      const scanConfig = tdarrScanConfig(entry.DB_ID, item);
      try {
        log.debug({ target: name, scan: item.id, mode: scanConfig.mode, paths: scanConfig.arrayOrPath }, 'asking Tdarr to scan');
        await client.call('POST', '/api/v2/scan-files', 'scan-files', { data: { scanConfig } });
        const count = Array.isArray(scanConfig.arrayOrPath) ? `${scanConfig.arrayOrPath.length} file(s)` : 'the folder';
        return { outcome: 'done', detail: `${scanConfig.mode} of ${count} in library ${entry.DB_ID}` };
      } catch (err) {
        return resultFromError(err);
      }
    },
    async available() {
      try {
        await client.json('GET', '/api/v2/status', 'status', z.looseObject({}));
        return { ok: true };
      } catch (err) {
        return { ok: false, error: (err as Error).message };
      }
    },
  };
}
