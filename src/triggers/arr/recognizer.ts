import type { z } from 'zod';
import type { Source, UpdateType } from '../../core/scan.ts';
import { MAX_FOLDERS_PER_REQUEST, PayloadError, tooManyFolders, type Intent, type Recognizer, type ScanPath } from '../../intake/intent.ts';
import { fieldName } from './fields.ts';

/** What one event of a parsed payload scans, or why it scans nothing. */
export type Plan = { paths: ScanPath[]; updateType: UpdateType; event?: string } | { ignore: string };

export interface ManagerSpec<S extends z.ZodType> {
  source: Extract<Source, 'Sonarr' | 'Radarr' | 'Lidarr' | 'Readarr'>;
  /** Top-level keys that only this manager's payloads carry; any one of them marks the shape. */
  shapeKeys: readonly string[];
  /** The fields read by the scanning events; parsed only for those, so a Grab never fails on a field. */
  schema: S;
  /** The events that scan something, by eventType. Every other event is answered "ignored". */
  events: Readonly<Record<string, (payload: z.output<S>) => Plan>>;
  /**
   * Any other event whose payload carries one of these file fields is scanned with `plan`, as
   * plex_autoscan scanned series+episodeFile, movie+movieFile and artist+trackFiles whatever the
   * eventType (scan.py:398-463).
   */
  withFiles?: { fields: readonly string[]; plan: (payload: z.output<S>) => Plan };
  /** Title and ids kept with the queue item for history and logs (never required). */
  describe(payload: z.output<S>): { title?: string; ids?: Record<string, string | number | undefined> };
}

/** Event names are echoed in answers and logs: keep them short. */
export function shownEvent(event: string): string {
  return event.length > 64 ? `${event.slice(0, 64)}...` : event;
}

/**
 * A recognizer for one media manager, recognising its payloads by shape as plex_autoscan does: a
 * payload carrying one of the manager's keys (series, movie, ...) is that manager's, whatever else it
 * carries. From then on a wrong field is the sender's mistake (400 naming the field), not another shape.
 */
export function arrRecognizer<S extends z.ZodType>(spec: ManagerSpec<S>): Recognizer {
  const { source } = spec;
  return (body) => {
    if (!spec.shapeKeys.some((key) => Object.hasOwn(body, key))) return undefined;
    const eventType = body.eventType ?? body.EventType;
    if (typeof eventType !== 'string' || eventType.trim() === '') {
      throw new PayloadError(`${source} payload: eventType is missing or not a string (expected e.g. "Download", "Rename", "Test")`, source);
    }
    if (eventType === 'Test') return { kind: 'test', source };
    const carriesFiles = spec.withFiles?.fields.some((key) => body[key] !== undefined && body[key] !== null);
    const plan = Object.hasOwn(spec.events, eventType) ? spec.events[eventType] : carriesFiles ? spec.withFiles?.plan : undefined;
    if (!plan) return { kind: 'ignore', source, event: shownEvent(eventType), reason: `${source} event ${shownEvent(eventType)} has nothing to scan` };

    const problem = `${source} ${eventType} payload`;
    const folders = foldersInFileLists(body);
    if (folders > MAX_FOLDERS_PER_REQUEST) throw new PayloadError(`${problem}: ${tooManyFolders()}`, source);
    const parsed = spec.schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new PayloadError(`${problem}: field ${fieldName(issue.path)}: ${issue.message}`, source);
    }
    let outcome: Plan;
    try {
      outcome = plan(parsed.data);
    } catch (err) {
      if (err instanceof PayloadError) throw new PayloadError(`${problem}: ${err.message}`, source);
      throw err;
    }
    if ('ignore' in outcome) return { kind: 'ignore', source, event: eventType, reason: outcome.ignore };
    const { title, ids } = spec.describe(parsed.data);
    const kept = Object.fromEntries(Object.entries(ids ?? {}).filter((e): e is [string, string | number] => e[1] !== undefined));
    const intent: Intent = {
      kind: 'scan',
      source,
      event: outcome.event ?? eventType,
      updateType: outcome.updateType,
      paths: outcome.paths,
    };
    if (title) intent.title = title;
    if (Object.keys(kept).length) intent.ids = kept;
    return intent;
  };
}

/**
 * Distinct folders of the `path`s in the payload's top-level file lists (episodeFiles, movieFiles, ...),
 * counted on the raw body before the schema walks every entry: a payload listing 25,000 files in
 * thousands of folders is refused without per-file work. Stops counting past the cap.
 */
function foldersInFileLists(body: Record<string, unknown>): number {
  const folders = new Set<string>();
  for (const value of Object.values(body)) {
    if (!Array.isArray(value) || value.length === 0) continue;
    for (const entry of value) {
      const path = entry && typeof entry === 'object' ? (entry as { path?: unknown }).path : undefined;
      if (typeof path !== 'string') continue;
      folders.add(path.slice(0, Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'))));
      if (folders.size > MAX_FOLDERS_PER_REQUEST) return folders.size;
    }
  }
  return folders.size;
}
