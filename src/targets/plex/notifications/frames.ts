import { z } from 'zod';

/*
 * Plex's notification messages, as docs/protocols.md ("Plex's notification stream") describes them, turned into
 * typed activity events. Only `activity` notifications matter here; other kinds (playing, timeline, status...)
 * are skipped. Anything in an activity notification that does not fit is refused with a reason for the log,
 * never guessed at: a wrong "ended" would send the next scan while Plex still scans.
 */

const id = z.union([z.string(), z.number()]).transform(String);

const activitySchema = z.looseObject({
  uuid: z.string().min(1),
  type: z.string().min(1),
  title: z.string().optional(),
  subtitle: z.string().optional(),
  progress: z.number().optional(),
  Context: z.looseObject({ librarySectionID: id.optional() }).optional(),
});

const notificationSchema = z.looseObject({
  event: z.enum(['started', 'updated', 'ended']),
  uuid: z.string().min(1),
  Activity: activitySchema,
});

/** Websocket: every message is one container; `ActivityNotification` is an array. */
const websocketFrameSchema = z.looseObject({
  NotificationContainer: z.looseObject({
    type: z.string(),
    ActivityNotification: z.unknown().optional(),
  }),
});

/** Server-Sent Events: an `activity` event's data holds one notification, an object. */
const sseActivitySchema = z.looseObject({ ActivityNotification: z.unknown() });

export interface ActivityEvent {
  event: 'started' | 'updated' | 'ended';
  uuid: string;
  /** Plex's activity type; a library scan is `library.update.section`. */
  type: string;
  sectionId?: string;
  title?: string;
  progress?: number;
}

export interface ParsedFrame {
  events: ActivityEvent[];
  /** Why parts of the message were not understood (one log line each). */
  refused: string[];
}

function toEvent(raw: unknown): ActivityEvent | string {
  const n = notificationSchema.safeParse(raw);
  if (!n.success) return `activity notification not understood (${n.error.issues.map((i) => `${i.path.join('.') || 'notification'}: ${i.message}`).join('; ')})`;
  const a = n.data.Activity;
  return { event: n.data.event, uuid: a.uuid, type: a.type, sectionId: a.Context?.librarySectionID, title: a.title, progress: a.progress };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const shorten = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}...` : text);

/** One websocket message (`{"NotificationContainer": {...}}`). */
export function parseWebsocketFrame(text: string): ParsedFrame {
  const frame = websocketFrameSchema.safeParse(parseJson(text));
  if (!frame.success) return { events: [], refused: [`websocket message is not a NotificationContainer: ${shorten(text)}`] };
  const container = frame.data.NotificationContainer;
  if (container.type !== 'activity') return { events: [], refused: [] };
  const list = container.ActivityNotification;
  if (!Array.isArray(list)) return { events: [], refused: ['activity container without an ActivityNotification array'] };
  const out: ParsedFrame = { events: [], refused: [] };
  for (const raw of list) {
    const e = toEvent(raw);
    if (typeof e === 'string') out.refused.push(e);
    else out.events.push(e);
  }
  return out;
}

/** One Server-Sent Event: its `event:` name and its `data:` text. */
export function parseSseEvent(name: string, data: string): ParsedFrame {
  if (name !== 'activity') return { events: [], refused: [] };
  const body = sseActivitySchema.safeParse(parseJson(data));
  if (!body.success) return { events: [], refused: [`activity event data is not {"ActivityNotification": {...}}: ${shorten(data)}`] };
  const raw = body.data.ActivityNotification;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { events: [], refused: ['activity event data: ActivityNotification is not one object'] };
  const e = toEvent(raw);
  return typeof e === 'string' ? { events: [], refused: [e] } : { events: [e], refused: [] };
}
