import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { TdarrTarget } from '../../config/target-kinds/tdarr.ts';
import type { DeliveryResult, ScanItem, Target } from '../../core/scan.ts';
import type { Logger } from '../../log.ts';
import { placeRewriter } from '../../paths/rewrite.ts';
import { ServiceClient } from '../http.ts';
import { serviceTarget } from '../service-target.ts';

/**
 * The body of `POST /api/v2/scan-files` (Tdarr's API docs: `data.scanConfig` with `dbID`, `mode`, `arrayOrPath`).
 * Only `scanFolderWatcher` is sent: `scanFindNew` and `scanFresh` take the library's own folder, and given a folder
 * inside it Tdarr takes that as the library's new path and loses its history (its author, HaveAGitGat/Tdarr #577:
 * "use the array functionality and specify which files you'd like to scan with the scanFolderWatcher mode").
 */
export interface TdarrScanConfig {
  dbID: string;
  mode: 'scanFolderWatcher';
  arrayOrPath: string[];
}

/**
 * What to ask Tdarr for one scan, always as a list of paths in `scanFolderWatcher` (autopulse's tdarr.rs:58-81
 * sends every event's path so): the files the request named when its list is whole; else `listed`, the folder's
 * files as the relay reads them from disk; else the files it did name (a cut list); else the folder itself, as
 * autopulse would send a folder path it was given.
 */
export function tdarrScanConfig(dbID: string, item: Pick<ScanItem, 'folder' | 'files' | 'moreFiles'>, listed: readonly string[] = []): TdarrScanConfig {
  if (item.files.length && !item.moreFiles) return { dbID, mode: 'scanFolderWatcher', arrayOrPath: item.files };
  if (listed.length) return { dbID, mode: 'scanFolderWatcher', arrayOrPath: [...listed] };
  return { dbID, mode: 'scanFolderWatcher', arrayOrPath: item.files.length ? item.files : [item.folder] };
}

/** The most files one folder scan sends: a scan's own file sample holds as many (queue/types.ts MAX_FILES_PER_SCAN). */
const MAX_LISTED = 1000;

/**
 * The files below `folder` on the relay's own disk, to any depth (Tdarr scans its libraries so), a folder's own
 * files before its subfolders', by name; at most `max`, and the walk stops there (a library root can hold a
 * hundred thousand). None when the relay cannot read it (Tdarr's disk is not mounted here, or the folder is gone).
 */
export async function filesBelow(folder: string, max = MAX_LISTED): Promise<string[]> {
  const out: string[] = [];
  const dirs = [folder];
  while (dirs.length && out.length < max) {
    const dir = dirs.shift()!;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    for (const e of entries) {
      if (e.isDirectory()) dirs.push(join(dir, e.name));
      else if (e.isFile() && out.length < max) out.push(join(dir, e.name));
    }
  }
  return out;
}

/**
 * Tdarr: asks the library `DB_ID` to scan the changed files (`POST /api/v2/scan-files`), so they join its
 * transcode and health-check queues without waiting for its folder watcher. With auth on, the API key goes
 * in `x-api-key`, as Tdarr's own plugins send it (HaveAGitGat/Tdarr_Plugins #873).
 */
export function createTdarrTarget(name: string, entry: TdarrTarget, log: Logger, list: (folder: string) => Promise<string[]> = filesBelow): Target {
  const client = new ServiceClient({
    product: 'Tdarr',
    url: entry.URL,
    request: entry.REQUEST,
    headers: entry.API_KEY ? { 'x-api-key': entry.API_KEY } : {},
    secrets: [entry.API_KEY],
  });
  const rewrite = placeRewriter(entry.REWRITE, entry.REWRITE_MODE);
  /** One scan's request: a folder without its whole file list is sent as its files on the relay's disk, named as
   * Tdarr names them; not for a deletion or a removal scan (a library root for items gone): what is left has not changed. */
  const configFor = async (item: ScanItem, queued: ScanItem): Promise<{ config: TdarrScanConfig; listed: boolean }> => {
    const whole = item.files.length > 0 && !item.moreFiles;
    const gone = item.updateType === 'Deleted' || item.removal;
    const listed = whole || gone ? [] : (await list(queued.folder)).map((f) => (rewrite ? rewrite(f) : f));
    return { config: tdarrScanConfig(entry.DB_ID, item, listed), listed: listed.length > 0 };
  };
  const detail = (item: ScanItem, { config, listed }: { config: TdarrScanConfig; listed: boolean }): string => {
    const paths = config.arrayOrPath;
    const what = paths.length === 1 && paths[0] === item.folder ? 'the folder (no file in it could be listed here)' : `${paths.length} file(s)${listed ? ' listed in the folder' : ''}`;
    return `scanFolderWatcher of ${what} in library ${entry.DB_ID}`;
  };
  const scan = async (paths: string[], scans: number[]): Promise<void> => {
    log.debug({ target: name, scans, paths }, 'asking Tdarr to scan');
    await client.call('POST', '/api/v2/scan-files', 'scan-files', { data: { scanConfig: { dbID: entry.DB_ID, mode: 'scanFolderWatcher', arrayOrPath: paths } } });
  };
  return serviceTarget(name, entry, {
    async send(item, queued) {
      const planned = await configFor(item, queued);
      await scan(planned.config.arrayOrPath, [item.id]);
      return { outcome: 'done', detail: detail(item, planned) };
    },
    /** A backlog shares one `scanFolderWatcher` request, its list every scan's paths (autopulse sends all its
     * events' paths in one, tdarr.rs:58-81). */
    async sendMany(items, queued) {
      const configs = await Promise.all(items.map((item, i) => configFor(item, queued[i]!)));
      await scan([...new Set(configs.flatMap((c) => c.config.arrayOrPath))], items.map((i) => i.id));
      return items.map((item, i): DeliveryResult => ({ outcome: 'done', detail: detail(item, configs[i]!) }));
    },
    probe: () => client.json('GET', '/api/v2/status', 'status', z.looseObject({})),
  });
}
