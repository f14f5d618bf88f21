import { invalidRequestPath } from '../../paths/validate.ts';
import { PayloadError, UNKNOWN_SOURCE, type Intent, type ScanIntent } from '../../intake/intent.ts';
import { scanActionSchema, type ScanAction } from '../../core/scan.ts';

/**
 * A manual request's `action` (issue 39 item 5): `scan` (absent: the trigger's ACTION, else a scan), `refresh` or
 * `analyze` of exactly the item(s) at the path. Anything else is refused with the words it takes.
 */
export function manualAction(value: unknown): ScanAction | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = scanActionSchema.safeParse(Array.isArray(value) && value.length === 1 ? value[0] : value);
  if (!parsed.success) throw new PayloadError(`action must be one of ${scanActionSchema.options.join(', ')} (got ${JSON.stringify(value)})`);
  return parsed.data;
}

/** `eventType=Test` from any client (plex_autoscan also accepts `EventType`). */
export function recognizeTest(body: Record<string, unknown>): Intent | undefined {
  if (body.eventType === 'Test' || body.EventType === 'Test') return { kind: 'test', source: UNKNOWN_SOURCE };
  return undefined;
}

/** Manual requests: the web page's form, `curl -d eventType=Manual -d filepath=...`, or the same as JSON. */
export function recognizeManual(body: Record<string, unknown>): Intent | undefined {
  if (body.eventType !== 'Manual') return undefined;
  const problem = invalidRequestPath(body.filepath);
  if (problem) throw new PayloadError(problem);
  const action = manualAction(body.action);
  return {
    kind: 'scan',
    source: 'Manual',
    event: 'Manual',
    updateType: 'Modified',
    paths: [{ path: body.filepath as string, kind: 'guess' }],
    ...(action ? { action } : {}),
  };
}

/**
 * autoscan's manual trigger: one or more `dir` values (from the query string, as autoscan reads them, or
 * from its page's form). Each is scanned as the folder it names, as autoscan does.
 */
export function recognizeAutoscanManual(dirs: unknown, actionParam?: unknown): ScanIntent {
  const list = dirs === undefined ? [] : Array.isArray(dirs) ? dirs : [dirs];
  if (list.length === 0) throw new PayloadError('no folder to scan: give one or more dir parameters, e.g. /triggers/manual?dir=%2Fmnt%2Fmedia%2FTV%2FDark');
  for (const dir of list) {
    const problem = invalidRequestPath(dir);
    if (problem) throw new PayloadError(problem.replace(/^filepath/, 'dir'));
  }
  const action = manualAction(actionParam);
  return {
    kind: 'scan',
    source: 'Manual',
    event: 'Manual',
    updateType: 'Modified',
    // A refresh or analyze names a file (the item to act on): it is taken as a file when it looks like one.
    paths: (list as string[]).map((path) => ({ path, kind: action && action !== 'scan' ? ('guess' as const) : ('folder' as const) })),
    ...(action ? { action } : {}),
  };
}
