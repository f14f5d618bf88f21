import type { ScanItem } from '../core/scan.ts';
import type { PathRewriter } from '../paths/rewrite.ts';

/**
 * A queued scan as one target names it: its folder and files through the target's own rewrite (autoscan's
 * targets/plex/plex.go:79 and targets/jellyfin/jellyfin.go:68, `t.rewrite(scan.Folder)`). The queue keeps
 * the relay's path; each target translates for itself.
 */
export function itemForTarget(item: ScanItem, rewrite: PathRewriter | undefined): ScanItem {
  if (!rewrite) return item;
  return { ...item, folder: rewrite(item.folder), files: item.files.map(rewrite) };
}
