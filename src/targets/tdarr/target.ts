import type { Dirent } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { TdarrTarget } from './schema.ts';
import type { DeliveryResult, ScanItem, Target } from '../../core/scan.ts';
import type { Logger } from '../../core/logger.ts';
import { insideKnownLibrary } from '../../paths/library.ts';
import { placeRewriter } from '../../paths/rewrite.ts';
import { CachedList } from '../cached-list.ts';
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

/** Directory entries one listing reads at most, files and folders alike: a tree of empty folders costs no more. */
const MAX_ENTRIES_READ = 20 * MAX_LISTED;

/**
 * The files below `folder` on the relay's own disk, to any depth (Tdarr scans its libraries so), a folder's own
 * files before its subfolders'. Each folder is read as a stream (opendir), and the walk stops as soon as it has
 * `max` files, or has read MAX_ENTRIES_READ entries: a folder of 300,000 entries costs what its first ones do, not
 * an array of all of them. A folder read whole gives its files and subfolders by name; one cut short, the ones it
 * read first. Symlinks are not followed. None when the relay cannot read it (Tdarr's disk is not mounted here, or
 * the folder is gone).
 */
export async function filesBelow(folder: string, max = MAX_LISTED, openDir: (path: string) => Promise<AsyncIterable<Dirent>> = readDir): Promise<string[]> {
  const out: string[] = [];
  const dirs = [folder];
  let budget = Math.max(max, MAX_ENTRIES_READ);
  while (dirs.length && out.length < max && budget > 0) {
    const dir = dirs.shift()!;
    const files: string[] = [];
    const subdirs: string[] = [];
    try {
      // Breaking out of the loop closes the folder.
      for await (const e of await openDir(dir)) {
        budget--;
        if (e.isFile()) files.push(e.name);
        // Folders beyond what the walk could ever visit are not kept.
        else if (e.isDirectory() && dirs.length + subdirs.length < max) subdirs.push(e.name);
        if (out.length + files.length >= max || budget <= 0) break;
      }
    } catch {
      continue;
    }
    for (const name of files.sort(byName)) out.push(join(dir, name));
    for (const name of subdirs.sort(byName)) dirs.push(join(dir, name));
  }
  return out.slice(0, max);
}

const byName = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
const readDir = (path: string) => opendir(path, { bufferSize: 256 });

/** What Tdarr's `cruddb` answers for one library (LibrarySettingsJSONDB, getById): its settings, `folder` its source folder. */
const librarySettings = z.unknown().transform((doc) => {
  const folder = doc !== null && typeof doc === 'object' ? (doc as { folder?: unknown }).folder : undefined;
  return typeof folder === 'string' && folder !== '' ? [folder] : [];
});

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
  // The library's own folder, as Tdarr names it (its settings' `folder`): the only place the relay lists for it.
  const library = new CachedList(() =>
    client.json('POST', '/api/v2/cruddb', 'library settings', librarySettings, { data: { collection: 'LibrarySettingsJSONDB', mode: 'getById', docID: entry.DB_ID } }),
  );
  /** Why the relay may not list `folder` for Tdarr, or undefined when it may: it must lie inside the library's
   * folder (paths/library.ts), which Tdarr must tell. */
  const notListed = async (folder: string): Promise<string | undefined> => {
    try {
      const { found, items } = await library.find((roots) => insideKnownLibrary(folder, [{ roots, ...(rewrite ? { name: rewrite } : {}) }]) || undefined);
      if (found) return undefined;
      return items.length ? "not listed: it is not inside the library's folder as Tdarr tells it" : "not listed: Tdarr did not tell the library's folder";
    } catch (err) {
      log.debug({ target: name, err: (err as Error).message }, "Tdarr's library folder could not be read: the folder is sent as it is, not listed");
      return "not listed: Tdarr did not tell the library's folder";
    }
  };
  /** One scan's request: a folder without its whole file list is sent as its files on the relay's disk, named as
   * Tdarr names them, when it lies in the library's folder; not for a deletion or a removal scan (a library root
   * for items gone): what is left has not changed. */
  const configFor = async (item: ScanItem, queued: ScanItem): Promise<{ config: TdarrScanConfig; listed: boolean; refused?: string }> => {
    const whole = item.files.length > 0 && !item.moreFiles;
    const gone = item.updateType === 'Deleted' || item.removal;
    const wanted = !whole && !gone;
    const refused = wanted ? await notListed(queued.folder) : undefined;
    const listed = wanted && !refused ? (await list(queued.folder)).map((f) => (rewrite ? rewrite(f) : f)) : [];
    return { config: tdarrScanConfig(entry.DB_ID, item, listed), listed: listed.length > 0, ...(refused ? { refused } : {}) };
  };
  const detail = (item: ScanItem, { config, listed, refused }: { config: TdarrScanConfig; listed: boolean; refused?: string }): string => {
    const paths = config.arrayOrPath;
    const why = refused ?? 'no file in it could be listed here';
    const what = paths.length === 1 && paths[0] === item.folder ? `the folder (${why})` : `${paths.length} file(s)${listed ? ' listed in the folder' : ''}`;
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
    /** The library's folder, from its settings (Tdarr's API: POST /api/v2/cruddb, LibrarySettingsJSONDB getById). */
    libraryRoots: (fresh?: boolean) => library.get(fresh),
    probe: () => client.json('GET', '/api/v2/status', 'status', z.looseObject({})),
  });
}
