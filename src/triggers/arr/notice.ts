import type { Source } from '../../core/scan.ts';
import { UNKNOWN_SOURCE, type Recognizer } from '../../intake/intent.ts';

/**
 * Events that tell about something other than files on disk. Health and update notices carry no
 * series/movie/artist/author, so no manager recognizer claims them; they are answered "ignored".
 */
const NOTICE_EVENTS = new Set([
  'Grab',
  'Health',
  'HealthRestored',
  'ApplicationUpdate',
  'ManualInteractionRequired',
  'DownloadFailure',
  'ImportFailure',
  'SeriesAdd',
  'MovieAdded',
  'ArtistAdd',
  'AuthorAdded',
]);

const MANAGERS = ['Sonarr', 'Radarr', 'Lidarr', 'Readarr'] as const;

/** The manager named by instanceName (default "Sonarr", or e.g. "Sonarr 4K"), when it names one. */
function sourceOf(instanceName: unknown): Source | typeof UNKNOWN_SOURCE {
  if (typeof instanceName !== 'string') return UNKNOWN_SOURCE;
  const lower = instanceName.toLowerCase();
  return MANAGERS.find((m) => lower.includes(m.toLowerCase())) ?? UNKNOWN_SOURCE;
}

export const recognizeArrNotice: Recognizer = (body) => {
  const event = body.eventType;
  if (typeof event !== 'string' || !NOTICE_EVENTS.has(event)) return undefined;
  return { kind: 'ignore', source: sourceOf(body.instanceName), event, reason: `${event} events have nothing to scan` };
};
