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
  const rewrite = placeRewriter(entry.REWRITE);
  const scan = async (scanConfig: TdarrScanConfig, scans: number[]): Promise<DeliveryResult> => {
    try {
      log.debug({ target: name, scans, mode: scanConfig.mode, paths: scanConfig.arrayOrPath }, 'asking Tdarr to scan');
      await client.call('POST', '/api/v2/scan-files', 'scan-files', { data: { scanConfig } });
      return { outcome: 'done', detail: '' };
    } catch (err) {
      return resultFromError(err);
    }
  };
  const detail = (config: TdarrScanConfig) => `${config.mode} of ${Array.isArray(config.arrayOrPath) ? `${config.arrayOrPath.length} file(s)` : 'the folder'} in library ${entry.DB_ID}`;
  const withDetail = (result: DeliveryResult, config: TdarrScanConfig): DeliveryResult => (result.outcome === 'done' ? { outcome: 'done', detail: detail(config) } : result);
  return {
    name,
    ...(rewrite ? { toTargetPath: rewrite } : {}),
    async deliver(queued: ScanItem): Promise<DeliveryResult> {
      const item = itemForTarget(queued, rewrite);
      const config = tdarrScanConfig(entry.DB_ID, item);
      return withDetail(await scan(config, [item.id]), config);
    },
    /**
     * The scans of files share one `scanFolderWatcher` request, its list their files (autopulse sends all its
     * events' paths in one, tdarr.rs:58-81); a folder's `scanFindNew` takes one path, so each goes alone.
     */
    async deliverMany(queued: readonly ScanItem[]): Promise<DeliveryResult[]> {
      const configs = queued.map((q) => tdarrScanConfig(entry.DB_ID, itemForTarget(q, rewrite)));
      const files = configs.flatMap((c, i) => (c.mode === 'scanFolderWatcher' ? [i] : []));
      const results: DeliveryResult[] = new Array(queued.length);
      const together = files.length ? scan({ dbID: entry.DB_ID, mode: 'scanFolderWatcher', arrayOrPath: files.flatMap((i) => configs[i]!.arrayOrPath) }, files.map((i) => queued[i]!.id)) : undefined;
      await Promise.all([
        together?.then((r) => files.forEach((i) => (results[i] = withDetail(r, configs[i]!)))),
        ...configs.map(async (c, i) => {
          if (c.mode === 'scanFindNew') results[i] = withDetail(await scan(c, [queued[i]!.id]), c);
        }),
      ]);
      return results;
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
