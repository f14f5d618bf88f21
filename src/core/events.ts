import { z } from 'zod';

/**
 * What the relay tells people about (NOTIFICATIONS, the dashboard's event stream). Written to the queue's
 * outbox with the state change that caused it, read by the notification sender and the dashboard.
 * - scanned: a target confirmed the scan ended (Plex: its completion watch ended; the others: their answer);
 * - failed: a delivery gave up, with the reason;
 * - waiting / recovered: deliveries are held (mount guard, a target unreachable for a while, a full disk), and when that ends;
 * - removed: a removal scan (library root, items that are gone) ended.
 */
export const notifyEventKindSchema = z.enum(['scanned', 'failed', 'waiting', 'recovered', 'removed']);
export type NotifyEventKind = z.infer<typeof notifyEventKindSchema>;

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
});
export type NotifyEvent = z.infer<typeof notifyEventSchema>;
export type HoldKind = NonNullable<NotifyEvent['hold']>;

/** An event as the outbox holds it: with its place in the outbox (ids only grow). */
export type StoredEvent = NotifyEvent & { id: number };
