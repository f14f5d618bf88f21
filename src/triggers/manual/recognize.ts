import { invalidRequestPath } from '../../paths/validate.ts';
import { PayloadError, type Intent } from '../intent.ts';

/** `eventType=Test` from any client (plex_autoscan also accepts `EventType`). */
export function recognizeTest(body: Record<string, unknown>): Intent | undefined {
  if (body.eventType === 'Test' || body.EventType === 'Test') return { kind: 'test', source: 'Unknown' };
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
