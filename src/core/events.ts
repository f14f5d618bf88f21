import { z } from 'zod';

/**
 * What the relay tells people about (NOTIFICATIONS, the dashboard's event stream). Written to the queue's
 * outbox with the state change that caused it, read by the notification sender and the dashboard.
 * - scanned: a target confirmed the scan ended (Plex: its completion watch ended; the others: their answer);
 * - failed: a delivery gave up, with the reason;
 * - waiting / recovered: deliveries are held (mount guard, a target unreachable for a while, a full disk), and when that ends;
 * - removed: a removal scan (library root, items that are gone) ended;
 * - retrying: a target refused a scan or did not answer, and it is tried again (autopulse's `retrying`; not in a
 *   destination's default EVENTS).
 */
export const notifyEventKindSchema = z.enum(['scanned', 'failed', 'waiting', 'recovered', 'removed', 'retrying']);
export type NotifyEventKind = z.infer<typeof notifyEventKindSchema>;

/** A destination's EVENTS when it names none: every kind but the per-attempt `retrying`. */
export const DEFAULT_EVENT_KINDS: readonly NotifyEventKind[] = ['scanned', 'failed', 'waiting', 'recovered', 'removed'];

/** Files an event carries at most (the rest are counted in moreFiles): an outbox row stays small. */
export const EVENT_FILES = 20;

/** Items an event carries at most (the rest are counted in moreItems). */
export const EVENT_ITEMS = 20;

/**
 * One library item a scan added or updated, as the server names it (Plex: the section listing's `type`, `title`,
 * `year`, and for an episode `grandparentTitle`, `parentIndex`, `index`; for a track `grandparentTitle` and
 * `parentTitle`). A field the server does not say is absent.
 */
export const scannedItemSchema = z.object({
  /** The server's own id for it (Plex: ratingKey). */
  key: z.string().optional(),
  /** movie, episode, track ... */
  type: z.string(),
  title: z.string(),
  year: z.number().int().optional(),
  /** An episode's show. */
  show: z.string().optional(),
  season: z.number().int().optional(),
  episode: z.number().int().optional(),
  /** A track's artist and album. */
  artist: z.string().optional(),
  album: z.string().optional(),
});
export type ScannedItem = z.infer<typeof scannedItemSchema>;

export const notifyEventSchema = z.object({
  kind: notifyEventKindSchema,
  /** When it happened (ms since the epoch). */
  at: z.number(),
  /** The target's name (plex, jellyfin, emby). Absent: all of them (the mount guard). */
  target: z.string().optional(),
  scan: z.number().int().optional(),
  folder: z.string().optional(),
  files: z.array(z.string()).optional(),
  moreFiles: z.number().int().optional(),
  /** Where the request came from (Radarr, Sonarr, Manual, Drive ...): what TRIGGERS matches. */
  trigger: z.string().optional(),
  /** The trigger's own event name (Download, Upgrade, Rename ...). */
  event: z.string().optional(),
  title: z.string().optional(),
  /** When the first request for this scan arrived. */
  requestedAt: z.number().optional(),
  /** From the first request to the target's confirmation. */
  tookMs: z.number().optional(),
  /** What the target said it did (sections, completion, after-steps). */
  detail: z.string().optional(),
  /** `scanned` from Plex: the items at the scan's files (or in its folder) once the scan ended. */
  items: z.array(scannedItemSchema).optional(),
  /** Items beyond `items` that were not kept. */
  moreItems: z.number().int().optional(),
  /** Why a delivery failed, or why scans are held. */
  reason: z.string().optional(),
  /** Requests a removal scan stood for. */
  requests: z.number().int().optional(),
  /** What a hold (waiting, recovered) is: the mount guard, a target that does not answer, a full disk. */
  hold: z.enum(['mount-guard', 'unreachable', 'disk-full']).optional(),
  /** A full disk's hold (waiting, recovered): the folder checked, and the bytes free when it was told. */
  path: z.string().optional(),
  freeBytes: z.number().optional(),
  /**
   * On the event a delivery's end writes (scanned, removed, failed), stamped by the store in the same transaction:
   * the scan's other deliveries still open then, and its deliveries failed, this one included. `scanOpen` 0: this
   * delivery settled the scan, and exactly one event of a scan says so (autopulse's `processed` / `failed`).
   */
  scanOpen: z.number().int().optional(),
  scanFailed: z.number().int().optional(),
  /**
   * A target with after-steps (Plex's completion watch): `running` on the event written when its delivery ended,
   * which people are not sent (they are told once the steps end); `ended` on that later event, which tells the same
   * delivery again and so settles nothing.
   */
  afterSteps: z.enum(['running', 'ended']).optional(),
});
export type NotifyEvent = z.infer<typeof notifyEventSchema>;
export type HoldKind = NonNullable<NotifyEvent['hold']>;

/** An event as the outbox holds it: with its place in the outbox (ids only grow). */
export type StoredEvent = NotifyEvent & { id: number };
