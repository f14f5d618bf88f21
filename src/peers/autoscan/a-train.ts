import type { ATrainConfig } from '../../config/schema.ts';
import { PayloadError, type ScanPath, type ScanIntent } from '../../intake/intent.ts';
import { placeRewriter, type PathRewriter } from '../../paths/rewrite.ts';

/*
 * autoscan's A-Train trigger (triggers/a_train/a_train.go): POST /triggers/a-train/{drive} with
 * {"created": [folders], "deleted": [folders]}. Each folder is scanned as it is, after the drive's rules
 * then the trigger's global ones (first match wins: a_train.go:30-52 builds one rewriter from
 * append(drive.Rewrite, c.Rewrite...)); a drive not listed gets the global rules only.
 */

export type ATrainRewriter = (drive: string, path: string) => string;

/** Compiled once at start: one rewriter per listed drive, and the global one. */
export function aTrainRewriter(config: ATrainConfig): ATrainRewriter {
  const perDrive = new Map<string, PathRewriter | undefined>();
  for (const d of config.DRIVES) perDrive.set(d.ID, placeRewriter([...d.REWRITE, ...config.REWRITE]));
  const global = placeRewriter(config.REWRITE);
  return (drive, path) => {
    const rewrite = perDrive.has(drive) ? perDrive.get(drive) : global;
    return rewrite ? rewrite(path) : path;
  };
}

/**
 * The body's `created` and `deleted` lists. Go's JSON decoder matches field names without regard to case
 * (a_train.go:71-74 has no tags), so "Created" and "CREATED" count; other keys are ignored, and JSON null
 * is an empty event, as in Go. A list of anything but strings is a 400, as Go's decode error is.
 */
export function aTrainLists(body: unknown): { created: string[]; deleted: string[] } {
  const out = { created: [] as string[], deleted: [] as string[] };
  if (body === null || body === undefined) return out;
  if (typeof body !== 'object' || Array.isArray(body)) throw new PayloadError('an A-Train event is a JSON object: {"created": [folders], "deleted": [folders]}');
  for (const [key, value] of Object.entries(body)) {
    const field = key.toLowerCase() === 'created' ? 'created' : key.toLowerCase() === 'deleted' ? 'deleted' : undefined;
    if (!field || value === null) continue;
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      throw new PayloadError(`A-Train "${key}" must be a list of folder paths (strings)`);
    }
    out[field] = value;
  }
  return out;
}

/** One A-Train event as a scan intent, with the trigger's priority. */
export function recognizeATrain(body: unknown, drive: string, rewrite: ATrainRewriter, priority: number): ScanIntent | undefined {
  const { created, deleted } = aTrainLists(body);
  const folder = (path: string): ScanPath => ({ path: rewrite(drive, path), kind: 'folder' });
  const paths = [...created.map(folder), ...deleted.map(folder)];
  if (paths.length === 0) return undefined;
  // Created and deleted folders of one event share one request each way; the queue merges a folder named in
  // both (Created + Deleted = Modified), as autoscan's upsert does (processor/datastore.go:35-41).
  return {
    kind: 'scan',
    source: 'A-Train',
    event: deleted.length && !created.length ? 'Deleted' : 'Created',
    updateType: deleted.length && !created.length ? 'Deleted' : created.length && !deleted.length ? 'Created' : 'Modified',
    paths,
    priority,
  };
}
