import type { Logger } from '../../core/logger.ts';
import { isFolder, type CachedItem, type ItemStore } from './cache.ts';
import { filterPaths, type AllowedConfig } from './filters.ts';
import type { Decoded } from '../../google/rclone-crypt.ts';
import type { DriveChange, DriveFile } from '../../google/drive-types.ts';

/**
 * plex_autoscan's change rules (google/drive.py `_process_changes`), as pure-ish logic over an item
 * store and a metadata fetcher: every change updates the cache; files that are new, whose md5
 * changed, that were renamed (same md5, new name) or moved (same md5, a path not cached before) are
 * scanned at their new paths; trashed/removed items leave the cache; folders are never scanned.
 */
export type ScanReason = 'new' | 'modified' | 'renamed' | 'moved';

export type Verdict = ScanReason | 'unchanged' | 'no-md5';

/** Compares a changed file with what the cache held before the change. */
export function classify(before: CachedItem | undefined, file: Pick<DriveFile, 'name' | 'md5Checksum'>, paths: readonly string[]): Verdict {
  if (!before) return 'new';
  // plex_autoscan logs "No md5Checksum for cache item" and scans nothing when either side lacks one.
  if (!file.md5Checksum || !before.md5) return 'no-md5';
  if (file.md5Checksum !== before.md5) return 'modified';
  if (file.name !== before.name) return 'renamed';
  if (paths.some((p) => !before.paths.includes(p))) return 'moved';
  return 'unchanged';
}

export interface ChangeContext {
  items: ItemStore;
  /** files.get (or drives.get for a shared drive's root); undefined when the item cannot be read. */
  fetchItem(id: string, driveId: string | undefined): Promise<CachedItem | undefined>;
  allowed: AllowedConfig;
  scanRemoved: boolean;
  log: Logger;
  showCacheLogs: boolean;
  /**
   * RCLONE.CRYPT_MAPPINGS: the clear form of drive paths (paths outside every crypt folder come back
   * as they are). Called once per page with every path the filters will see.
   */
  decode?: (paths: readonly string[]) => Promise<Map<string, Decoded>>;
}

export interface ChangeResult {
  scans: Array<{ fileId: string; path: string; reason: ScanReason }>;
  /** Former paths of removed/trashed files (only with SCAN_REMOVED). */
  removals: Array<{ fileId: string; path: string }>;
  counts: { added: number; removed: number; unwanted: number; ignored: number; renamed: number; moved: number; folders: number; undecoded: number };
}

const MAX_DEPTH = 64;

/** Every full path of an item, walking parents through the store and fetching unknown ones once. */
export async function pathsOf(id: string, ctx: ChangeContext, driveId: string | undefined, memo = new Map<string, string[]>(), depth = 0): Promise<string[]> {
  const hit = memo.get(id);
  if (hit) return hit;
  if (depth > MAX_DEPTH) return [];
  let item = await ctx.items.get(id);
  if (!item) {
    item = await ctx.fetchItem(id, driveId);
    if (!item) return [];
    await ctx.items.put(item);
  }
  let paths: string[];
  if (!item.parents.length) paths = [item.name];
  else {
    paths = [];
    for (const parent of item.parents) {
      for (const p of await pathsOf(parent, ctx, driveId, memo, depth + 1)) paths.push(`${p}/${item.name}`);
    }
  }
  memo.set(id, paths);
  return paths;
}

/** A change after its cache update, waiting for its paths to be decoded, filtered and classified. */
type Walked =
  | { kind: 'file'; fileId: string; file: DriveFile; before: CachedItem | undefined; paths: string[] }
  | { kind: 'removed'; fileId: string; before: CachedItem };

export async function processChanges(changes: readonly DriveChange[], ctx: ChangeContext): Promise<ChangeResult> {
  const result: ChangeResult = {
    scans: [],
    removals: [],
    counts: { added: 0, removed: 0, unwanted: 0, ignored: 0, renamed: 0, moved: 0, folders: 0, undecoded: 0 },
  };
  const { counts } = result;
  // First the cache walk, in change order (a change's paths depend on the ones before it)...
  const walked: Walked[] = [];
  for (const change of changes) {
    if (change.changeType === 'drive' || (!change.fileId && !change.file)) continue;
    const fileId = change.fileId ?? change.file!.id;
    const file = change.file;

    if (change.removed || !file || file.trashed) {
      const before = await ctx.items.get(fileId);
      if ((await ctx.items.remove(fileId)) && ctx.showCacheLogs) ctx.log.info({ fileId, name: before?.name }, `removed '${fileId}' from the drive cache: ${before?.name}`);
      counts.removed++;
      if (ctx.scanRemoved && before && !isFolder(before.mimeType)) walked.push({ kind: 'removed', fileId, before });
      continue;
    }

    const before = await ctx.items.get(fileId);
    if (!before && ctx.showCacheLogs) ctx.log.info({ fileId, name: file.name }, `added '${fileId}' to the drive cache: ${file.name}`);
    const base = { id: fileId, name: file.name, parents: file.parents ?? [], md5: file.md5Checksum ?? null, mimeType: file.mimeType ?? null };
    await ctx.items.put({ ...base, paths: before?.paths ?? [] });
    const paths = await pathsOf(fileId, ctx, file.driveId);
    if (paths.length) await ctx.items.put({ ...base, paths });

    if (isFolder(file.mimeType)) {
      counts.folders++;
      // Paths below a renamed or moved folder follow it, so later changes compare with the right paths.
      if (before && (before.name !== file.name || !sameList(before.parents, base.parents))) await refreshDescendants(fileId, ctx, file.driveId);
      continue;
    }
    walked.push({ kind: 'file', fileId, file, before, paths });
  }

  // ...then one decode of every path of the page (google/drive.py:600-604 decodes before the filters)...
  const all = walked.flatMap((w) => (w.kind === 'file' ? w.paths : w.before.paths));
  const decoded = ctx.decode && all.length ? await ctx.decode(all) : undefined;
  /** Each drive path with the path the filters and the mappings see; undecodable ones are logged and dropped. */
  const clear = (fileId: string, paths: readonly string[]) =>
    paths.flatMap((drive) => {
      const d = decoded?.get(drive) ?? { path: drive };
      if ('path' in d) return [{ drive, shown: d.path }];
      counts.undecoded++;
      ctx.log.warn({ fileId, path: drive }, `not scanning ${drive}: ${d.failed}`);
      return [];
    });

  // ...then the filters and the change rules, which only read.
  for (const w of walked) {
    if (w.kind === 'removed') {
      const shown = clear(w.fileId, w.before.paths).map((p) => p.shown);
      for (const path of filterPaths(shown, w.before.mimeType ?? undefined, ctx.allowed).kept) result.removals.push({ fileId: w.fileId, path });
      continue;
    }
    const { fileId, file, before } = w;
    const pairs = clear(fileId, w.paths);
    const { kept, removed } = filterPaths(pairs.map((p) => p.shown), file.mimeType, ctx.allowed);
    counts.unwanted += removed.length;
    for (const r of removed) ctx.log.debug({ fileId, path: r.path, rule: r.reason }, `ignoring ${r.path}: not allowed by ${r.reason}`);
    if (!kept.length) continue;

    // The cache holds drive paths, so a move is judged on the drive form of the kept paths.
    const keptDrive = pairs.filter((p) => kept.includes(p.shown)).map((p) => p.drive);
    const verdict = classify(before, file, keptDrive);
    if (verdict === 'unchanged' || verdict === 'no-md5') {
      counts.ignored++;
      if (verdict === 'no-md5') ctx.log.warn({ fileId, name: file.name }, `no md5Checksum for ${file.name}: cannot tell whether it changed, not scanned`);
      else ctx.log.debug({ fileId, paths: kept }, 'ignoring: same md5Checksum, name and paths as cached');
      continue;
    }
    counts.added++;
    if (verdict === 'renamed') counts.renamed++;
    if (verdict === 'moved') counts.moved++;
    for (const path of kept) result.scans.push({ fileId, path, reason: verdict });
  }
  return result;
}

async function refreshDescendants(folderId: string, ctx: ChangeContext, driveId: string | undefined): Promise<void> {
  const memo = new Map<string, string[]>();
  const queue = [...(await ctx.items.children(folderId))];
  const seen = new Set<string>();
  // Bounded: each item is visited once.
  while (queue.length) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const item = await ctx.items.get(id);
    if (!item) continue;
    await ctx.items.put({ ...item, paths: await pathsOf(id, ctx, driveId, memo) });
    queue.push(...(await ctx.items.children(id)));
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
