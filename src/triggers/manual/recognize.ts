import { invalidRequestPath } from '../../paths/validate.ts';
import { PayloadError, UNKNOWN_SOURCE, type Intent } from '../../intake/intent.ts';

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
  return {
    kind: 'scan',
    source: 'Manual',
    event: 'Manual',
    updateType: 'Modified',
    paths: [{ path: body.filepath as string, kind: 'guess' }],
  };
}

/**
 * autoscan's manual trigger: one or more `dir` values (from the query string, as autoscan reads them, or
 * from its page's form). Each is scanned as the folder it names, as autoscan does.
 */
export function recognizeAutoscanManual(dirs: unknown): Extract<Intent, { kind: 'scan' }> {
  const list = dirs === undefined ? [] : Array.isArray(dirs) ? dirs : [dirs];
  if (list.length === 0) throw new PayloadError('no folder to scan: give one or more dir parameters, e.g. /triggers/manual?dir=%2Fmnt%2Fmedia%2FTV%2FDark');
  for (const dir of list) {
    const problem = invalidRequestPath(dir);
    if (problem) throw new PayloadError(problem.replace(/^filepath/, 'dir'));
  }
  return {
    kind: 'scan',
    source: 'Manual',
    event: 'Manual',
    updateType: 'Modified',
    paths: (list as string[]).map((path) => ({ path, kind: 'folder' as const })),
  };
}
