import { isUpgradeEvent, scanRequestSchema } from '../core/scan.ts';
import type { QueueBackend } from './backend.ts';
import type { QueueStore } from './store.ts';

/** Queue meta key recording, in the new queue, which file was moved in and when (JSON). */
export const MOVED_FROM_KEY = 'queue.moved_from';
/** Queue meta key recording, in the file, where its scans went and when (JSON): a second run has nothing to move. */
export const MOVED_TO_KEY = 'queue.moved_to';

export interface MoveResult {
  /** Open scans moved (pending and active), each queued again as one request for its folder. */
  scans: number;
  files: number;
  /** Meta keys carried over (drive page tokens, import markers). */
  meta: number;
  /** Nothing was moved: the file has no open scans, and its saved values went already (or it has none). */
  nothingLeft?: { to?: string; at?: string };
}

/**
 * Moves a SQLite queue's open scans and its meta keys into another store (PostgreSQL) in one commit there,
 * then removes them from the file, so that neither queue delivers them twice. Each scan arrives as one
 * request for its folder with its files, priority, source and titles, due at once; an active scan whose
 * delivery had reached some targets is sent to every target again (at least once, never lost).
 */
export async function moveQueue(from: QueueStore, to: QueueBackend, opts: { file: string; force?: boolean; now?: number }): Promise<MoveResult> {
  const now = opts.now ?? Date.now();
  // A second run on a file already emptied: its saved values (page tokens) are old now, and must not go again.
  const movedTo = from.meta.get(MOVED_TO_KEY);
  const saved = from.meta.entries().filter(([key]) => key !== MOVED_FROM_KEY && key !== MOVED_TO_KEY);
  if (from.countOpen() === 0 && (movedTo || saved.length === 0)) {
    return { scans: 0, files: 0, meta: 0, nothingLeft: movedTo ? (JSON.parse(movedTo) as { to?: string; at?: string }) : {} };
  }
  const before = await to.meta.get(MOVED_FROM_KEY);
  if (before && !opts.force) {
    const prior = JSON.parse(before) as { file?: string; at?: string };
    throw new Error(`a queue file (${prior.file ?? 'unknown'}) was moved into this queue on ${prior.at ?? 'an earlier run'}; run again with --force to move ${opts.file} as well`);
  }
  // A list shows a few files of each scan: read each one alone for its whole sample.
  const open = from.view.listOpen(Number.MAX_SAFE_INTEGER).map((e) => from.view.get(e.id) ?? e);
  const requests = open.map((e) =>
    scanRequestSchema.parse({
      folder: e.folder,
      // A scan that kept only a sample of its files goes as its folder, which stands for all of them.
      files: e.fileCount > e.files.length ? [] : e.files,
      source: e.source,
      // An upgrade merged in earlier still empties the trash after the scan (the flag rides on the event).
      event: e.upgrade && !isUpgradeEvent(e.event) ? 'Upgrade' : e.event,
      ...(e.title ? { title: e.title } : {}),
      ids: e.ids,
      updateType: e.updateType,
      priority: e.priority,
      // Where it was routed when queued goes with it.
      ...(e.targets ? { targets: e.targets } : {}),
      ...(e.action ? { action: e.action } : {}),
    }),
  );
  const meta: Record<string, string | null> = Object.fromEntries(saved);
  meta[MOVED_FROM_KEY] = JSON.stringify({ file: opts.file, at: new Date(now).toISOString(), scans: open.length });
  await to.enqueueMany(requests, { delayMs: 0, maxMs: 0 }, now, meta);
  for (const e of open) from.cancel(e.id);
  from.meta.set(MOVED_TO_KEY, JSON.stringify({ to: to.location, at: new Date(now).toISOString() }));
  return { scans: open.length, files: requests.reduce((n, r) => n + r.files.length, 0), meta: Object.keys(meta).length - 1 };
}
